"""``num_ctas`` passed at the call site: the whole ``forward`` falls back to eager.

Dynamo accepts ``num_warps``/``num_stages`` at a launch but not ``num_ctas``,
which belongs in a ``triton.Config``. Unable to trace or resume inside the
launch expression, Dynamo gives up on ``forward`` altogether.

What tritoninspect should report: 0 Dynamo graphs; graph breaks at the
``add_kernel[grid](...)`` line: "Passing num_ctas directly to the Triton kernel
is not supported" (GB0361), then "frame skipped" for ``forward`` (the
follow-on reconstruction failure, GB0092), then the launch wrapper in triton's
``jit.py`` (library frame). ``add_kernel`` is ``eager`` only, tied to those
breaks, with the hint to move ``num_ctas`` into a ``triton.Config``.
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
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, 16),)](x, y, out, n, BLOCK=16, num_ctas=1)
        return out * 2


def example_inputs():
    return torch.randn(64), torch.randn(64)


if __name__ == "__main__":
    torch.manual_seed(0)
    print(f"checksum: {Net()(*example_inputs()).sum().item():.6f}")
