"""Target asset for tests/test_compile_only_launches.py: a loop over rows whose bounds are scalar
tensors (`range(row_start, row_end)`), as Liger-Kernel's RMSNorm backward loops; Triton 3.6's
interpreter turned such a bound into an int with `int(array)`, which numpy 2.4+ refuses."""

import torch
import triton
import triton.language as tl


@triton.jit
def _rows_kernel(x_ptr, out_ptr, n_rows, rows_per_program, B: tl.constexpr):
    row_start = tl.program_id(0) * rows_per_program
    row_end = min(row_start + rows_per_program, n_rows)
    offsets = tl.arange(0, B)
    for row in range(row_start, row_end):
        tl.store(out_ptr + row * B + offsets, tl.load(x_ptr + row * B + offsets) * 2)


def launch(x):
    out = torch.empty_like(x)
    _rows_kernel[(2,)](x, out, x.shape[0], triton.cdiv(x.shape[0], 2), B=x.shape[1])
    return out
