"""An autotuned kernel (two configs) whose grid depends on the chosen BLOCK.

What tritoninspect should report: ``scaled_add_kernel`` as a ``hop`` entry
(the ``triton.autotune`` wrapper is traced like a plain launch; Inductor keeps
both configs and benchmarks them), with 0 graph breaks.
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
@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + alpha * y, mask=mask)


class Net(torch.nn.Module):
    def __init__(self, alpha: float = 0.5):
        super().__init__()
        self.alpha = alpha

    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        scaled_add_kernel[grid](x, y, out, self.alpha, n)
        return out.relu()


def example_inputs():
    return torch.randn(256), torch.randn(256)


def _wall_clock_bench(kernel_call, quantiles):
    start = time.perf_counter()
    kernel_call()
    return [time.perf_counter() - start] * len(quantiles)


if __name__ == "__main__":
    if os.environ.get("TRITON_INTERPRET") == "1":
        # The interpreter has no GPU driver for the autotuner to benchmark with.
        scaled_add_kernel.do_bench = _wall_clock_bench
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
