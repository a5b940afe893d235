"""A kernel launched in both branches of `torch.cond`.

`torch.cond(pred, true_fn, false_fn, (y,))` traces each branch as a sub-graph. Inductor writes
each branch as its own function of the output code (`true_graph_0`, `false_graph_0`) and calls
the one the predicate picks from `call()`. ``scale_kernel`` is launched in both branches, with a
different constexpr ``SCALE`` (2.0 or -1.0); the example input makes the predicate true.

What tritoninspect should report: ``scale_kernel`` as a ``hop`` entry in the Dynamo graph's
sub-graphs ``cond_true_0`` / ``cond_false_0`` and the AOT / post-grad sub-graphs
``true_graph_0`` / ``false_graph_0``; two output-code launches, one in each branch function
(``in true_graph_0``, ``in false_graph_0``), each with the Inductor kernels around the
``torch.cond`` call in ``call()`` (``sin`` and ``sum`` before, ``cos`` after); one run-time
launch, from ``true_graph_0``; 0 graph breaks.
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


class Net(torch.nn.Module):
    def forward(self, x):
        y = x.sin()
        out = torch.cond(y.sum() > -1e9, lambda t: scale(t, 2.0), lambda t: scale(t, -1.0), (y,))
        return out.cos()


def example_inputs():
    return (torch.randn(40),)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
