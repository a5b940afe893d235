"""torchnorm's RMSNorm module (``torchnorm.RMSNorm``), forward and backward.

``RMSNorm.forward`` launches its Triton kernels only ``if _TRITON and x.is_cuda``; otherwise it
calls ``F.rms_norm``. On a GPU it goes through ``_RMSNormFunc`` (an ``autograd.Function`` with raw
``kernel[grid](...)`` launches).

What tritoninspect should report on a GPU: ``_rms_norm_fwd_kernel`` as ``hop`` (forward graph) and
``_rms_norm_bwd_kernel`` as ``hop`` (backward graph), both in ``torchnorm/_triton.py``; 0 graph
breaks, 1 compiled frame, backward compiled. In compile-only mode the tensors are CPU tensors:
``x.is_cuda`` (``torchnorm/rms_norm.py``, traced in ``forward``) answers False, no kernel launches,
and the report says why: a warning naming that probe, and the "no kernels" line naming it too.
"""
import torch

from torchnorm import RMSNorm


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = RMSNorm(64)

    def forward(self, x):
        return self.norm(torch.sin(x)) * 2


def example_inputs():
    return (torch.randn(4, 64, requires_grad=True),)
