"""Target asset for tests/test_compile_only_launches.py: a kernel Triton's interpreter could not run
before tritoninspect converted its arguments and libdevice calls (Liger-Kernel's RMSNorm and GEGLU do
all three): it casts a float argument (`eps = eps.to(tl.float32)`: the interpreter passed a Python
float), calls `rsqrt` imported by name from triton.language.extra.libdevice (a stub returning None
there) and `libdevice.tanh` / `libdevice.pow` through the module."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.libdevice import rsqrt


@triton.jit
def _norm_tanh_kernel(x_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
    eps = eps.to(tl.float32)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    rstd = rsqrt(tl.sum(x * x, axis=0) / n + eps)
    tl.store(out_ptr + offsets, libdevice.tanh(x * rstd) + libdevice.pow(x, 2.0), mask=mask)


def launch(x, eps=1e-6):
    out = torch.empty_like(x)
    _norm_tanh_kernel[(1,)](x, out, x.numel(), eps, BLOCK=triton.next_power_of_2(x.numel()))
    return out


def reference(x, eps=1e-6):
    return torch.tanh(x * torch.rsqrt((x * x).mean() + eps)) + x * x


class Net(torch.nn.Module):
    def forward(self, x):
        return launch(torch.exp(x)) * 3


def example_inputs():
    return (torch.randn(100),)
