"""A model calling a kernel library that breaks the graph inside itself (tests/assets/site-packages/tikernlib)."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent / "site-packages"))
import tikernlib  # noqa: E402


class Net(torch.nn.Module):
    def forward(self, x, factor):
        h = x.sin()
        return tikernlib.scaled(h, factor) + 1


def example_inputs():
    return torch.randn(64), torch.tensor(2.0)
