"""Graph breaks around Triton launches, and a kernel that never gets compiled.

What tritoninspect should report:
- ``add_kernel`` as a ``hop`` entry twice: in the first graph (compile id 0/0)
  and in the graph of the last resume frame.
- ``scale_kernel`` as ``eager``: it is launched from a ``torch.compiler.disable``
  helper, so it runs outside every compiled graph.
- 2 graph breaks: one at the call of the disabled helper, one at the
  ``torch._dynamo.graph_break()`` line. The ``relu`` between them keeps the
  middle graph non-empty, so both breaks end a compiled graph (3 graphs).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def scale_kernel(x_ptr, out_ptr, scale, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * scale, mask=mask)


def add(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 16),)](x, y, out, n, BLOCK=16)
    return out


@torch.compiler.disable
def scale(x, s):
    out = torch.empty_like(x)
    n = out.numel()
    scale_kernel[(triton.cdiv(n, 16),)](x, out, s, n, BLOCK=16)
    return out


class Net(torch.nn.Module):
    def forward(self, x, y):
        h = add(x, y)
        h = scale(h, 0.5).relu()
        torch._dynamo.graph_break()
        return add(h, y)


def example_inputs():
    return torch.randn(64), torch.randn(64)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
