"""Triton kernels launched from both passes of a ``torch.autograd.Function``.

What tritoninspect should report: ``mul_kernel`` as a ``hop`` entry in the
forward graph, and ``mul_kernel`` again as a ``hop`` entry in the backward
graph (AOTAutograd traces the backward too), with 0 graph breaks.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def mul_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * b, mask=mask)


def _mul(a, b):
    out = torch.empty_like(a)
    n = out.numel()
    mul_kernel[(triton.cdiv(n, 16),)](a, b, out, n, BLOCK=16)
    return out


class TritonMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return _mul(x, w)

    @staticmethod
    def backward(ctx, grad_out):
        x, w = ctx.saved_tensors
        # d(x*w)/dx = w, d(x*w)/dw = x
        return _mul(grad_out, w), _mul(grad_out, x)


class Net(torch.nn.Module):
    def forward(self, x, w):
        return TritonMul.apply(x, w).tanh()


def example_inputs():
    return torch.randn(64, requires_grad=True), torch.randn(64, requires_grad=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    x, w = example_inputs()
    out = Net()(x, w)
    out.sum().backward()
    print(f"checksum: {out.sum().item():.6f} grad: {(x.grad.sum() + w.grad.sum()).item():.6f}")
