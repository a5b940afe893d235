"""Target asset for tests/test_target.py: example_inputs on the model class, no module-level one."""

import torch
from torch import nn


class OneInput(nn.Module):
    def forward(self, x):
        return x * 2


class StaticInputs(OneInput):
    @staticmethod
    def example_inputs():
        return torch.ones(3)


class ClassInputs(nn.Module):
    size = 2

    def forward(self, x, y):
        return x + y

    @classmethod
    def example_inputs(cls):
        return [torch.ones(cls.size), torch.zeros(cls.size)]


class MethodInputs(OneInput):
    def __init__(self) -> None:
        super().__init__()
        self.fill = 7.0

    def example_inputs(self):
        return (torch.full((5,), self.fill),)


class ValueInputs(OneInput):
    example_inputs = (torch.ones(6, dtype=torch.int64),)


class ManyCalls(OneInput):
    @staticmethod
    def example_inputs():
        return [(torch.ones(64),), (torch.ones(96),)]


class ManyCallsOneWrong(OneInput):
    @staticmethod
    def example_inputs():
        return [(torch.ones(4),), (torch.ones(4), torch.ones(4))]


class GradInputs(OneInput):
    @staticmethod
    def example_inputs():
        # Not a leaf: the loader must hand back a leaf that still requires grad.
        return torch.ones(2, requires_grad=True) * 2


class Frozen(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)
        self.linear.requires_grad_(False)

    def forward(self, x):
        return self.linear(x)

    @staticmethod
    def example_inputs():
        return torch.ones(1, 2)


class Aliased(nn.Module):
    def forward(self, x, y, pair):
        return x + y + pair[0]

    @staticmethod
    def example_inputs():
        t = torch.ones(2)
        return t, t, [t, torch.zeros(2)]


class IntArg(nn.Module):
    def forward(self, x, n):
        return x * n

    @staticmethod
    def example_inputs():
        return torch.ones(64), 3


class VarArgs(nn.Module):
    def forward(self, *args):
        return sum(args)

    @staticmethod
    def example_inputs():
        return torch.ones(1), torch.ones(1), torch.ones(1)


class WrongArity(nn.Module):
    def forward(self, x, y):
        return x + y

    @staticmethod
    def example_inputs():
        return torch.ones(1), torch.ones(1), torch.ones(1)


class NoInputs(OneInput):
    pass


class BrokenInputs(OneInput):
    @staticmethod
    def example_inputs():
        raise RuntimeError("no data")


class DictInputs(OneInput):
    @staticmethod
    def example_inputs():
        return {"x": torch.ones(1)}


class SetInputs(OneInput):
    @staticmethod
    def example_inputs():
        return {torch.ones(1)}


class EmptyListInputs(OneInput):
    @staticmethod
    def example_inputs():
        return []
