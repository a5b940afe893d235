"""Liger-Kernel's LayerNorm module (``liger_kernel.transformers.LigerLayerNorm``), forward and backward.

``LigerLayerNorm.forward`` calls ``liger_kernel.functional.layer_norm``, which routes through
Liger's multi-implementation dispatcher, ``liger_kernel.backends.dispatch.dispatch``; the library
decorates that dispatcher with ``@torch.compiler.disable`` (liger_kernel/backends/dispatch.py:331 in
0.8.5). The selected ``nvidia-triton`` implementation calls ``LigerLayerNormFunction.apply``, whose
forward and backward launch raw kernels.

What tritoninspect should report: ``_layer_norm_forward_kernel`` and ``_layer_norm_backward_kernel``
(``liger_kernel/ops/layer_norm.py``) as ``eager`` only (no graph holds them: the library's own
``torch.compiler.disable`` keeps them out of every compiled graph, the backward too); 1 graph break at
the ``h = self.norm(h)`` call, "Skip calling `torch.compiler.disable()`d function", concerning
``_layer_norm_forward_kernel``; 2 compiled frames (before and after the call).
"""
import torch

from liger_kernel.transformers.layer_norm import LigerLayerNorm


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = LigerLayerNorm(64)

    def forward(self, x):
        h = torch.sin(x)
        h = self.norm(h)
        return h * 2


def example_inputs():
    return (torch.randn(2, 8, 64, requires_grad=True),)
