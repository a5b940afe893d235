"""item_branch.py with its hint applied: the condition stays a tensor and ``torch.where`` selects between
both sides. One graph, no break, the same values for both flags."""
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
        # The advice, applied: the condition stays a tensor, both sides computed, torch.where selects.
        y = torch.where(flag > 0, out + 1, out - 1)
        return y * 2


def example_inputs():
    return [(torch.randn(64), torch.tensor(1.0)), (torch.randn(64), torch.tensor(-1.0))]
