"""A SwiGLU MLP on Liger-Kernel's fused SiLU-and-multiply (``liger_kernel.ops.LigerSiLUMulFunction``).

The same shape as ``liger_kernel.transformers.LigerSwiGLUMLP`` (which needs a Hugging Face config):
``down(silu(gate(x)) * up(x))``, the activation fused in one Triton kernel. The
``autograd.Function``'s forward launches ``_swiglu_forward_kernel``; its backward launches
``_swiglu_backward_kernel``, which writes the two gradients into its ``a`` / ``b`` inputs in place.
Both take a float ``gate_multiplier`` that the kernel converts with ``.to(tl.float32)``.

``swiglu_forward`` asks ``_should_tile`` -> ``infer_device_arch()`` (liger_kernel/utils.py, an
``lru_cache`` Dynamo traces through) which device it runs on, inside the traced forward.

What tritoninspect should report: ``_swiglu_forward_kernel`` as ``hop`` (forward graph) and
``_swiglu_backward_kernel`` as ``hop`` (backward graph), both in ``liger_kernel/ops/swiglu.py``;
0 graph breaks, 1 compiled frame, backward compiled: what a GPU run shows, where
``torch.cuda.is_available()`` is True and ``infer_device`` returns before ``is_npu_available``.
On a machine without a GPU it answers False (compile-only mode keeps it honest): ``infer_device``
goes on to ``from transformers.utils import ...`` inside the traced forward, and each traced frame
breaks there ("Import failure"); Dynamo gives up on the ``autograd.Function``, so
``_swiglu_backward_kernel`` runs ``eager``. tritoninspect must then list the probe
(``liger_kernel/utils.py:47 in infer_device``) in a warning and mark exactly those breaks with it
(``device_probe``), and no other.
"""
import torch

from liger_kernel.ops import LigerSiLUMulFunction


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = torch.nn.Linear(32, 64, bias=False)
        self.up_proj = torch.nn.Linear(32, 64, bias=False)
        self.down_proj = torch.nn.Linear(64, 32, bias=False)

    def forward(self, x):
        return self.down_proj(LigerSiLUMulFunction.apply(self.gate_proj(x), self.up_proj(x)))


def example_inputs():
    return (torch.randn(2, 8, 32, requires_grad=True),)
