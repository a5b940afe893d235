"""A flash-linear-attention-style MLP block for the GPU benchmark rows (scripts/gpu-bench): fla's RMSNorm
(fla.modules.RMSNorm, Triton kernels) -> fla's GatedMLP (SwiGLU on fla's fused swiglu kernels) -> residual,
twice; forward and backward (inputs and parameters require grad).

Needs fla-core==0.6.0 and einops (in .whl/, made by scripts/gpu-prepare; both in the `test` extra).
"""
import torch

from fla.modules import GatedMLP, RMSNorm

HIDDEN = 1024


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = RMSNorm(HIDDEN)
        self.mlp = GatedMLP(hidden_size=HIDDEN, hidden_ratio=4, hidden_act="swish", fuse_swiglu=True)

    def forward(self, x):
        return x + self.mlp(self.norm(x))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.Sequential(Block(), Block())

    def forward(self, x):
        return self.blocks(x)


def example_inputs():
    return (torch.randn(4, 256, HIDDEN, requires_grad=True),)
