"""An autograd.Function that allocates its output on "cuda:0", as triformer 3.0.7's TritonRMSNorm
does. In compile-only mode on a CPU build of torch, Dynamo traced it into a fake CUDA tensor and
torch's C++ aborted the process (SIGABRT, "terminate called after throwing an instance of
'c10::Error'"); it must fail with one error line naming the allocation (CUDA-ALLOC)."""
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class Copy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.empty(x.shape, dtype=x.dtype, device="cuda:0")  # CUDA-ALLOC
        copy_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad


class Net(torch.nn.Module):
    def forward(self, x):
        return Copy.apply(torch.sin(x)) * 2


def example_inputs():
    return (torch.randn(100, requires_grad=True),)
