"""moe-ops' fused top-k softmax router (``moe_ops.fused_topk_softmax``), forward and backward.

``fused_topk_softmax`` calls ``FusedTopkSoftmaxFunction.apply``, whose forward and backward call
the library's opaque ``torch.library.custom_op``\\ s ``tg::fused_topk_softmax_fwd`` and
``tg::fused_topk_softmax_bwd``; each launches an ``@triton.autotune`` kernel (5 configs) with a
grid callable on ``BLOCK_M``.

What tritoninspect should report: ``_fused_topk_softmax_fwd_kernel_2d`` as ``custom_op`` (op
``tg::fused_topk_softmax_fwd``, autotune key ``num_tokens, E``) and
``_fused_topk_softmax_bwd_kernel_2d`` as ``custom_op`` (op ``tg::fused_topk_softmax_bwd``,
autotune key ``num_tokens, K``), both in ``moe_ops/fused_topk_softmax_ops.py``, seen only when they
launch; opaque ops ``tg::fused_topk_softmax_fwd`` -> ``_fused_topk_softmax_fwd_kernel_2d`` and
``tg::fused_topk_softmax_bwd`` -> ``_fused_topk_softmax_bwd_kernel_2d``; 0 graph breaks,
1 compiled frame, backward compiled (the router's weights require grad).
"""
import torch

from moe_ops import fused_topk_softmax


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.router = torch.nn.Linear(32, 8)

    def forward(self, x):
        weights, indices = fused_topk_softmax(self.router(x), 2)
        return weights * 2, indices


def example_inputs():
    return (torch.randn(16, 32),)
