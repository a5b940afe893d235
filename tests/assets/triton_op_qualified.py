"""A triton_op launching its kernel through the qualified `torch.library.wrap_triton(k)`.

torch 2.13's source scan behind `get_triton_kernels_for_op` finds `wrap_triton(k)` only, so it names
no kernel for this op: the Dynamo graph's op node must still be tied to `scale_kernel` (seen inside
the op). Made for the newcomer pass (h20).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


@torch.library.triton_op("tiasset_qualified::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    torch.library.wrap_triton(scale_kernel)[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
    return out


class Net(torch.nn.Module):
    def forward(self, x):
        return scale(torch.sin(x)) + 1

    @staticmethod
    def example_inputs():
        return (torch.randn(64),)
