"""A model whose submodule, from an installed library (tests/assets/site-packages/tidispatchlib),
breaks the graph inside the library at its disabled dispatcher, called from the submodule's `forward`."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent / "site-packages"))
import tidispatchlib  # noqa: E402


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.halve = tidispatchlib.Halve()

    def forward(self, x):
        h = torch.sin(x)
        h = self.halve(h)
        return h * 2


def example_inputs():
    return (torch.randn(64),)
