"""A helper Dynamo does not trace (torch.compiler.disable) allocates on "cuda": run eagerly in
compile-only mode it fails with the same error line as a traced allocation, naming its line
(CUDA-ALLOC), after the graph before it was captured."""
import torch


@torch.compiler.disable
def scratch(x):
    return torch.zeros(x.shape, device="cuda")  # CUDA-ALLOC


class Net(torch.nn.Module):
    def forward(self, x):
        return scratch(torch.sin(x)) + 1


def example_inputs():
    return (torch.randn(16),)
