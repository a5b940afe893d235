"""Target asset for tests/test_failure.py: kernels whose Inductor copy lacks a global name their module
has, each failing on a GPU with NameError when Triton compiles the copy (H200, torch 2.11: `T`, `math`):
`T.arange` after `import triton.language as T` (the interpreter filled `T` with its TypeVar), `math.pi`
(the interpreter filled `math`), and `ld.tanh` in a @jit helper (the NameError one level deeper)."""

import math

import torch
import triton
import triton.language as T
import triton.language as tl
from triton.language.extra import libdevice as ld


@triton.jit
def _t_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + T.arange(0, BLOCK)
    tl.store(out_ptr + o, tl.load(x_ptr + o, mask=o < n), mask=o < n)


@triton.jit
def _pi_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + o, tl.load(x_ptr + o, mask=o < n) * math.pi, mask=o < n)


@triton.jit
def _act(x):
    return ld.tanh(x)


@triton.jit
def _helper_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + o, _act(tl.load(x_ptr + o, mask=o < n)), mask=o < n)


def _launch(kernel, x):
    out = torch.empty_like(x)
    kernel[(triton.cdiv(x.numel(), 32),)](x, out, x.numel(), BLOCK=32)
    return out


class TAlias(torch.nn.Module):
    def forward(self, x):
        return _launch(_t_kernel, torch.sin(x)) * 2


class MathPi(torch.nn.Module):
    def forward(self, x):
        return _launch(_pi_kernel, torch.sin(x)) * 2


class HelperAlias(torch.nn.Module):
    def forward(self, x):
        return _launch(_helper_kernel, torch.sin(x)) * 2


def example_inputs():
    return (torch.randn(100),)
