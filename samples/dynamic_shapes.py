"""A raw launch whose size and grid are runtime values, run at two sizes.

``n`` is an ordinary (non-constexpr) kernel argument and the grid is a lambda
over it, so under dynamic shapes both become symbolic. ``example_inputs()``
returns a list of two input tuples (64 and 96 elements); the tool runs the
model once per tuple. The first call compiles static (n=64); the size change
makes the second call recompile with a symbolic ``n`` and grid. With
``--dynamic`` the model is compiled dynamic from the start, so there is one
compile.

What tritoninspect should report: ``relu_add_kernel`` as a ``hop`` entry in
each compile (two compiles by default, one with ``--dynamic``), with 0 graph
breaks.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def relu_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + y, 0.0), mask=mask)


class Net(torch.nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        relu_add_kernel[grid](x, y, out, n, BLOCK=32)
        return out * 3


def example_inputs():
    return [
        (torch.randn(64), torch.randn(64)),
        (torch.randn(96), torch.randn(96)),
    ]


if __name__ == "__main__":
    torch.manual_seed(0)
    net = Net()
    for inputs in example_inputs():
        print(f"n={inputs[0].numel()} checksum: {net(*inputs).sum().item():.6f}")
