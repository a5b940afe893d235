"""A raw `kernel[grid](...)` launch inside `torch.utils.checkpoint`, and another after it.

Dynamo traces the checkpointed function into a `wrap_body_0` sub-graph; AOTAutograd inlines it, and torch
prints the inlined nodes' source comments with the checkpoint's tag first (`# ac_graph_id: 2 -
PREFER_RECOMPUTE File: ...`). What tritoninspect should report, live and from a TORCH_TRACE: `axpb_kernel` as a
`hop` entry at every stage (a raw launch, not a triton_op), launched twice from the output code; 0 graph breaks.
"""
import torch
import torch.utils.checkpoint
import triton
import triton.language as tl


@triton.jit
def axpb_kernel(x_ptr, out_ptr, n, A: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * A + 1.0, mask=mask)


def axpb(x, a):
    out = torch.empty_like(x)
    n = x.numel()
    axpb_kernel[(triton.cdiv(n, 32),)](x, out, n, A=a, BLOCK=32)
    return out


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(32, 32)

    def block(self, t):
        return axpb(self.lin(t).relu(), 0.5)

    def forward(self, x):
        y = torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=False)
        return axpb(y, 5.0).sum(-1)


def example_inputs():
    return (torch.randn(4, 32),)
