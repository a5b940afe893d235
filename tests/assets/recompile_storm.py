"""Target asset: a constexpr computed from the input size, called with 12 sizes: Dynamo hits its recompile limit (8)."""
import torch
import triton
import triton.language as tl


@triton.jit
def one_block_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):  # FORWARD-LINE
        out = torch.empty_like(x)
        n = x.numel()
        one_block_kernel[(1,)](x, out, n, BLOCK=triton.next_power_of_2(n))
        return out + 1


def example_inputs():
    return [(torch.randn(2 ** k),) for k in range(1, 13)]
