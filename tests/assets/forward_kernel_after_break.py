"""An autograd.Function whose forward breaks the graph and then launches a Triton kernel (Liger's
LigerSiLUMulFunction in compile-only mode: a device probe, then an import Dynamo cannot trace, then
`_swiglu_forward_kernel`). Dynamo runs the Function's `apply` eagerly, and compiles the forward's own code
after the break apart, with grad off: the forward kernel is a `hop` of an inference graph, while the autograd
engine runs the backward, whose kernel launches outside every graph. The report says both, and how they go
together."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


@triton.jit
def scale_bwd_kernel(grad_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(grad_ptr + offs, mask=mask) * factor, mask=mask)


class Triple(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        torch._dynamo.graph_break()  # FORWARD-BREAK
        out = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), 3.0, BLOCK=64)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous()
        out = torch.empty_like(grad)
        scale_bwd_kernel[(triton.cdiv(grad.numel(), 64),)](grad, out, grad.numel(), 3.0, BLOCK=64)
        return out


class Net(torch.nn.Module):
    def forward(self, x):
        return Triple.apply(x.sin()).cos()


def example_inputs():
    return (torch.randn(64, requires_grad=True),)
