"""A Triton kernel wrapped in ``torch.library.triton_op`` + ``wrap_triton``.

What tritoninspect should report: ``add_kernel`` as a ``triton_op`` entry under
the op ``tisample_triton_op::add`` (Inductor sees through the op and traces the
launch inside it), with 0 graph breaks. Same kernel and neighbours as
``add_raw.py``: sin -> op -> cos * 2.
"""
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


# triton_op supplies the fake (meta) implementation itself by tracing the body.
@triton_op("tisample_triton_op::add", mutates_args={})
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    wrap_triton(add_kernel)[(triton.cdiv(n, 16),)](x, y, out, n, BLOCK=16)
    return out


class Net(torch.nn.Module):
    def forward(self, x, w):
        return torch.cos(add(torch.sin(x), w)) * 2


def example_inputs():
    return torch.randn(64), torch.randn(64)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
