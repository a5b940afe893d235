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


@triton.jit
def _mixed_kernel(x_ptr, y_ptr, out_ptr, n, big, B: tl.constexpr, scale=0.5):
    """What a newcomer's kernels did that the first stand-ins got wrong: a libdevice call on a
    broadcast pair (16 x 1 with 1 x 16), an int exponent (libdevice's powi: fp32, not fp64), an
    argument by its keyword name, a float parameter left at its default, a float too big for fp32."""
    offsets = tl.arange(0, B)
    x = tl.load(x_ptr + offsets)
    y = tl.load(y_ptr + offsets)
    angles = libdevice.atan2(x[:, None], y[None, :])
    powered = libdevice.pow(x, n)
    tl.static_assert(powered.dtype == tl.float32)
    squared = libdevice.pow(x, arg1=2.0)
    capped = tl.minimum(squared, big) * scale.to(tl.float32)
    tl.store(out_ptr + offsets[:, None] * B + offsets[None, :], angles + (powered + capped)[:, None])


def launch_mixed(x, y):
    out = torch.empty(16, 16)
    _mixed_kernel[(1,)](x, y, out, 3, 1e300, B=16)
    return out


def reference_mixed(x, y):
    return torch.atan2(x[:, None], y[None, :]) + (x**3 + x * x * 0.5)[:, None]


@triton.jit
def _uncovered_kernel(x_ptr, out_ptr, B: tl.constexpr):
    offsets = tl.arange(0, B)
    tl.store(out_ptr + offsets, libdevice.add_rd(tl.load(x_ptr + offsets), 1.0))


def launch_uncovered(x):
    out = torch.zeros_like(x)
    _uncovered_kernel[(1,)](x, out, B=x.numel())
    return out


@triton.jit
def _numbers_kernel(x_ptr, out_ptr, B: tl.constexpr):
    """libdevice without a float tensor: `abs` of integer offsets, `sqrt` of a constant."""
    offsets = tl.arange(0, B)
    shifted = libdevice.abs(offsets - B // 2)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) * libdevice.sqrt(2.0) + shifted.to(tl.float32))


def launch_numbers(x):
    out = torch.zeros_like(x)
    _numbers_kernel[(1,)](x, out, B=x.numel())
    return out


def reference_numbers(x):
    return x * 2.0 ** 0.5 + (torch.arange(x.numel()) - x.numel() // 2).abs().float()


@triton.jit
def _misspelt_kernel(x_ptr, out_ptr, B: tl.constexpr):
    offsets = tl.arange(0, B)
    tl.store(out_ptr + offsets, libdevice.rsqrtt(tl.load(x_ptr + offsets)))


def launch_misspelt(x):
    out = torch.zeros_like(x)
    _misspelt_kernel[(1,)](x, out, B=x.numel())
    return out
