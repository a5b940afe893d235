"""Target asset: a heuristics-over-autotune kernel launched with a `None` pointer argument.

torch 2.11's Inductor compiles it, then its autotune benchmark calls the launcher with the
`None` passed as -1 and fails (`TypeError: launcher() missing 1 required positional argument`,
seen on the H200). tritoninspect must still give the report of everything captured before,
with the failure on top. Newer torch, and compile-only mode, run it.
"""

import torch
import triton
import triton.language as tl


@triton.heuristics({"HAS_BIAS": lambda args: args["b_ptr"] is not None})
@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def bias_add_kernel(x_ptr, b_ptr, out_ptr, n, HAS_BIAS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if HAS_BIAS:
        x += tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        bias_add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, None, out, n)
        return out + 1


def example_inputs():
    return (torch.randn(64),)
