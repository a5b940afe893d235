"""samples/break_item_grid.py with the ``.item()`` hint applied (the value only sizes the grid and the
kernel's ``n``): ``torch._dynamo.config.capture_scalar_outputs = True``. One graph, no break, the same
values for the three counts."""
import torch
import triton
import triton.language as tl

torch._dynamo.config.capture_scalar_outputs = True  # the advice, applied


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x, y, count):
        out = torch.zeros_like(x)
        n = int(count.item())
        add_kernel[(triton.cdiv(n, 16),)](x, y, out, n, BLOCK=16)
        return out * 2


def example_inputs():
    return [(torch.randn(64), torch.randn(64), torch.tensor(c)) for c in (40, 50, 60)]
