"""Target asset for tests/test_cli.py: forward raises inside one of the user's own helpers."""

import torch
from torch import nn


def check_rows(x):
    if x.shape[0] != 3:
        raise ValueError(f"expected 3 rows, got {x.shape[0]}")  # RAISE-LINE
    return x


class Net(nn.Module):
    def forward(self, x):
        return check_rows(x) * 2  # CALL-LINE


def example_inputs():
    return torch.ones(4)
