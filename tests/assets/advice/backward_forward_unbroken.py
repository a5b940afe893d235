"""tests/assets/backward_after_forward_break.py with the advice applied (the graph break in the forward
removed): Dynamo traces the Function, and its backward kernel is compiled with the forward's graph.

The model it came from: an autograd.Function whose forward breaks the graph (`torch._dynamo.graph_break()` stands for
what Liger's LigerSiLUMulFunction meets in compile-only mode: a device probe, then an import Dynamo
cannot trace): Dynamo runs the whole `apply` eagerly, and the autograd engine the backward, whose
Triton kernel launches outside every graph. The report ties that launch to the break in the forward."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


def scaled(x: torch.Tensor, factor: float) -> torch.Tensor:
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), factor, BLOCK=64)
    return out


class Triple(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        return scaled(grad.contiguous(), 3.0)


class Net(torch.nn.Module):
    def forward(self, x):
        return Triple.apply(x.sin()).cos()


def example_inputs():
    return (torch.randn(64, requires_grad=True),)
