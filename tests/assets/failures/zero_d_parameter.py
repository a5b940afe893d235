"""Target asset for tests/test_failure.py: a kernel loading a 0-d parameter through a pointer, as
Liger-Kernel's PolyNorm loads its bias. Compiled in compile-only mode, the parameter is a CPU 0-d
tensor, which Inductor passes as a number: the kernel's `tl.load` does not compile. On a GPU the
parameter is on cuda and is passed as a pointer."""

import torch
import triton
import triton.language as tl


@triton.jit
def _add_bias_kernel(x_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(out_ptr + o, tl.load(x_ptr + o, mask=m) + tl.load(b_ptr), mask=m)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.tensor(0.5))

    def forward(self, x):
        out = torch.empty_like(x)
        _add_bias_kernel[(triton.cdiv(x.numel(), 32),)](x, self.bias, out, x.numel(), BLOCK=32)
        return out


def example_inputs():
    return (torch.randn(100),)
