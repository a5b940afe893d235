"""A triton_op without a registered backward after an nn.Linear (its parameters require grad).

torch.compile fails while AOTAutograd traces the joint graph: "Trying to backward through
tiasset_noautograd.double.default but no autograd formula was registered". The report should say
what to do (register_autograd, or --no-backward). Made for the newcomer pass (h20).
`OpaqueNet`: the same through an opaque custom_op, whose kernel no compile stage sees before it
launches: the failure comes first, so the report names the op instead.
"""
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@triton_op("tiasset_noautograd::double", mutates_args=())
def double(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    wrap_triton(double_kernel)[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@torch.library.custom_op("tiasset_noautograd_c::double", mutates_args=())
def double_opaque(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    double_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@double_opaque.register_fake
def _(x):
    return torch.empty_like(x)


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x):
        return double(self.lin(x)).sum(-1)

    @staticmethod
    def example_inputs():
        return (torch.randn(4, 16),)


class OpaqueNet(Net):
    def forward(self, x):
        return double_opaque(self.lin(x)).sum(-1)
