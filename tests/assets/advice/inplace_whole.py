"""samples/inplace.py with ``clone_input_view``'s action applied: the second launch gets the input ``x``
itself, not the view ``x[: n // 2]`` (which starts at offset 0, so the kernel's mask ``n // 2`` selects
the same part). Re-inplacing then writes ``x`` in place: no clone, no copy back, the same values."""
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
        # The advice, applied: the input itself, not the view x[: n // 2]; the mask (n // 2) selects the part.
        add_inplace_kernel[(triton.cdiv(n // 2, 16),)](x, w, n // 2, BLOCK=16)
        return x * 2


def example_inputs():
    return torch.randn(64), torch.randn(64)
