"""Target asset for tests/test_compile_only_launches.py: loop variables used as tensors
(`i_t.to(tl.int64)`), as flash-linear-attention's chunk kernels write them (chunk_fwd_kernel_h);
a compiled kernel's loop variable is a scalar tensor, Triton's interpreter gave a Python int."""

import torch
import triton
import triton.language as tl


@triton.jit
def _blocks_kernel(x_ptr, out_ptr, T, BT: tl.constexpr):
    for i_t in range(tl.cdiv(T, BT)):  # the builtin range
        o = i_t.to(tl.int64) * BT + tl.arange(0, BT)
        tl.store(out_ptr + o, tl.load(x_ptr + o, mask=o < T) * 2, mask=o < T)


@triton.jit
def _tl_range_kernel(x_ptr, out_ptr, T, BT: tl.constexpr):
    for i_t in tl.range(0, tl.cdiv(T, BT), num_stages=2):
        o = i_t.to(tl.int64) * BT + tl.arange(0, BT)
        tl.store(out_ptr + o, tl.load(x_ptr + o, mask=o < T) + 1, mask=o < T)


@triton.jit
def _loop_dtype_kernel(out_ptr, start):
    """Writes each loop variable's bit width: 32 over int32 bounds, 64 over an int64 bound."""
    for i in range(0, 2):
        tl.store(out_ptr + i, i.dtype.primitive_bitwidth)
    for j in range(start.to(tl.int64), start.to(tl.int64) + 2):
        tl.store(out_ptr + 2 + j - start, j.dtype.primitive_bitwidth)


def launch(x):
    doubled, plus_one = torch.empty_like(x), torch.empty_like(x)
    _blocks_kernel[(1,)](x, doubled, x.numel(), BT=16)
    _tl_range_kernel[(1,)](x, plus_one, x.numel(), BT=16)
    return doubled, plus_one


def loop_widths():
    out = torch.zeros(4, dtype=torch.int32)
    _loop_dtype_kernel[(1,)](out, 3)
    return out


@triton.jit
def _stepped_kernel(out_ptr, n, step, BLOCK: tl.constexpr):
    """A step given as an argument (negative: no iteration on a GPU), `tl.range`'s num_stages by position,
    and a constexpr negative step (Python's range: Triton reverses it)."""
    for i in range(n - 1, -1, step):
        tl.store(out_ptr + i, 100 + i)
    for j in tl.range(0, n, 1, 2):
        tl.atomic_add(out_ptr + BLOCK + j, 1)
    for k in range(BLOCK - 1, -1, -1):
        tl.atomic_add(out_ptr + 2 * BLOCK + k, k)


def stepped(n=4):
    out = torch.zeros(12, dtype=torch.int32)
    _stepped_kernel[(1,)](out, n, -1, BLOCK=4)
    return out
