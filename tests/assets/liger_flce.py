"""Liger-Kernel's fused linear cross entropy (``LigerFusedLinearCrossEntropyLoss``, Liger-Kernel 0.8.5) with
ignored targets, under ``torch.no_grad()``: the case of linkedin/Liger-Kernel#1338 and pytorch issues
192219 / 192226 (eager 21.40, compiled 61.73 in that report; sizes as there).

``fused_linear_cross_entropy_forward`` computes the loss chunk by chunk: ``liger_cross_entropy_kernel``
writes ``loss_1d[start:end]`` (a slice of a zeros buffer) and returns early for rows at ``ignore_index``.
Its ``.item()`` on the count of valid targets is a graph break. Used by tests/gpu/test_gpu_hazards.py.
"""
import torch

from liger_kernel.transformers.fused_linear_cross_entropy import LigerFusedLinearCrossEntropyLoss

BT, H, V = 256, 32, 4096


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        generator = torch.Generator().manual_seed(1)
        self.weight = torch.nn.Parameter(torch.randn(V, H, generator=generator), requires_grad=False)
        self.loss = LigerFusedLinearCrossEntropyLoss(ignore_index=-100)

    def forward(self, x, target):
        with torch.no_grad():
            return self.loss(self.weight, x, target)


def example_inputs():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(BT, H, generator=generator)
    target = torch.randint(0, V, (BT,), generator=generator)
    target[torch.randperm(BT, generator=generator)[: BT // 4]] = -100
    return x, target
