"""A kernel writing a column-major output allocated as `torch.empty(...).as_strided(...)`, the way torchao 0.18's
blockwise fp8 triton_ops allocate their scales, and the same with `torch.empty_strided`. Written for
tests/test_hazards_e2e.py: functionalization writes the kernel's result back into the new tensor through the view
(as_strided_scatter), so re-inplacing keeps the clone of the view; the allocation with its strides has none."""

import torch
import triton
import triton.language as tl


@triton.jit
def triple_kernel(x_ptr, y_ptr, M, N, sxm, sxn, sym, syn, BM: tl.constexpr, BN: tl.constexpr):
    m = tl.arange(0, BM)[:, None]
    n = tl.arange(0, BN)[None, :]
    mask = (m < M) & (n < N)
    tl.store(y_ptr + m * sym + n * syn, tl.load(x_ptr + m * sxm + n * sxn, mask=mask) * 3, mask=mask)


def _launch(x, y):
    M, N = x.shape
    triple_kernel[(1,)](x, y, M, N, x.stride(0), x.stride(1), y.stride(0), y.stride(1), BM=16, BN=32)
    return y


class Net(torch.nn.Module):
    def forward(self, x):
        y = _launch(x.sin(), torch.empty(x.shape[1], x.shape[0]).as_strided(x.shape, (1, x.shape[0])))
        return y.cos()


class StridedNet(torch.nn.Module):
    """Net after the finding's action."""

    def forward(self, x):
        y = _launch(x.sin(), torch.empty_strided(x.shape, (1, x.shape[0])))
        return y.cos()


def example_inputs():
    return (torch.randn(16, 32),)
