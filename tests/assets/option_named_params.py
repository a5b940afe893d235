"""Target asset: a kernel whose parameters are named like Triton's launch options (`num_warps`,
`num_stages`, as triformer 3.0.7's kernels have) and that takes a Python `bool` (`causal`, as
triformer's softmax passes `False`). Triton binds a launch keyword to the parameter of that
name; the compile check clashed with it ("warmup() got multiple values for keyword argument
'num_warps'"), and Triton 3.7's interpreter rejected the bool ("numpy data itemsize (32 bits)
exceeds dtype primitive_bitwidth (1 bits) for triton type int1"). Expected: one `hop` kernel,
compiled for the target, run in the interpreter with the right values, no compile warning and
no interpreter skip."""

import torch
import triton
import triton.language as tl


@triton.jit
def masked_scale_kernel(x_ptr, out_ptr, n, causal, BLOCK: tl.constexpr, num_warps: tl.constexpr,
                        num_stages: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if causal:
        x = tl.where(offs < n // 2, x, 0.0)
    tl.store(out_ptr + offs, x * (num_warps + num_stages), mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        masked_scale_kernel[(triton.cdiv(n, 32),)](x, out, n, False, BLOCK=32, num_warps=4, num_stages=3)
        return out.cos()


def example_inputs():
    return (torch.randn(100),)


def reference(x: torch.Tensor) -> torch.Tensor:
    """What Net computes (the kernel multiplies by num_warps + num_stages = 7; causal is False)."""
    return (x * 7).cos()
