"""Kernels whose specialisation guards a size (issue 22, item 3).

- `Heuristic`: `@triton.heuristics` computes `EVEN` from `n`; with `x.size(0)` marked dynamic,
  evaluating it guards `(x.size(0) % 16) == 0`.
- `Rows`: the row width goes to the `tl.constexpr` `N_COLS` (and `BLOCK` is computed from it);
  with `x.size(1)` maybe-dynamic, the launch specialises it: the guard `x.size(1) == 48`.
- `Positives`: `n` comes from `.item()` of a computed tensor: an unbacked size (`u0`) in the
  kernel's arguments and grid. `capture_scalar_outputs` is set at import so Dynamo keeps it in
  the graph (without it, `.item()` is a graph break).
"""
import torch
import triton
import triton.language as tl

torch._dynamo.config.capture_scalar_outputs = True


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def even_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)
    else:
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@triton.jit
def row_kernel(x_ptr, out_ptr, N_COLS: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N_COLS
    tl.store(out_ptr + row * N_COLS + cols, tl.load(x_ptr + row * N_COLS + cols, mask=mask) + 1, mask=mask)


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class Heuristic(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        even_kernel[(triton.cdiv(n, 16),)](x, out, n, BLOCK=16)  # LAUNCH-HEURISTIC
        return out

    @staticmethod
    def example_inputs():
        x = torch.randn(64)
        torch._dynamo.mark_dynamic(x, 0)
        return (x,)


class Rows(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        row_kernel[(x.shape[0],)](x, out, N_COLS=x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))  # LAUNCH-ROWS
        return out

    @staticmethod
    def example_inputs():
        x = torch.randn(4, 48)
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.maybe_mark_dynamic(x, 1)
        return (x,)


class Positives(torch.nn.Module):
    def forward(self, x):
        n = (x > 0).sum().item()  # ITEM
        torch._check(n <= x.numel())
        out = torch.zeros_like(x)
        copy_kernel[(triton.cdiv(n, 16),)](x, out, n, BLOCK=16)
        return out

    @staticmethod
    def example_inputs():
        return (torch.randn(64),)
