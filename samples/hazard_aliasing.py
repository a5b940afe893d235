"""One tensor passed as two pointer arguments of a kernel that writes both (issue 24, finding 3).

``scale_then_shift_kernel`` doubles ``scaled_ptr`` in place, then adds 1 to ``shifted_ptr`` in
place; ``Net`` passes the same tensor ``h`` for both, so eager Triton computes ``h * 2 + 1``.
Functionalization clones each written argument on its own: compiled, the kernel writes the
doubling into one buffer and the shift into another, and ``h`` comes back as ``h + 1``
(pytorch/pytorch#196657).

What tritoninspect should report: ``scale_then_shift_kernel`` as ``hop``, 0 graph breaks, and an
``aliased_args_split`` error: ``scaled_ptr`` and ``shifted_ptr`` one tensor in what eager passes,
both written (``tensors_to_clone``), ``shifted_ptr`` cloned apart in the final graph, and the
compiled launch passing two storages. The compiled result differs from eager (also in compile-only
mode, where the interpreter runs the kernel).

``OnePointerNet`` follows the finding's action: a kernel with one pointer parameter for that
tensor, which torch cannot split; compiled equals eager.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_then_shift_kernel(scaled_ptr, shifted_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(scaled_ptr + offs, tl.load(scaled_ptr + offs, mask=mask) * 2, mask=mask)
    tl.store(shifted_ptr + offs, tl.load(shifted_ptr + offs, mask=mask) + 1, mask=mask)


@triton.jit
def scale_then_shift_one_kernel(h_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(h_ptr + offs, tl.load(h_ptr + offs, mask=mask) * 2, mask=mask)
    tl.store(h_ptr + offs, tl.load(h_ptr + offs, mask=mask) + 1, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        h = torch.sin(x)
        n = h.numel()
        scale_then_shift_kernel[(triton.cdiv(n, 256),)](h, h, n, BLOCK=256)
        return h


class OnePointerNet(torch.nn.Module):
    def forward(self, x):
        h = torch.sin(x)
        n = h.numel()
        scale_then_shift_one_kernel[(triton.cdiv(n, 256),)](h, n, BLOCK=256)
        return h


def example_inputs():
    return (torch.randn(1024),)
