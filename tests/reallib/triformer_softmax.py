"""triformer's softmax module (``triformer.TritonSoftmax(is_causal=False)``), forward and backward.

``SoftmaxFunction`` is an ``autograd.Function`` whose ``forward`` and ``backward`` are
*classmethods* taking ``(self, ctx, ...)``; each launches a raw ``kernel[grid](...)`` with the
Python bool ``is_causal`` and ``num_warps`` as arguments of the kernel (parameters named
``is_causal`` and ``num_warps: tl.constexpr``).

What tritoninspect should report: Dynamo cannot inline the classmethod ``apply`` ("failed to bind
arguments when attempting to inline"), so the model's line breaks the graph; the forward then
compiles on its own frame, where ``softmax_kernel_forward`` is a ``hop``, and the backward runs
eagerly, so ``softmax_kernel_backward`` is ``eager``; both defined in ``triformer/softmax.py``.
In compile-only mode the bool reaches Triton's interpreter as ``int1`` (a note, before Triton 3.8:
its interpreter rejected it and the capture failed), and the kernels compile for the target with
their ``num_warps`` parameter (no compile warning: the warm-up passed it twice).
"""
import torch

from triformer import TritonSoftmax


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.softmax = TritonSoftmax(is_causal=False)

    def forward(self, x):
        return self.softmax(torch.sin(x)) * 2


def example_inputs():
    return (torch.randn(4, 64, requires_grad=True),)
