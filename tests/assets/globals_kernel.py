"""Target asset for tests/test_compile_only_launches.py: a kernel that reads a module-level
`tl.constexpr` global and calls a libdevice function imported by name, as Liger's kernels do
(`_CASTING_MODE_LLAMA: tl.constexpr = tl.constexpr(0)`, `from triton.language.extra.libdevice
import rsqrt`). Inductor appends both to the kernel's source in its output code, after the
kernel's own function; it does not rewrite the kernel (no epilogue fusion by default)."""

import torch
import triton
import triton.language as tl
from triton.language.extra.libdevice import rsqrt

_SCALE: tl.constexpr = tl.constexpr(2.0)


@triton.jit
def _rsqrt_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, rsqrt(x) * _SCALE, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        x = torch.exp(x)
        out = torch.empty_like(x)
        _rsqrt_scale_kernel[(4,)](x, out, x.numel(), BLOCK=16)
        return out * 3


def example_inputs():
    return (torch.randn(64),)
