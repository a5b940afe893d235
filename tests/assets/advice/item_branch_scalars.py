"""item_branch.py with the advice it must NOT get applied: ``capture_scalar_outputs = True``. The graph
still breaks, now at the branch ("Data-dependent branching", generic_jump on a SymNode)."""
import torch
import triton
import triton.language as tl

torch._dynamo.config.capture_scalar_outputs = True  # the wrong advice, applied


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
