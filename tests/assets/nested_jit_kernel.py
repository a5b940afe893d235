"""Target asset for tests/test_compile_only_launches.py: a kernel that calls nested @triton.jit
functions, its own helper and, through it, triton.language's `tl.cdiv` (a @jit function of
triton/language/standard.py, whose module sees `triton.language.core`), shaped like fla's
`unflatten_program_id` (tests/reallib/fla_mean_pooling.py).

`example_inputs()` makes two calls at two sizes: the second compiles again (0/1) after the first
ran the kernel in Triton's interpreter, and its mutation analysis compiles the kernel for real.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _program_block(n, BLOCK: tl.constexpr):
    # This program's block as an int64 (tl.core's cast, at compile time), and the number of blocks.
    return tl.program_id(0).to(tl.int64), tl.cdiv(n, BLOCK)


@triton.jit
def _double_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    block, blocks = _program_block(n, BLOCK)
    offsets = block * BLOCK + tl.arange(0, BLOCK)
    mask = (offsets < n) & (block < blocks)
    tl.store(o_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        x = torch.sin(x)
        out = torch.empty_like(x)
        n = x.numel()
        _double_kernel[(triton.cdiv(n, 16),)](x, out, n, BLOCK=16)
        return out + 1


def example_inputs():
    return [(torch.randn(64),), (torch.randn(96),)]
