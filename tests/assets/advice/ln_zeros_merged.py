"""A layer-norm-like autograd.Function whose backward accumulates DW and DB with tl.atomic_add into
two fresh ``torch.zeros`` buffers (the newcomer's model of issue 23, made small).

What the advice should say: ``clone_merged_allocations``. In the AOT backward graph AOTAutograd's CSE
merged the two identical ``torch.zeros(N)`` into one ``full_default`` passed as both DW and DB, so
re-inplacing writes one in place and clones the other (256 B per call), and it must warn against
``torch.empty``: the atomics need the zeros. Applied: ``ln_zeros_nocse.py`` (the config flag) and
``ln_one_buffer.py`` (one buffer, passed once).
"""
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
