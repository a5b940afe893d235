"""Liger-Kernel's cross entropy (``liger_kernel.ops.LigerCrossEntropyFunction``) after a linear head.

``cross_entropy_forward`` counts the non-ignored targets with ``target_mask.sum().item()`` and
checks the targets with two tensor ``assert``\\ s before it launches ``liger_cross_entropy_kernel``
(which also writes the gradient into the logits, in place); the backward launches
``element_mul_kernel`` when the incoming gradient is not exactly 1.0 (the ``* 2`` makes it 2.0).
The ``.item()`` and the asserts are graph breaks inside the ``autograd.Function``'s forward: Dynamo
gives up on the ``apply``, autograd runs it eagerly, and Dynamo then compiles the forward's own
frames as they run (under no_grad: inference graphs), resuming after each break.

What tritoninspect should report: ``liger_cross_entropy_kernel`` (``liger_kernel/ops/cross_entropy.py``)
as ``hop``, in the inference graph of the frame that resumes after the last assert;
``element_mul_kernel`` (``liger_kernel/ops/utils.py``) as ``eager`` (autograd runs the Function's
backward outside any compiled code); graph breaks, all at the
``loss = LigerCrossEntropyFunction.apply(...)`` line: "Unsupported Tensor.item() call with
capture_scalar_outputs=False" (liger's cross_entropy.py:389) and "Data-dependent branching" (its
asserts, lines 390 and 393), concerning no kernel; the linear head before it and the ``* 2`` after
it compiled. On a machine without a GPU, the frame resuming after the asserts also reaches Liger's
device probe (``infer_device_arch()`` -> ``infer_device()``, where ``torch.cuda.is_available()`` is
False) and breaks at its ``transformers`` import ("Import failure"): those breaks, and only those,
must be marked as following the probe (``device_probe``); a GPU run has none of them.
"""
import torch

from liger_kernel.ops import LigerCrossEntropyFunction

VOCAB = 128


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(32, VOCAB, bias=False)

    def forward(self, x, target):
        logits = self.head(x)
        loss = LigerCrossEntropyFunction.apply(logits, target, None)[0]
        return loss * 2


def example_inputs():
    g = torch.Generator().manual_seed(0)
    return (torch.randn(16, 32, requires_grad=True), torch.randint(0, VOCAB, (16,), generator=g))
