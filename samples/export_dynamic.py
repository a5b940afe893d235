"""A dynamic batch dimension, and a row width that a kernel's ``tl.constexpr`` specialises: for ``tritoninspect export``.

``row_scale_kernel`` takes the row width as ``N_COLS: tl.constexpr`` (a value Triton
compiles into the kernel) and the row count ``n_rows`` as a runtime argument. Exported with
dynamic shapes (``--dynamic``: this file's ``export_dynamic_shapes()``, rows as ``Dim("rows")``
and cols as ``Dim.AUTO``), the rows stay symbolic (``s0``, also in the kernel's grid and its
``n_rows`` argument) while the cols are fixed to 48: a constexpr must be known when the kernel
compiles, so torch specialises the dimension (pytorch/pytorch#137024). Marking cols with a named
``Dim`` instead makes export fail (tests/assets/export_constexpr_dim.py).

``Net`` launches through a ``torch.library.triton_op`` (exports strictly and non-strictly);
``RawNet`` launches the kernel directly (exports strictly only: pytorch/pytorch#146066).

What tritoninspect should report for ``export samples/export_dynamic.py:Net --dynamic``:
``x.size(0)`` symbolic, ``x.size(1)`` specialised, and ``N_COLS`` of ``row_scale_kernel`` as
the argument that specialised it.
"""
import torch
import triton
import triton.language as tl
from torch.export import Dim
from torch.library import triton_op, wrap_triton


@triton.jit
def row_scale_kernel(x_ptr, out_ptr, n_rows, N_COLS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = (cols < N_COLS) & (row < n_rows)
    x = tl.load(x_ptr + row * N_COLS + cols, mask=mask)
    tl.store(out_ptr + row * N_COLS + cols, x * 2.0, mask=mask)


def _launch(launcher, x):
    out = torch.empty_like(x)
    rows, cols = x.shape
    launcher[(rows,)](x, out, rows, N_COLS=cols, BLOCK=triton.next_power_of_2(cols))
    return out


@triton_op("tisample_export::row_scale", mutates_args={})
def row_scale(x: torch.Tensor) -> torch.Tensor:
    return _launch(wrap_triton(row_scale_kernel), x)


class Net(torch.nn.Module):
    def forward(self, x):
        return row_scale(x) + 1


class RawNet(torch.nn.Module):
    def forward(self, x):
        return _launch(row_scale_kernel, x) + 1


def example_inputs():
    return (torch.randn(8, 48),)


def export_dynamic_shapes():
    """``dynamic_shapes`` for torch.export (used by ``tritoninspect export --dynamic``)."""
    return ({0: Dim("rows", min=2, max=4096), 1: Dim.AUTO},)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
