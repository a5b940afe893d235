"""One Triton kernel three ways, in otherwise identical models: for `tritoninspect diff`.

``RawNet`` launches ``add_kernel`` directly, ``TritonOpNet`` through the
``torch.library.triton_op`` ``tisample_trio::add_triton_op`` (via ``wrap_triton``),
and ``CustomOpNet`` inside the opaque ``torch.library.custom_op``
``tisample_trio::add_custom_op``. Each computes ``cos(sin(x) + x) * 2``: the same
``sin`` before and ``cos * 2`` after the kernel, so the diffs show only what the
way of entry changes.

What tritoninspect should report, per model, with 0 graph breaks:
``add_kernel`` as ``hop`` (RawNet), ``triton_op`` (TritonOpNet) or ``custom_op``
(CustomOpNet, the op then listed as opaque). ``tritoninspect diff
samples/trio.py:RawNet samples/trio.py:CustomOpNet`` shows the kernel's entry
change, the opaque op call in place of the kernel launch in every graph after
Dynamo, and the output code differences; RawNet against TritonOpNet differs in
the Dynamo graph only (the triton_op is decomposed to the same kernel node).

``example_inputs()`` is one small tensor (64 elements) so compile-only runs on a
CPU stay fast. For GPU timings pass a size on the command line instead:
``tritoninspect diff samples/trio.py:RawNet samples/trio.py:CustomOpNet --bench
--inputs 4194304`` (2**22 float32 elements, 16 MiB per tensor).
"""
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

#: Elements per program: large enough for a GPU, one masked program for 64 elements.
BLOCK = 1024


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def _launch(launcher, x, y):
    out = torch.empty_like(x)
    n = out.numel()
    launcher[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)
    return out


# triton_op supplies the fake (meta) implementation itself by tracing the body.
@triton_op("tisample_trio::add_triton_op", mutates_args={})
def add_triton_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return _launch(wrap_triton(add_kernel), x, y)


@torch.library.custom_op("tisample_trio::add_custom_op", mutates_args=())
def add_custom_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return _launch(add_kernel, x, y)


@add_custom_op.register_fake
def _(x, y):
    return torch.empty_like(x)


class RawNet(torch.nn.Module):
    def forward(self, x):
        return torch.cos(_launch(add_kernel, torch.sin(x), x)) * 2


class TritonOpNet(torch.nn.Module):
    def forward(self, x):
        return torch.cos(add_triton_op(torch.sin(x), x)) * 2


class CustomOpNet(torch.nn.Module):
    def forward(self, x):
        return torch.cos(add_custom_op(torch.sin(x), x)) * 2


def example_inputs():
    return (torch.randn(64),)


if __name__ == "__main__":
    torch.manual_seed(0)
    (x,) = example_inputs()
    for net in (RawNet(), TritonOpNet(), CustomOpNet()):
        print(f"{type(net).__name__}: checksum {net(x).sum().item():.6f}")
