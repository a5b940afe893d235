"""An autotuned kernel that keeps its tuning in Triton's disk cache (`cache_results=True`, as fla-core's
Autotuners do): the kernel's decorator line says so (`@autotune(configs=2, key=[n], cache_results=True)`)."""

import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"],
                 cache_results=True)
@triton.jit
def cached_add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})], key=["n"])
@triton.jit
def plain_add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 2, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        n = x.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)  # noqa: E731
        out = torch.empty_like(x)
        cached_add_kernel[grid](x, out, n)
        again = torch.empty_like(out)
        plain_add_kernel[grid](out, again, n)
        return again


def example_inputs():
    return (torch.randn(64),)
