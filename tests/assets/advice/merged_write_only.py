"""A kernel that writes ``out`` in full and adds into ``acc`` (read-modify-write), both allocated as
``torch.zeros`` of one shape inside an autograd.Function: AOTAutograd's CSE merges the two allocations,
so Inductor copies one before the launch (``clone_merged_allocations``). Its first action applied is
``merged_write_only_empty.py``."""
import torch
import triton
import triton.language as tl


@triton.jit
def write_and_add_kernel(x_ptr, out_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x * 2, mask=m)
    tl.store(acc_ptr + offs, tl.load(acc_ptr + offs, mask=m) + x * 3, mask=m)


def allocate(x):
    return (torch.zeros(x.shape, dtype=x.dtype, device=x.device),
            torch.zeros(x.shape, dtype=x.dtype, device=x.device))


class WriteAndAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out, acc = allocate(x)
        write_and_add_kernel[(triton.cdiv(x.numel(), 64),)](x, out, acc, x.numel(), BLOCK=64)
        return out, acc

    @staticmethod
    def backward(ctx, g_out, g_acc):
        return g_out * 2 + g_acc * 3


class Net(torch.nn.Module):
    def forward(self, x):
        out, acc = WriteAndAdd.apply(x)
        return out + acc


def example_inputs():
    return (torch.randn(100, requires_grad=True),)
