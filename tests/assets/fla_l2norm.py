"""Target asset: flash-linear-attention's `l2norm` (fla-core 0.6.0). fla asks torch.cuda for the
device name and capability at import (fla/utils/hardware.py); in compile-only mode the import
works because those queries are answered for the emulated GPU. Skipped where fla is not installed."""

import torch
from fla.modules.l2norm import l2norm


class Net(torch.nn.Module):
    def forward(self, x):
        return l2norm(torch.sin(x)) * 2


def example_inputs():
    return (torch.randn(2, 8, 64),)
