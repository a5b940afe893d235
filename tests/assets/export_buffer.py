"""A raw kernel that accumulates into a registered buffer: strict export lists the buffer as an input
(BUFFER) and its new value as an output (BUFFER_MUTATION). For tests/test_export_e2e.py.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def accumulate_kernel(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(acc_ptr + offs, tl.load(acc_ptr + offs, mask=mask) + tl.load(x_ptr + offs, mask=mask), mask=mask)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("acc", torch.zeros(64))

    def forward(self, x):
        accumulate_kernel[(4,)](x, self.acc, 64, BLOCK=16)
        return x * 2


def example_inputs():
    return (torch.randn(64),)
