"""Target asset inside a package: only importable as pkg.sub.model (relative import)."""

import torch
from torch import nn

from .layers import Scale


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = Scale()

    def forward(self, x):
        return self.scale(x)


def example_inputs():
    return torch.ones(4)
