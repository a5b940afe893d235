"""A target whose export_dynamic_shapes() raises: `tritoninspect export --dynamic` exits 4 (the user's
code failed), one line and the user's traceback.

For tests/test_export_e2e.py.
"""
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        return x * 2


def example_inputs():
    return (torch.randn(8),)


def export_dynamic_shapes():
    raise ValueError("no shapes today")
