"""Autotune over heuristics, compiled with dynamic shapes: the launch cannot be traced.

``@triton.heuristics`` derives the constexpr ``EVEN`` from the size ``n`` and
the autotuned ``BLOCK``. Under static shapes Dynamo folds the heuristic into
the autotune configs (see ``heuristics.py``). Compiled with ``dynamic=True``
(``tritoninspect breaks samples/break_heuristics_dynamic.py:Net --dynamic``),
``n`` is a SymInt, so the heuristic's value is symbolic, and Dynamo can only
fold constant values.

What tritoninspect should report (with ``--dynamic``): graph breaks at the
``masked_scale_kernel[grid](...)`` line, the first with
"@triton.heuristics must return constant values" (GB0361), then Dynamo cannot
resume in the middle of the launch (GB0092, "could not resume"), and the launch
wrapper in triton's ``jit.py`` breaks again (library frame). The kernel is
``masked_scale_kernel``, ``eager`` only (no graph holds it), with the
heuristics hint. Without ``--dynamic``: 0 breaks, a ``hop`` entry.
"""
import os
import time

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 16}, num_warps=2),
        triton.Config({"BLOCK": 32}, num_warps=4),
    ],
    key=["n"],
)
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def masked_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 3.0)
    else:
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 3.0, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        masked_scale_kernel[grid](x, out, n)
        return out + 1


def example_inputs():
    return torch.randn(80)


def _wall_clock_bench(kernel_call, quantiles):
    start = time.perf_counter()
    kernel_call()
    return [time.perf_counter() - start] * len(quantiles)


if __name__ == "__main__":
    if os.environ.get("TRITON_INTERPRET") == "1":
        # The interpreter has no GPU driver for the autotuner to benchmark with.
        masked_scale_kernel.do_bench = _wall_clock_bench
    torch.manual_seed(0)
    print(f"checksum: {Net()(example_inputs()).sum().item():.6f}")
