"""A kernel writing slices of a buffer, chunk by chunk, and skipping some rows (issue 24, finding 4).

The pattern of Liger-Kernel's fused linear cross entropy: ``loss = torch.zeros(rows)``, then per
chunk ``row_loss_kernel`` writes ``loss[start:start + CHUNK]`` and returns early for rows whose
target is ``ignore_index`` (those keep their 0). Each slice is a written view at a storage offset,
so torch clones it with ``clone_preserve_strides`` (a copy of ``loss`` from its start to the end
of the slice); Inductor lowers that copy against the slice's own 16-element buffer and reads past
it (pytorch issues 192219 / 192226): the skipped rows of chunks 2 to 4 come back as whatever
memory followed.

What tritoninspect should report: ``row_loss_kernel`` as ``hop``, 0 graph breaks, a
``view_clone_overread`` error (launches 2, 3 and 4 of 4: Inductor's lowering needs 32, 48, 64
elements of a 16-element buffer), and a ``clone_cost`` warning (the copies: 64 + 128 + 192 + 256
bytes per call, each "a view, read after the launch"). Compiled differs from eager at ignored rows
of chunks 2-4 (on torch 2.13 in compile-only mode too).

``BaseOffsetNet`` follows the finding's action: the kernel gets the whole ``loss`` and the chunk's
start as an argument, so torch copies no view; compiled equals eager.
"""
import torch
import triton
import triton.language as tl

CHUNK = 16


@triton.jit
def row_loss_kernel(x_ptr, target_ptr, loss_ptr, n_cols, ignore_index, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    target = tl.load(target_ptr + row)
    if target == ignore_index:
        return
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(loss_ptr + row, tl.sum(x * x, axis=0) + target.to(tl.float32))


@triton.jit
def row_loss_offset_kernel(x_ptr, target_ptr, loss_ptr, start, n_cols, ignore_index, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    target = tl.load(target_ptr + row)
    if target == ignore_index:
        return
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(loss_ptr + start + row, tl.sum(x * x, axis=0) + target.to(tl.float32))


class Net(torch.nn.Module):
    def forward(self, x, target):
        rows, cols = x.shape
        loss = torch.zeros(rows, device=x.device)
        for start in range(0, rows, CHUNK):
            end = start + CHUNK
            row_loss_kernel[(CHUNK,)](x[start:end], target[start:end], loss[start:end], cols, -100, BLOCK=32)
        return loss


class BaseOffsetNet(torch.nn.Module):
    def forward(self, x, target):
        rows, cols = x.shape
        loss = torch.zeros(rows, device=x.device)
        for start in range(0, rows, CHUNK):
            end = start + CHUNK
            row_loss_offset_kernel[(CHUNK,)](x[start:end], target[start:end], loss, start, cols, -100, BLOCK=32)
        return loss


def example_inputs():
    x = torch.randn(64, 32)
    target = torch.arange(64)
    target[::3] = -100
    return x, target
