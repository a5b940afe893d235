"""ln_zeros_merged.py (and ln_views.py) with the second action applied: one zero-filled buffer for DW
and DB, passed to the kernel once, the kernel adding N for DB's half: one written argument, re-inplaced,
no clone; the same values and gradients."""
import torch
import triton
import triton.language as tl


@triton.jit
def ln_fwd_kernel(X, W, B, Y, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * N + cols, mask=mask)
    w = tl.load(W + cols, mask=mask)
    b = tl.load(B + cols, mask=mask)
    tl.store(Y + row * N + cols, x * w + b, mask=mask)


@triton.jit
def ln_bwd_kernel(DY, X, W, DX, DWB, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    dy = tl.load(DY + row * N + cols, mask=mask)
    x = tl.load(X + row * N + cols, mask=mask)
    w = tl.load(W + cols, mask=mask)
    tl.store(DX + row * N + cols, dy * w, mask=mask)
    tl.atomic_add(DWB + cols, dy * x, mask=mask)
    tl.atomic_add(DWB + N + cols, dy, mask=mask)


class LayerNormLike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b):
        y = torch.empty_like(x)
        rows, n = x.shape
        ln_fwd_kernel[(rows,)](x, w, b, y, n, BLOCK=64)
        ctx.save_for_backward(x, w)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        rows, n = x.shape
        dx = torch.empty_like(x)
        dwb = torch.zeros(2, n, dtype=x.dtype, device=x.device)  # DW, then DB: one buffer, passed once
        ln_bwd_kernel[(rows,)](dy.contiguous(), x, w, dx, dwb, n, BLOCK=64)
        return dx, dwb[0], dwb[1]


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(64))
        self.b = torch.nn.Parameter(torch.randn(64))

    def forward(self, x):
        return LayerNormLike.apply(torch.sin(x), self.w, self.b).cos()


def example_inputs():
    return (torch.randn(8, 64, requires_grad=True),)
