"""A stack of layers for the scaling benchmark (benchmarks/bench_scaling.py): `Net8`, `Net16`,
`Net32`, `Net64` (and `Net` = 8 layers), forward and backward.

Every layer launches one user kernel through each entry kind tritoninspect tells apart:
  * raw: `scale_kernel[grid](...)` inside an autograd.Function (traced as a HOP);
  * triton_op: `bench_stack::mul` (torch.library.triton_op + wrap_triton), with a
    registered backward;
  * custom_op: `bench_stack::shift` (torch.library.custom_op, opaque to the compiler),
    with a registered backward;
and a few ATen ops around them (Inductor fuses those into its own kernels). Each kernel
computes something simple, so values stay finite through 64 layers.
"""
import torch
import triton
import triton.language as tl
from torch.library import custom_op, triton_op, wrap_triton

BLOCK = 64
WIDTH = 256


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


@triton.jit
def mul_kernel(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * tl.load(w_ptr + offs, mask=mask), mask=mask)


@triton.jit
def shift_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 0.5, mask=mask)


def _grid(n):
    return (triton.cdiv(n, BLOCK),)


def _scale(x, factor):
    out = torch.empty_like(x)
    scale_kernel[_grid(x.numel())](x, out, x.numel(), factor, BLOCK=BLOCK)
    return out


class RawScale(torch.autograd.Function):
    """x * 0.9 with a raw launch in forward and backward."""

    @staticmethod
    def forward(ctx, x):
        return _scale(x, 0.9)

    @staticmethod
    def backward(ctx, grad):
        return _scale(grad, 0.9)


@triton_op("bench_stack::mul", mutates_args={})
def mul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    wrap_triton(mul_kernel)[_grid(x.numel())](x, w, out, x.numel(), BLOCK=BLOCK)
    return out


def _mul_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _mul_backward(ctx, grad):
    x, w = ctx.saved_tensors
    return mul(grad, w), mul(grad, x)


mul.register_autograd(_mul_backward, setup_context=_mul_setup)


@custom_op("bench_stack::shift", mutates_args=())
def shift(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    shift_kernel[_grid(x.numel())](x, out, x.numel(), BLOCK=BLOCK)
    return out


@shift.register_fake
def _(x):
    return torch.empty_like(x)


shift.register_autograd(lambda ctx, grad: grad)


class Layer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(WIDTH))

    def forward(self, x):
        x = RawScale.apply(torch.tanh(x))
        x = mul(x, self.w)
        return shift(x) * 0.5 + x.sin()


class Stack(torch.nn.Module):
    layers = 8

    def __init__(self) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(*(Layer() for _ in range(self.layers)))

    def forward(self, x):
        return self.body(x)


def _stack(n):
    return type(f"Net{n}", (Stack,), {"layers": n, "__doc__": f"{n} layers."})


Net8, Net16, Net32, Net64 = (_stack(n) for n in (8, 16, 32, 64))
Net = Net8


def example_inputs():
    return (torch.randn(WIDTH, requires_grad=True),)
