"""Liger-Kernel's GeGLU kernels registered by the user as ``torch.library.triton_op``\\ s.

``reallib_liger_triton_op::geglu`` launches liger's ``_geglu_tanh_forward_kernel`` through
``wrap_triton``; its autograd formula (``register_autograd``) calls a second triton_op,
``reallib_liger_triton_op::geglu_backward``, which launches ``_geglu_tanh_backward_kernel`` (also
through ``wrap_triton``) on clones of the saved inputs (the kernel writes its gradients into them).

What tritoninspect should report: ``_geglu_tanh_forward_kernel`` as ``triton_op`` (op
``reallib_liger_triton_op::geglu``, forward graph) and ``_geglu_tanh_backward_kernel`` as ``triton_op``
(op ``reallib_liger_triton_op::geglu_backward``, backward graph), both in ``liger_kernel/ops/geglu.py``;
no opaque ops; 0 graph breaks, 1 compiled frame, backward compiled.
"""
import torch
import triton

from liger_kernel.ops.geglu import _geglu_tanh_backward_kernel, _geglu_tanh_forward_kernel
from torch.library import triton_op, wrap_triton


@triton_op("reallib_liger_triton_op::geglu", mutates_args=())
def geglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    n_cols = a.shape[-1]
    c = torch.empty_like(a)
    wrap_triton(_geglu_tanh_forward_kernel)[(a.numel() // n_cols,)](
        a, b, c, c.stride(-2), n_cols=n_cols, BLOCK_SIZE=triton.next_power_of_2(n_cols)
    )
    return c


@triton_op("reallib_liger_triton_op::geglu_backward", mutates_args=())
def geglu_backward(a: torch.Tensor, b: torch.Tensor, dc: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    n_cols = a.shape[-1]
    da, db = a.clone(), b.clone()  # the kernel overwrites them with the gradients
    wrap_triton(_geglu_tanh_backward_kernel)[(a.numel() // n_cols,)](
        dc, da, db, dc.stride(-2), n_cols=n_cols, BLOCK_SIZE=triton.next_power_of_2(n_cols)
    )
    return da, db


def _setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _backward(ctx, dc):
    a, b = ctx.saved_tensors
    return geglu_backward(a, b, dc.contiguous())


geglu.register_autograd(_backward, setup_context=_setup)


class Net(torch.nn.Module):
    def forward(self, x, y):
        return geglu(torch.sin(x), torch.cos(y)) * 2


def example_inputs():
    return torch.randn(8, 64, requires_grad=True), torch.randn(8, 64, requires_grad=True)
