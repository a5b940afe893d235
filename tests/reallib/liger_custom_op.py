"""Liger-Kernel's GeGLU kernels hidden by the user inside opaque ``torch.library.custom_op``\\ s.

The same two ops as liger_triton_op.py, registered with ``torch.library.custom_op`` (plain
``kernel[grid](...)`` launches, fake implementations for tracing): ``reallib_liger_custom_op::geglu``
launches ``_geglu_tanh_forward_kernel``; its autograd formula calls
``reallib_liger_custom_op::geglu_backward``, which launches ``_geglu_tanh_backward_kernel``.

What tritoninspect should report: ``_geglu_tanh_forward_kernel`` as ``custom_op`` (op
``reallib_liger_custom_op::geglu``) and ``_geglu_tanh_backward_kernel`` as ``custom_op`` (op
``reallib_liger_custom_op::geglu_backward``), both in ``liger_kernel/ops/geglu.py``, seen only when
they launch; opaque ops ``reallib_liger_custom_op::geglu`` -> ``_geglu_tanh_forward_kernel`` and
``reallib_liger_custom_op::geglu_backward`` -> ``_geglu_tanh_backward_kernel``; 0 graph breaks,
1 compiled frame, backward compiled.
"""
import torch
import triton

from liger_kernel.ops.geglu import _geglu_tanh_backward_kernel, _geglu_tanh_forward_kernel


@torch.library.custom_op("reallib_liger_custom_op::geglu", mutates_args=())
def geglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    n_cols = a.shape[-1]
    c = torch.empty_like(a)
    _geglu_tanh_forward_kernel[(a.numel() // n_cols,)](
        a, b, c, c.stride(-2), n_cols=n_cols, BLOCK_SIZE=triton.next_power_of_2(n_cols)
    )
    return c


@geglu.register_fake
def _(a, b):
    return torch.empty_like(a)


@torch.library.custom_op("reallib_liger_custom_op::geglu_backward", mutates_args=())
def geglu_backward(a: torch.Tensor, b: torch.Tensor, dc: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    n_cols = a.shape[-1]
    da, db = a.clone(), b.clone()  # the kernel overwrites them with the gradients
    _geglu_tanh_backward_kernel[(a.numel() // n_cols,)](
        dc, da, db, dc.stride(-2), n_cols=n_cols, BLOCK_SIZE=triton.next_power_of_2(n_cols)
    )
    return da, db


@geglu_backward.register_fake
def _(a, b, dc):
    return torch.empty_like(a), torch.empty_like(b)


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
