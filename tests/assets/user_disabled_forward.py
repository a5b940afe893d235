"""An autograd.Function whose forward the user disables (`@torch.compiler.disable` under `@staticmethod`):
its kernel launches eagerly with no graph break tied to it (hostile, stop 39). The advice names that disable,
not "find what stops Dynamo"."""

import torch
import triton
import triton.language as tl


@triton.jit
def mul_kernel(x_ptr, out_ptr, s, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


def launch(x, s):
    out = torch.empty_like(x)
    mul_kernel[(triton.cdiv(x.numel(), 256),)](x, out, s, x.numel(), BLOCK=256)
    return out


class Scale(torch.autograd.Function):
    @staticmethod
    @torch.compiler.disable  # USER-DISABLE
    def forward(ctx, x):
        return launch(x, 3.0)

    @staticmethod
    def backward(ctx, g):
        return launch(g, 3.0)


class Model(torch.nn.Module):
    def forward(self, x):
        return Scale.apply(x.sin()).cos()

    @staticmethod
    def example_inputs():
        return (torch.randn(1024, requires_grad=True),)
