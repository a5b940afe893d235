"""Target asset for tests/test_traces.py: a triton_op between fused ATen ops, as a user's model.

`relu(x) + 1` -> `tiasset::scale_bias` (a triton_op launching `scale_bias_kernel`) -> softmax.
On CPU Inductor writes `cpp_fused_add_relu_0` before the user kernel and `cpp_fused__softmax_1`
after it; with provenance tracking on, Inductor lists the user kernel's HOP node among the
first kernel's post-grad nodes, and the softmax only as its decomposition (amax, sub, exp,
sum, div). A live capture says `relu add / _softmax`: so must a trace.
"""

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def scale_bias_kernel(x_ptr, b_ptr, out_ptr, N, alpha, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * N + cols, x * alpha + b, mask=mask)


@triton_op("tiasset::scale_bias", mutates_args={})
def scale_bias(x: torch.Tensor, b: torch.Tensor, alpha: float) -> torch.Tensor:
    M, N = x.shape
    out = torch.empty_like(x)
    wrap_triton(scale_bias_kernel)[(M,)](x, b, out, N, alpha, BLOCK_N=triton.next_power_of_2(N))
    return out


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("bias", torch.linspace(-1, 1, 48))

    def forward(self, x):
        h = torch.relu(x) + 1.0
        return scale_bias(h, self.bias, 0.5).softmax(dim=-1)


def example_inputs():
    return (torch.randn(8, 48),)
