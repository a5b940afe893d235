"""Two different kernels in nested `torch.cond` branches: a raw launch and a triton_op.

The outer true branch holds another `torch.cond` (a raw `axpb_kernel` launch if its mean is positive, the
`tiasset_cond::neg` triton_op's `neg_kernel` if not); the outer false branch calls the triton_op too. Inductor
writes each branch as its own function of the output code; torch 2.14 writes them in another order than the
graph's (`false_graph_0` first). What tritoninspect should report, live and from a TORCH_TRACE of torch 2.13 or
2.14: `axpb_kernel` a `hop` in `true_graph_0.true_graph_0`, `neg_kernel` a `triton_op` in the two other branches.
"""
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def axpb_kernel(x_ptr, out_ptr, n, A: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * A + 1.0, mask=mask)


@triton.jit
def neg_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, -tl.load(x_ptr + offs, mask=mask), mask=mask)


def axpb(x, a):
    out = torch.empty_like(x)
    n = x.numel()
    axpb_kernel[(triton.cdiv(n, 32),)](x, out, n, A=a, BLOCK=32)
    return out


@triton_op("tiasset_cond::neg", mutates_args={})
def neg(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(neg_kernel)[(triton.cdiv(n, 32),)](x, out, n, BLOCK=32)
    return out


class Net(torch.nn.Module):
    def forward(self, x):
        y = x.cos()

        def outer_true(t):
            return torch.cond(t.mean() > 0, lambda u: axpb(u, 3.0), neg, (t,)) + 1

        return torch.cond(y.sum() > 0, outer_true, lambda t: neg(t) * 2, (y,)).sin()


def example_inputs():
    return (torch.randn(50),)
