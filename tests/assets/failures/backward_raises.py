"""Target asset: the forward compiles and runs; the backward of a custom autograd.Function raises."""

import torch
from torch import nn


class Fragile(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @torch.compiler.disable
    def backward(ctx, grad):
        raise ValueError("no gradient for you")  # RAISE-LINE


class Net(nn.Module):
    def forward(self, x):
        return Fragile.apply(torch.sin(x))


def example_inputs():
    return (torch.ones(8, requires_grad=True),)
