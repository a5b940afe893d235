"""Target asset: a kernel that uses a name it never defined. Triton cannot compile it (a GPU run
fails at the launch); Triton's interpreter would run up to the name and fail there."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * undefined_scale, mask=mask)  # ERROR-LINE  # noqa: F821


class Net(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
        return out + 1


def example_inputs():
    return (torch.randn(64),)
