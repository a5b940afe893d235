"""samples/inline_asm.py with ``mutation_fallback``'s action applied: the asm (a register move, no side
effects) is declared pure. Mutation analysis then reads past it: no fallback, only ``out_ptr`` cloned
(and re-inplaced). Triton's interpreter cannot run inline assembly, so values are compared on a GPU only."""
import torch
import triton
import triton.language as tl


@triton.jit
def asm_copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(out_ptr + offs, y, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        y = torch.sin(x)
        out = torch.empty_like(y)
        asm_copy_kernel[(triton.cdiv(out.numel(), 16),)](y, out, out.numel(), BLOCK=16)
        return out * 2 + x


def example_inputs():
    return (torch.randn(64),)
