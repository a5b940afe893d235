"""triformer's RMSNorm module (``triformer.rms_norm.TritonRMSNorm``): a library that asks for CUDA tensors.

``FastRMSNorm.forward`` allocates its outputs with ``device="cuda:0"`` (not the input's device).
Not one of the tier's models (no ``[a-z]*.py`` name): compile-only mode cannot run it, by design.
Without a GPU the run fails while Dynamo traces the allocation, with the report's failure
(``NoCudaDevice``) and one error line naming ``triformer/rms_norm.py`` and its line ("compile-only
mode cannot create CUDA tensors"), exit 4; torch's C++ used to abort the process (SIGABRT, no
report). tests/test_reallib.py ``test_a_library_that_allocates_on_cuda_fails_with_one_line``.
"""
import torch

from triformer.rms_norm import TritonRMSNorm


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = TritonRMSNorm(64)

    def forward(self, x):
        return self.norm(torch.sin(x)) * 2


def example_inputs():
    return (torch.randn(4, 64, requires_grad=True),)
