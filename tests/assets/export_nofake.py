"""A custom_op launching a Triton kernel, with no fake (meta) implementation: export cannot trace it.

Produced for tests/test_export.py: `tritoninspect export` should fail at stage export with the
`custom_op_without_fake` finding naming add_kernel and the op.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@torch.library.custom_op("tiasset_nofake::add", mutates_args=())
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 16),)](x, y, out, n, BLOCK=16)
    return out


class Net(torch.nn.Module):
    def forward(self, x, w):
        return add(x, w) * 2


def example_inputs():
    return torch.randn(64), torch.randn(64)
