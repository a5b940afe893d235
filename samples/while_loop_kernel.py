"""A kernel launched in the body of `torch._higher_order_ops.while_loop`.

The loop runs three times. Inductor writes the loop's condition and body as functions of the
output code (`while_loop_cond_graph_0`, `while_loop_body_graph_0`) and runs them from a Python
`while` loop in `call()`: the kernel is written once and launched three times.

What tritoninspect should report: ``scale_kernel`` as a ``hop`` entry in the Dynamo sub-graph
``body_fn_0`` and the AOT / post-grad sub-graph ``while_loop_body_graph_0``; one output-code
launch, in ``while_loop_body_graph_0`` (a while_loop body, next to the Inductor kernel of the
counter's ``add``); 3 run-time launches from that function; 0 graph breaks.
"""
import torch
import triton
import triton.language as tl
from torch._higher_order_ops.while_loop import while_loop


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 0.5, mask=mask)


def scale(x):
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 16),)](x, out, n, BLOCK=16)
    return out


def cond_fn(i, t):
    return i < 3


def body_fn(i, t):
    return i + 1, scale(t)


class Net(torch.nn.Module):
    def forward(self, x):
        i = torch.zeros((), dtype=torch.int64, device=x.device)
        _, out = while_loop(cond_fn, body_fn, (i, x.sin()))
        return out.cos()


def example_inputs():
    return (torch.randn(40),)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
