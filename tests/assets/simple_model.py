"""Target asset for tests/test_target.py: a module-level example_inputs() and one attribute of each kind."""

import torch
from torch import nn
from torch.nn import Linear  # noqa: F401  (imported torch layers must not be listed as candidates)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, x, y):
        return x * self.scale + y


class Block(nn.Module):
    def forward(self, x, y):
        return x - y

    @staticmethod
    def example_inputs():
        # The class's own inputs win over the module-level example_inputs() below.
        return torch.ones(2), torch.zeros(2)


class NeedsArgs(nn.Module):
    def __init__(self, width: int, depth: int = 2) -> None:
        super().__init__()


class BadInit(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        raise ValueError("bad init")


class NotAModule:
    pass


def make_model():
    return Block()


def make_number():
    return 3


def make_broken():
    raise RuntimeError("factory failed")


def make_with_args(width):
    return Block()


model = Block()
not_a_model = 3


def example_inputs():
    return torch.arange(4.0), torch.ones(4)
