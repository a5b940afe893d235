"""`graph --cudagraphs` with a data-dependent size: `count.item()` (captured, `capture_scalar_outputs`) gives the
kernel its `n`. Inductor keeps the `.item()` out of CUDA graphs and, with graph partitions on (torch's default),
CUDA-graphs the rest around it: the report names the op, its line (21) and the kernel its value reaches."""
import torch
import torch._dynamo.config
import triton
import triton.language as tl

torch._dynamo.config.capture_scalar_outputs = True


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x, count):
        n = count.item()
        torch._check(n >= 1)
        torch._check(n <= x.numel())
        out = torch.zeros_like(x)
        scale_kernel[(triton.cdiv(n, 16),)](x, out, n, BLOCK=16)
        return out


def example_inputs():
    return (torch.randn(64), torch.tensor(40))
