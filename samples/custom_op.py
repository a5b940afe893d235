"""A Triton kernel hidden inside an opaque ``torch.library.custom_op``.

What tritoninspect should report: ``add_kernel`` as a ``custom_op`` entry
(``tisample_custom_op::add``: the compiler only sees the op, never the launch,
so it cannot fuse into or around it), with 0 graph breaks. Same kernel and
neighbours as ``add_raw.py``: sin -> op -> cos * 2.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@torch.library.custom_op("tisample_custom_op::add", mutates_args=())
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    add_kernel[(triton.cdiv(n, 16),)](x, y, out, n, BLOCK=16)
    return out


@add.register_fake
def _(x, y):
    return torch.empty_like(x)


class Net(torch.nn.Module):
    def forward(self, x, w):
        return torch.cos(add(torch.sin(x), w)) * 2


def example_inputs():
    return torch.randn(64), torch.randn(64)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
