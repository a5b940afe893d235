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
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        tail = x[256:]
        add_one_kernel[(triton.cdiv(tail.numel(), 256),)](tail, tail.numel(), BLOCK=256)
        h = x * 2
        add_one_kernel[(triton.cdiv(h.numel(), 256),)](h, h.numel(), BLOCK=256)
        return h


def example_inputs():
    return (torch.randn(1024),)
