"""A Triton kernel that writes into its input (``x += w``), launched twice.

What tritoninspect should report: ``add_inplace_kernel`` as a ``hop`` entry in a
single graph, with 0 graph breaks. Mutation analysis finds the kernel writes
``x_ptr``, so torch.compile's functional graph clones ``x_ptr`` for both
launches (``tensors_to_clone`` ``x_ptr``). Inductor's re-inplacing then removes
the clone of the first launch, which updates the whole input ``x`` in place,
but not of the second, which writes a view of the input (``x[:32]``): that one
is cloned before the launch and copied back into ``x`` after it (two copies in
the output code, ``--show fusion``).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_inplace_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x + y, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x, w):
        n = x.numel()
        add_inplace_kernel[(triton.cdiv(n, 16),)](x, w, n, BLOCK=16)
        head = x[: n // 2]
        add_inplace_kernel[(triton.cdiv(n // 2, 16),)](head, w, n // 2, BLOCK=16)
        return x * 2


def example_inputs():
    return torch.randn(64), torch.randn(64)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
