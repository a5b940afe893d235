"""Liger-Kernel's RMSNorm module (``liger_kernel.transformers.LigerRMSNorm``), forward and backward.

``LigerRMSNorm.forward`` calls ``LigerRMSNormFunction.apply``, an ``autograd.Function`` whose
forward and backward launch raw ``kernel[grid](...)`` calls (with ``num_warps=`` at the call site).

What tritoninspect should report: ``_rms_norm_forward_kernel`` as ``hop`` (forward graph) and
``_rms_norm_backward_kernel`` as ``hop`` (backward graph; Liger launches it with a grid of
``sm_count`` programs: 1 on CPU tensors, the SM count on a GPU), both defined in
``liger_kernel/ops/rms_norm.py``; 0 graph breaks, 1 compiled frame, backward compiled.
"""
import torch

from liger_kernel.transformers.rms_norm import LigerRMSNorm


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = LigerRMSNorm(64)

    def forward(self, x):
        return self.norm(torch.sin(x)) * 2


def example_inputs():
    return (torch.randn(2, 8, 64, requires_grad=True),)
