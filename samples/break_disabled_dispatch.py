"""A kernel library's dispatcher wrapped in ``torch.compiler.disable``.

``dispatch`` picks a block size for the kernel, the way a library's launcher
might, and is marked ``torch.compiler.disable`` (libraries do this to keep
Dynamo out of Python-heavy dispatch code). Everything it launches runs
eagerly, outside the compiled graphs.

What tritoninspect should report: 1 graph break at the ``dispatch(h)`` call,
"Skip calling `torch.compiler.disable()`d function" (GB0098), concerning
``gelu_kernel`` ("launched eagerly from this line"), with the hint to drop the
``disable`` or use a ``triton_op``. ``gelu_kernel`` is ``eager`` only, and
there are 2 graphs (before and after the call).
"""
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


@torch.compiler.disable
def dispatch(x):
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


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(example_inputs()).sum().item():.6f}")
