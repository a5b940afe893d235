"""A float kernel argument that torch.compile passes as fp64 (issue 24, finding 2).

``gated_scale_kernel`` computes ``x * sigmoid(x * gate)`` with ``gate`` a Python float. Eager
Triton types ``gate`` fp32; Inductor's launch signature types it fp64, and ``x * gate`` (an fp32
tensor times an fp64 scalar) runs in double precision, the sigmoid included.

What tritoninspect should report: ``gated_scale_kernel`` as ``hop``, 0 graph breaks, and an
``fp64_scalar_math`` warning naming ``gate`` (``'gate': 'fp64'`` in the output code's triton_meta,
eager type fp32, used uncast at the ``x * gate`` line). On a GPU the compiled kernel is slower
than eager's.

``CastNet`` follows the finding's action: its kernel casts ``gate = gate.to(tl.float32)`` first,
so the compiled math is fp32 again (an ``fp64_scalar_math`` note: cast before use).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def gated_scale_kernel(x_ptr, out_ptr, gate, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = x * tl.sigmoid(x * gate)
    tl.store(out_ptr + offs, y, mask=mask)


@triton.jit
def gated_scale_cast_kernel(x_ptr, out_ptr, gate, n, BLOCK: tl.constexpr):
    gate = gate.to(tl.float32)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = x * tl.sigmoid(x * gate)
    tl.store(out_ptr + offs, y, mask=mask)


def _gated(kernel, x, gate):
    out = torch.empty_like(x)
    n = x.numel()
    kernel[(triton.cdiv(n, 1024),)](x, out, gate, n, BLOCK=1024)
    return out


class Net(torch.nn.Module):
    def __init__(self, gate: float = 1.702):
        super().__init__()
        self.gate = gate

    def forward(self, x):
        return _gated(gated_scale_kernel, x, self.gate)


class CastNet(Net):
    def forward(self, x):
        return _gated(gated_scale_cast_kernel, x, self.gate)


def example_inputs():
    return (torch.randn(4096),)
