"""A Triton kernel with non-pure inline assembly: torch's mutation analysis gives up.

What tritoninspect should report: ``asm_copy_kernel`` as a ``hop`` entry in a
single graph, with 0 graph breaks, and a mutation-analysis fallback: torch
cannot analyse ``tl.inline_asm_elementwise(..., is_pure=False)`` ("ttir analysis
hit an op we do not know how to analyze: tt.elementwise_inline_asm", at the
``tl.inline_asm_elementwise`` line), so it assumes every tensor argument is
written and clones both (``tensors_to_clone`` ``x_ptr``, ``out_ptr``) although the
kernel only stores to ``out_ptr``. The ``sin`` before and ``* 2 + x`` after give
it Inductor neighbours.

The assembly is PTX (NVIDIA GPUs only). Triton's interpreter cannot run inline
assembly, so in compile-only mode (no GPU) the launch is skipped with a
diagnostic and the output is not meaningful; graphs, clones and output code are.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def asm_copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=False, pack=1)
    tl.store(out_ptr + offs, y, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        y = torch.sin(x)
        out = torch.empty_like(y)
        asm_copy_kernel[(triton.cdiv(out.numel(), 16),)](y, out, out.numel(), BLOCK=16)
        return out * 2 + x


def example_inputs():
    return (torch.randn(64),)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
