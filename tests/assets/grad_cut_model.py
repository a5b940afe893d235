"""A raw Triton launch between nn.Linear and relu: the launch has no autograd formula,
so with --backward the output does not require grad and the parameters get no gradient
(the newcomer's report of 2026-11-30: `backward: yes` and nothing said)."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_bias_kernel(x_ptr, b_ptr, out_ptr, N, alpha, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * N + cols, x * alpha + b, mask=mask)


class ParamModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.bias = torch.nn.Parameter(torch.zeros(16))

    def forward(self, x):
        h = self.lin(x)
        out = torch.empty_like(h)
        scale_bias_kernel[(h.shape[0],)](h, self.bias, out, h.shape[1], 0.5, BLOCK_N=16)
        return out.relu()

    @staticmethod
    def example_inputs():
        return (torch.randn(4, 16),)
