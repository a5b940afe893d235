"""A raw Triton kernel launch between two eager ops, traced straight into the graph.

What tritoninspect should report: ``add_kernel`` as a ``hop`` entry (the launch
is traced as ``triton_kernel_wrapper_mutation``/``functional``) in a single
graph, with 0 graph breaks. The ``sin`` before and the ``cos * 2`` after the
kernel are there so the fusion analysis has neighbours to look at.
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


class Net(torch.nn.Module):
    def forward(self, x, w):
        y = torch.sin(x)
        out = torch.empty_like(y)
        n = out.numel()
        add_kernel[(triton.cdiv(n, 16),)](y, w, out, n, BLOCK=16)
        return torch.cos(out) * 2


def example_inputs():
    return torch.randn(64), torch.randn(64)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
