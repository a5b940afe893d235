"""Triton kernels reached through ``triton_op``s that the graph never calls by name.

``tisample_triton_op_autograd::mul`` launches ``mul_kernel`` (via ``wrap_triton``)
and then calls another triton_op, ``tisample_triton_op_autograd::scale``, which
launches ``scale_kernel`` (a nested triton_op). Its autograd formula
(``register_autograd``) calls a third triton_op,
``tisample_triton_op_autograd::mul_grads``, which launches ``mul_grads_kernel``.
The model computes ``tanh(2 * sin(x) * w)`` and its gradients.

What tritoninspect should report, with 0 graph breaks and the backward compiled
(the inputs require grad): all three kernels as ``triton_op`` entries, each under
the op whose ``wrap_triton`` launched it: ``mul_kernel`` under
``tisample_triton_op_autograd::mul``, ``scale_kernel`` under
``tisample_triton_op_autograd::scale`` (in the forward graph, though the graph
only calls ``mul``), and ``mul_grads_kernel`` under
``tisample_triton_op_autograd::mul_grads`` in the backward graph (though no graph
calls that op: AOTAutograd decomposes it while tracing the backward). None is a
plain ``hop``.
"""
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

BLOCK = 16


@triton.jit
def mul_kernel(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    w = tl.load(w_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * w, mask=mask)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


@triton.jit
def mul_grads_kernel(g_ptr, x_ptr, w_ptr, gx_ptr, gw_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(g_ptr + offs, mask=mask) * factor
    x = tl.load(x_ptr + offs, mask=mask)
    w = tl.load(w_ptr + offs, mask=mask)
    tl.store(gx_ptr + offs, g * w, mask=mask)
    tl.store(gw_ptr + offs, g * x, mask=mask)


def _grid(n):
    return (triton.cdiv(n, BLOCK),)


@triton_op("tisample_triton_op_autograd::scale", mutates_args={})
def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
    out = torch.empty_like(x)
    wrap_triton(scale_kernel)[_grid(x.numel())](x, out, x.numel(), factor, BLOCK=BLOCK)
    return out


@triton_op("tisample_triton_op_autograd::mul", mutates_args={})
def mul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """2 * x * w: its own kernel, then a nested triton_op."""
    out = torch.empty_like(x)
    wrap_triton(mul_kernel)[_grid(x.numel())](x, w, out, x.numel(), BLOCK=BLOCK)
    return scale(out, 2.0)


@triton_op("tisample_triton_op_autograd::mul_grads", mutates_args={})
def mul_grads(g: torch.Tensor, x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    gx, gw = torch.empty_like(x), torch.empty_like(w)
    wrap_triton(mul_grads_kernel)[_grid(x.numel())](g, x, w, gx, gw, x.numel(), 2.0, BLOCK=BLOCK)
    return gx, gw


def _setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _backward(ctx, grad):
    x, w = ctx.saved_tensors
    return mul_grads(grad, x, w)


mul.register_autograd(_backward, setup_context=_setup_context)


class Net(torch.nn.Module):
    def forward(self, x, w):
        return mul(torch.sin(x), w).tanh()


def example_inputs():
    return torch.randn(64, requires_grad=True), torch.randn(64, requires_grad=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    x, w = example_inputs()
    out = Net()(x, w)
    out.sum().backward()
    print(f"checksum: {out.sum().item():.6f} grad: {(x.grad.sum() + w.grad.sum()).item():.6f}")
