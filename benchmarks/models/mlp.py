"""A small kernel-free model for the overhead benchmark: torch.compile's own work only.

Two linear layers with a LayerNorm and a GELU; its parameters require grad, so the tool
(and the baseline) compile and run the forward and the backward.
"""
import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(64, 256)
        self.norm = torch.nn.LayerNorm(256)
        self.down = torch.nn.Linear(256, 64)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.norm(self.up(x))))


def example_inputs():
    return (torch.randn(8, 64),)
