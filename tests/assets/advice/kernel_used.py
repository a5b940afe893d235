"""kernel_unused.py with ``kernel_missing``'s action applied: the kernel's output is returned, so the
compiled code launches it."""
import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        double_kernel[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
        return torch.sin(x) + out  # the advice, applied: what the kernel writes is used


def example_inputs():
    return (torch.randn(64),)
