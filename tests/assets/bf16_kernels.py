"""Two bfloat16 kernels in compile-only mode (tests/test_compile_only_launches.py).

`bf16_dot_kernel` multiplies bf16 tiles as they are loaded (cut-cross-entropy's `tl.dot(e, c, ...)`):
Triton's interpreter holds bf16 values as their uint16 bits and multiplies the bits, so its result is
meaningless there and the report says so. `bf16_upcast_kernel` casts what it loads to float32 first
(Liger-Kernel's way) and computes right: no warning.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def bf16_dot_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r[:, None] * BLOCK + r[None, :])
    y = tl.load(y_ptr + r[:, None] * BLOCK + r[None, :])
    acc = tl.dot(x, y, tl.zeros((BLOCK, BLOCK), tl.float32))
    tl.store(out_ptr + r[:, None] * BLOCK + r[None, :], acc)


@triton.jit
def bf16_upcast_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (x * 2).to(tl.bfloat16), mask=mask)


class Net(torch.nn.Module):
    def forward(self, x, y):
        out = torch.empty(16, 16, dtype=torch.float32, device=x.device)
        bf16_dot_kernel[(1,)](x, y, out, BLOCK=16)
        twice = torch.empty_like(x)
        bf16_upcast_kernel[(1,)](x, twice, x.numel(), BLOCK=256)
        return out, twice


def example_inputs():
    torch.manual_seed(0)
    return torch.randn(16, 16).bfloat16(), torch.randn(16, 16).bfloat16()
