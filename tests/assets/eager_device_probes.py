"""Target asset: device probes run eagerly while Dynamo's frame callback is still on.

`prepare` is a frame Dynamo skips while it still compiles what the frame calls
(`torch.compiler.disable(recursive=False)`), as it does with the rest of a frame it gave up on
(an `assert x.is_cuda` that failed while it traced): the call is the model's one graph break
(THE-BREAK), and `prepare` runs eagerly. There it asks `torch.cuda.is_available()`
(EAGER-IS-AVAILABLE) and `x.is_cuda` (EAGER-IS-CUDA). In compile-only mode both answer for the
CPU through tritoninspect's watches, which Dynamo must not compile as frames of the model's: it
did, and reported a break inside tritoninspect's `is_cuda` property and one at `posix.lstat`.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@torch.compiler.disable(recursive=False)
def prepare(x):
    on_gpu = torch.cuda.is_available()  # EAGER-IS-AVAILABLE
    if x.is_cuda and on_gpu:  # EAGER-IS-CUDA
        return x
    return x.contiguous()


class Net(torch.nn.Module):
    def forward(self, x):
        x = prepare(torch.sin(x))  # THE-BREAK
        out = torch.empty_like(x)
        double_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
        return out.cos()


def example_inputs():
    return (torch.randn(16, 8).t(),)
