"""Target asset: `tl.arange` with a bound that is not a `tl.constexpr` (a plain int argument).
Triton cannot compile it; Triton's interpreter runs it without complaint."""

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, block):
    offs = tl.program_id(0) * block + tl.arange(0, block)  # ERROR-LINE
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        copy_kernel[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), 16)
        return out * 2


def example_inputs():
    return (torch.randn(64),)
