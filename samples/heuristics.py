"""A kernel under both ``triton.autotune`` and ``triton.heuristics``.

The heuristic derives the constexpr ``EVEN`` from the runtime size and the
autotuned ``BLOCK``; when every block is full the kernel skips the mask.

What tritoninspect should report: ``masked_mul_kernel`` as a ``hop`` entry
(autotuner over heuristics over jit, all traced as one launch), with 0 graph
breaks.
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
def masked_mul_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs)
        tl.store(out_ptr + offs, x * y)
    else:
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x * y, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        masked_mul_kernel[grid](x, y, out, n)
        return out + 1


def example_inputs():
    # 80 elements: even for BLOCK=16, ragged for BLOCK=32, so the two configs
    # specialise EVEN differently.
    return torch.randn(80), torch.randn(80)


def _wall_clock_bench(kernel_call, quantiles):
    start = time.perf_counter()
    kernel_call()
    return [time.perf_counter() - start] * len(quantiles)


if __name__ == "__main__":
    if os.environ.get("TRITON_INTERPRET") == "1":
        # The interpreter has no GPU driver for the autotuner to benchmark with.
        masked_mul_kernel.do_bench = _wall_clock_bench
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
