"""A value read with ``.item()`` that decides a Python ``if`` (the newcomer's case of issue 23).

What the advice should say: the break's hint is the branch one (torch.where), never "set
capture_scalar_outputs = True": with the flag the graph still breaks, at the branch
(``item_branch_scalars.py`` shows it). Applied: ``item_branch_where.py``."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x, flag):
        out = torch.empty_like(x)
        n = x.numel()
        scale_kernel[(triton.cdiv(n, 16),)](x, out, n, 3.0, BLOCK=16)
        f = flag.item()
        if f > 0:
            y = out + 1
        else:
            y = out - 1
        return y * 2


def example_inputs():
    return [(torch.randn(64), torch.tensor(1.0)), (torch.randn(64), torch.tensor(-1.0))]
