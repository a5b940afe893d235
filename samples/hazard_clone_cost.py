"""What torch.compile's copies around a kernel cost, and why each stays (issue 24, finding 5).

``add_one_kernel`` adds 1 in place. ``Net`` launches it on ``x[256:]``, a view of the input ``x``
(1024 floats), then on ``h = x * 2``, a fresh tensor. Functionalization clones both; re-inplacing
removes the clone of ``h`` (nothing reads it after) but never that of a view of a graph input:
that clone copies ``x`` from its start to the end of the view, 1024 floats (4096 bytes), for a
768-float view, and the result is copied back into ``x``.

What tritoninspect should report: ``add_one_kernel`` as ``hop``, 0 graph breaks, and a
``clone_cost`` warning for compile 0/0: 4.0 KB of copies per call, ``x_ptr`` of the first launch,
"a view of a graph input"; the second launch costs nothing; and the time torch's mutation analysis
took for the kernel (it runs several times per launch).

``FreshNet`` follows the finding's action (an output pointer of its own): ``add_one_into_kernel`` reads
the view and writes a fresh tensor (``torch.empty_like``) nothing else reads, then copied into the slice. The
result is Net's; ``clone_cost`` for ``add_one_into_kernel`` is a note: no copies (the copy into the
slice is the model's own, 3 KB, not a copy of the input from its start and back).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


@triton.jit
def add_one_into_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        tail = x[256:]
        add_one_kernel[(triton.cdiv(tail.numel(), 256),)](tail, tail.numel(), BLOCK=256)
        h = x * 2
        add_one_kernel[(triton.cdiv(h.numel(), 256),)](h, h.numel(), BLOCK=256)
        return h


class FreshNet(torch.nn.Module):
    def forward(self, x):
        tail = x[256:]
        out = torch.empty_like(tail)
        add_one_into_kernel[(triton.cdiv(tail.numel(), 256),)](tail, out, tail.numel(), BLOCK=256)
        tail.copy_(out)
        h = x * 2
        add_one_kernel[(triton.cdiv(h.numel(), 256),)](h, h.numel(), BLOCK=256)
        return h


def example_inputs():
    return (torch.randn(1024),)
