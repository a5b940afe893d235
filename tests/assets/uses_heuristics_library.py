"""A model calling a library whose kernels are wrapped in bare `triton.heuristics`, after a
data-dependent break in the same call (tests/assets/site-packages/tiheurlib, cut-cross-entropy's pattern)."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent / "site-packages"))
import tiheurlib  # noqa: E402


class Net(torch.nn.Module):
    def forward(self, x):
        return tiheurlib.loss(x.sin())


def example_inputs():
    return (torch.randn(64),)
