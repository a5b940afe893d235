"""A kernel inside a `torch.compiler.nested_compile_region`, called twice.

A nested compile region is traced once as an `invoke_subgraph` body and reused for every call:
Inductor writes the body once as a function of the output code (`repeated_subgraph0`) and calls
it from `call()` at each use.

What tritoninspect should report: ``scale_kernel`` as a ``hop`` entry in the Dynamo sub-graph
``subgraph_0`` and the AOT / post-grad sub-graph ``repeated_subgraph0``; one output-code launch,
in ``repeated_subgraph0`` (an invoke_subgraph body called from 2 places), before the Inductor
kernel of ``relu``; 2 run-time launches; 0 graph breaks.

That is torch 2.13, whose Dynamo reuses a region's first trace for later calls (pytorch/pytorch#176644).
torch 2.11 traces each call and keeps one sub-graph only when the traces are the same graph, and a
Triton kernel's node is not (each trace stores the kernel's constant arguments anew: another
``constant_args_idx``). There each call is its own sub-graph: ``subgraph_0`` and ``subgraph_1``,
``repeated_subgraph0`` and ``repeated_subgraph1``, each written and called once, with one launch
each (tests/_expect.py, ``_reuses_nested_regions``).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


@torch.compiler.nested_compile_region
def block(t):
    out = torch.empty_like(t)
    n = t.numel()
    scale_kernel[(triton.cdiv(n, 16),)](t, out, n, BLOCK=16)
    return out.relu()


class Net(torch.nn.Module):
    def forward(self, x):
        return block(block(x.sin())).cos()


def example_inputs():
    return (torch.randn(40),)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
