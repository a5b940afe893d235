"""A kernel given a torch.dtype as a constexpr argument (torchao 0.18's blockwise fp8 gemm passes out_dtype):
Inductor writes it into the kernel's generated source as `torch.bfloat16`, in a module that never imports torch,
so loading that source fails (NameError), on a GPU too. `python tests/assets/dtype_constexpr_arg.py` on a GPU
runs it with plain torch.compile."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, out_dtype: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, (tl.load(x_ptr + offs, mask=mask) * 2).to(out_ptr.dtype.element_ty), mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x, dtype=torch.bfloat16)
        scale_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), torch.bfloat16, BLOCK=256)
        return out.float().sin()

    @staticmethod
    def example_inputs():
        return (torch.randn(1024),)


if __name__ == "__main__":
    dev = "cuda"
    x = torch.randn(1024, device=dev)
    print(torch.__version__, triton.__version__)
    print(torch.compile(Net())(x).sum())
