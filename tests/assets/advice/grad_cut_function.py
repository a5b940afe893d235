"""tests/assets/grad_cut_model.py with ``backward_cut``'s action applied: the launch wrapped in a
``torch.autograd.Function`` with a backward (out = x * alpha + b: dx = dout * alpha, db = dout summed
over rows). The output requires grad again, and every parameter gets its gradient; the same output."""
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


class ScaleBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h, bias):
        out = torch.empty_like(h)
        scale_bias_kernel[(h.shape[0],)](h, bias, out, h.shape[1], 0.5, BLOCK_N=16)
        return out

    @staticmethod
    def backward(ctx, dout):
        return dout * 0.5, dout.sum(0)


class ParamModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.bias = torch.nn.Parameter(torch.zeros(16))

    def forward(self, x):
        return ScaleBias.apply(self.lin(x), self.bias).relu()

    @staticmethod
    def example_inputs():
        return (torch.randn(4, 16),)
