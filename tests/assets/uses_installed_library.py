"""A model calling `tikernlib` from wherever it is installed: tests/test_origin_e2e.py puts a
copy of tests/assets/site-packages/tikernlib in a `pip install --target` directory on PYTHONPATH."""
import tikernlib
import torch


class Net(torch.nn.Module):
    def forward(self, x, factor):
        h = x.sin()
        return tikernlib.scaled(h, factor) + 1


def example_inputs():
    return torch.randn(64), torch.tensor(2.0)
