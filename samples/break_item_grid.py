"""A kernel grid computed from ``Tensor.item()``: a graph break, then a recompile.

``count`` is a 0-d tensor holding how many elements to process; ``.item()``
reads it to size the grid and the kernel's ``n``. ``example_inputs()`` returns
three calls with counts 40, 50 and 60.

What tritoninspect should report: 1 graph break at the ``.item()`` line,
"Unsupported Tensor.item() call with capture_scalar_outputs=False" (GB0124),
concerning ``add_kernel`` (launched on the next line), with the
``capture_scalar_outputs`` hint. ``add_kernel`` is a ``hop`` entry in the graph
of the resume function (compile ids 1/0 and 1/1). 1 recompile (1/1): the
resume function was specialised to the first count (guard ``== 40``); in the
new compile the kernel's scalar ``n`` and its grid are symbolic. The third
call reuses it.
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


class Net(torch.nn.Module):
    def forward(self, x, y, count):
        out = torch.zeros_like(x)
        n = int(count.item())
        add_kernel[(triton.cdiv(n, 16),)](x, y, out, n, BLOCK=16)
        return out * 2


def example_inputs():
    return [(torch.randn(64), torch.randn(64), torch.tensor(c)) for c in (40, 50, 60)]


if __name__ == "__main__":
    torch.manual_seed(0)
    net = Net()
    for inputs in example_inputs():
        print(f"count={inputs[2].item()} checksum: {net(*inputs).sum().item():.6f}")
