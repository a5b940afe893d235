"""ln_zeros_merged.py with the first action of ``clone_merged_allocations`` applied: AOTAutograd's CSE
turned off (``torch._functorch.config.cse = False``), so DW and DB stay two allocations and both are
written in place: no clone, the same values and gradients."""
import torch
import triton
import triton.language as tl

torch._functorch.config.cse = False  # the advice, applied


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
def ln_bwd_kernel(DY, X, W, DX, DW, DB, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    dy = tl.load(DY + row * N + cols, mask=mask)
    x = tl.load(X + row * N + cols, mask=mask)
    w = tl.load(W + cols, mask=mask)
    tl.store(DX + row * N + cols, dy * w, mask=mask)
    tl.atomic_add(DW + cols, dy * x, mask=mask)
    tl.atomic_add(DB + cols, dy, mask=mask)


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
        dw = torch.zeros(n, dtype=x.dtype, device=x.device)
        db = torch.zeros(n, dtype=x.dtype, device=x.device)
        ln_bwd_kernel[(rows,)](dy.contiguous(), x, w, dx, dw, db, n, BLOCK=64)
        return dx, dw, db


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(64))
        self.b = torch.nn.Parameter(torch.randn(64))

    def forward(self, x):
        return LayerNormLike.apply(torch.sin(x), self.w, self.b).cos()


def example_inputs():
    return (torch.randn(8, 64, requires_grad=True),)
