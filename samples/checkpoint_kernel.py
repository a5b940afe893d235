"""A kernel under activation checkpointing: recomputed in the backward.

``scale`` is a ``triton_op`` with a registered backward that calls it again. ``block`` (sin,
scale, cos) runs under ``torch.utils.checkpoint.checkpoint``, so its activations are not kept:
the backward graph recomputes the forward's ops, the kernel among them, before it computes the
gradients.

What tritoninspect should report: ``scale_kernel`` as a ``triton_op`` entry
(``tisample_checkpoint_kernel::scale``); in the forward graph once; in the backward graph twice,
once recomputing the forward's launch (placement ``recompute``) and once for the gradient; 3
run-time launches (forward 1, backward 2, one of them a recompute); 0 graph breaks.
"""
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * SCALE, mask=mask)


@triton_op("tisample_checkpoint_kernel::scale", mutates_args=())
def scale(x: torch.Tensor, s: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(scale_kernel)[(triton.cdiv(n, 16),)](x, out, n, SCALE=s, BLOCK=16)
    return out


def _backward(ctx, grad):
    return scale(grad, ctx.s), None


def _setup(ctx, inputs, output):
    ctx.s = inputs[1]


scale.register_autograd(_backward, setup_context=_setup)


def block(x):
    return scale(x.sin(), 2.0).cos()


class Net(torch.nn.Module):
    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)


def example_inputs():
    return (torch.randn(40, requires_grad=True),)


if __name__ == "__main__":
    torch.manual_seed(0)
    (x,) = example_inputs()
    Net()(x).sum().backward()
    print(f"checksum: {x.grad.sum().item():.6f}")
