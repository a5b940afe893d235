"""triformer's SwiGLU module (``triformer.swiglu.TritonSwiglu``), forward and backward.

``FastSwigluFunction`` (an ``autograd.Function`` with static methods) launches raw
``kernel[grid](...)`` calls whose kernels take ``num_warps: tl.constexpr`` as a parameter, passed
positionally.

What tritoninspect should report: ``swiglu_forward_optimized`` as ``hop`` (forward graph) and
``swiglu_backward_optimized`` as ``hop`` (backward graph), both in ``triformer/swiglu.py``; 0 graph
breaks, 1 compiled frame, backward compiled; in compile-only mode no compile warning (the launch
check used to pass ``num_warps`` twice: "warmup() got multiple values for keyword argument
'num_warps'") and no interpreter skip.
"""
import torch

from triformer.swiglu import TritonSwiglu


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.act = TritonSwiglu()

    def forward(self, e, g):
        return self.act(torch.sin(e), g) * 2


def example_inputs():
    return torch.randn(4, 64, requires_grad=True), torch.randn(4, 64, requires_grad=True)
