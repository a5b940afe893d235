"""Target asset for tests/test_failure.py: a kernel calling libdevice through a module alias
(`ldv.tanh`). Inductor's copy of the kernel does not import module aliases, so on a GPU Triton's
compile of the copy fails with NameError; eager runs are fine."""

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice as ldv


@triton.jit
def _tanh_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(out_ptr + o, ldv.tanh(tl.load(x_ptr + o, mask=m, other=0.0)), mask=m)


def tanh(x):
    out = torch.empty_like(x)
    _tanh_kernel[(triton.cdiv(x.numel(), 32),)](x, out, x.numel(), BLOCK=32)
    return out


class Net(torch.nn.Module):
    def forward(self, x):
        return tanh(torch.sin(x)) * 2


def example_inputs():
    return (torch.randn(100),)
