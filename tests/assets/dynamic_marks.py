"""Example inputs that carry Dynamo's dynamic-shape marks (issue 22, item 1).

Each model launches `add_kernel` over `n = x.numel()` with a grid of `cdiv(n, 16)`. The marks are
set inside `example_inputs()`; the tool copies the inputs to the device, and the compile must
still see them: a symbolic `n` and grid (`s…` for mark_dynamic / maybe_mark_dynamic, `u…` for
mark_unbacked) where unmarked inputs give `n=40` and a grid of (3, 1, 1).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


class _Add(torch.nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = x.numel()
        add_kernel[(triton.cdiv(n, 16),)](x, y, out, n, BLOCK=16)
        return out.sin()


def _pair(size: int = 40) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(size), torch.randn(size)


class Marked(_Add):
    """mark_dynamic on both inputs: one compile with a symbolic size."""

    @staticmethod
    def example_inputs():
        x, y = _pair()
        torch._dynamo.mark_dynamic(x, 0)
        torch._dynamo.mark_dynamic(y, 0)
        return (x, y)


class MaybeMarked(_Add):
    """maybe_mark_dynamic: dynamic unless something specialises it."""

    @staticmethod
    def example_inputs():
        x, y = _pair()
        torch._dynamo.maybe_mark_dynamic(x, 0)
        torch._dynamo.maybe_mark_dynamic(y, 0)
        return (x, y)


class Unbacked(_Add):
    """mark_unbacked: the size is an unbacked symbol (u…)."""

    @staticmethod
    def example_inputs():
        x, y = _pair()
        torch._dynamo.decorators.mark_unbacked(x, 0)
        torch._dynamo.decorators.mark_unbacked(y, 0)
        return (x, y)


class PerCall(_Add):
    """Two calls, each input set marked: one compile (the second call fits its guards)."""

    @staticmethod
    def example_inputs():
        calls = []
        for size in (40, 72):
            x, y = _pair(size)
            torch._dynamo.mark_dynamic(x, 0)
            torch._dynamo.mark_dynamic(y, 0)
            calls.append((x, y))
        return calls


class Aliased(_Add):
    """One marked tensor passed twice: still one tensor, still marked."""

    @staticmethod
    def example_inputs():
        x = torch.randn(40)
        torch._dynamo.mark_dynamic(x, 0)
        return (x, x)
