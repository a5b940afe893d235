"""Target asset: forward multiplies matrices whose shapes do not fit (Dynamo fails while tracing)."""

import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(5, 3))

    def forward(self, x):
        y = torch.sin(x)
        return y @ self.w  # MISMATCH-LINE


def example_inputs():
    return (torch.ones(2, 4),)
