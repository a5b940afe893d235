"""`torch.compile`d pieces inside the model: a submodule with a graph break, and a function.

``Net.inner`` is ``torch.compile(Inner())``; ``Inner.forward`` breaks the graph, so Dynamo runs
that call eagerly and the submodule's own ``torch.compile`` compiles its frames. ``helper`` is a
``@torch.compile``d function. Plain ``torch.compile`` would compile those with their own backend
(Inductor); tritoninspect sends every compile region the model enters to its recorder, so their
graphs are in the report like the model's.

What tritoninspect should report: ``scale_kernel`` as a ``hop`` entry in the graphs of the
compiles after the break (Inner's resumed frame and ``helper``), each launched from its output
code; 2 graph breaks logged at the ``graph_break()`` line (the model's frame and Inner's); 4
compiles; 2 run-time launches.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * SCALE, mask=mask)


def scale(x, s):
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 16),)](x, out, n, SCALE=s, BLOCK=16)
    return out


class Inner(torch.nn.Module):
    def forward(self, t):
        t = t + 1
        torch._dynamo.graph_break()
        return scale(t, 2.0) + 1


@torch.compile
def helper(t):
    return scale(t, 3.0) * 2


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.compile(Inner())

    def forward(self, x):
        return helper(self.inner(x.sin())).cos()


def example_inputs():
    return (torch.randn(40),)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
