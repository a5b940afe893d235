"""A ``torch.compiler.disable``\\ d helper around Liger-Kernel's GeGLU forward (``liger_kernel.ops.geglu``).

``gelu_mul`` is the user's own wrapper, marked ``torch.compiler.disable`` (the way a model keeps
Dynamo out of a launcher), calling liger's ``geglu_forward``, which launches
``_geglu_tanh_forward_kernel``. Forward only (no input requires grad).

What tritoninspect should report: ``_geglu_tanh_forward_kernel`` (``liger_kernel/ops/geglu.py``) as
``eager`` only; 1 graph break at the ``h = gelu_mul(a, b)`` call, "Skip calling
`torch.compiler.disable()`d function" (GB0098), concerning ``_geglu_tanh_forward_kernel`` (launched
eagerly from that line); 2 compiled frames (before and after the call).
"""
import torch

from liger_kernel.ops.geglu import geglu_forward


@torch.compiler.disable
def gelu_mul(a, b):
    return geglu_forward(a, b)[2]


class Net(torch.nn.Module):
    def forward(self, x, y):
        a, b = torch.sin(x), torch.cos(y)
        h = gelu_mul(a, b)
        return h * 2


def example_inputs():
    return torch.randn(8, 64), torch.randn(8, 64)
