"""Target asset: a row softmax whose kernel takes the row stride as a plain int and reduces with
`tl.max` / `tl.sum` (@jit functions of triton.language, which Triton's interpreter calls as
nested functions). `--resources` compiled it once the interpreter had run it: with a cold Triton
cache that failed (the interpreter left triton.language patched); with a warm one it did not."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_softmax_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        block = triton.next_power_of_2(x.shape[1])
        row_softmax_kernel[(x.shape[0],)](x, out, x.stride(0), x.shape[1], BLOCK=block)
        return out * 2


def example_inputs():
    return (torch.randn(4, 48),)
