"""A Liger-Kernel-style transformer MLP block for the GPU benchmark rows (scripts/gpu-bench):
RMSNorm (liger_kernel.transformers.LigerRMSNorm) -> SwiGLU MLP on Liger's fused SiLU-and-multiply
(liger_kernel.ops.LigerSiLUMulFunction) -> residual, twice; forward and backward (inputs and
parameters require grad). The same modules as tests/reallib/liger_rms_norm.py and liger_swiglu.py.

Needs liger-kernel==0.8.5 (in .whl/, made by scripts/gpu-prepare).
"""
import torch

from liger_kernel.ops import LigerSiLUMulFunction
from liger_kernel.transformers.rms_norm import LigerRMSNorm

HIDDEN, INTER = 1024, 2816


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = LigerRMSNorm(HIDDEN)
        self.gate_proj = torch.nn.Linear(HIDDEN, INTER, bias=False)
        self.up_proj = torch.nn.Linear(HIDDEN, INTER, bias=False)
        self.down_proj = torch.nn.Linear(INTER, HIDDEN, bias=False)

    def forward(self, x):
        h = self.norm(x)
        return x + self.down_proj(LigerSiLUMulFunction.apply(self.gate_proj(h), self.up_proj(h)))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.Sequential(Block(), Block())

    def forward(self, x):
        return self.blocks(x)


def example_inputs():
    return (torch.randn(4, 256, HIDDEN, requires_grad=True),)
