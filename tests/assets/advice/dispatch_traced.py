"""samples/break_disabled_dispatch.py with the hint applied: ``dispatch`` without
``torch.compiler.disable``. Dynamo traces the launch: ``gelu_kernel`` is a ``hop`` in one graph, no break,
no eager launch, the same values."""
import torch
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y, mask=mask)


def dispatch(x):  # the advice, applied: no torch.compiler.disable
    out = torch.empty_like(x)
    n = x.numel()
    block = 32 if n >= 1024 else 16
    gelu_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block)
    return out


class Net(torch.nn.Module):
    def forward(self, x):
        h = x * 2
        y = dispatch(h)
        return y + 1


def example_inputs():
    return torch.randn(64)
