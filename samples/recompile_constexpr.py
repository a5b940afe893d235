"""A ``tl.constexpr`` computed from the input size: one compile per size.

``BLOCK = triton.next_power_of_2(n)`` is a constexpr, and Triton specialises
constexprs, so torch must guard on its value. ``example_inputs()`` returns
three calls (40, 100 and 200 elements).

What tritoninspect should report: 0 graph breaks, 3 compiles of ``forward``
(0/0, 0/1, 0/2) and 2 recompiles. 0/1: the size guard failed (expected 40,
actual 100); the kernel's scalar ``n`` becomes symbolic (``n`` 40 -> s77, the
guarded value) and constexpr ``BLOCK`` 64 -> 128. 0/2: the guard on
``next_power_of_2(n) == 128`` failed; constexpr ``BLOCK`` 128 -> 256 is the
guarded value, with the hint about size-dependent constexprs.
``one_block_kernel`` is a ``hop`` entry in all three compiles.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def one_block_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        one_block_kernel[(1,)](x, out, n, BLOCK=triton.next_power_of_2(n))
        return out + 1


def example_inputs():
    return [(torch.randn(n),) for n in (40, 100, 200)]


if __name__ == "__main__":
    torch.manual_seed(0)
    net = Net()
    for (x,) in example_inputs():
        print(f"n={x.numel()} checksum: {net(x).sum().item():.6f}")
