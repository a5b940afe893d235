"""Epilogue fusion into a user kernel (torch 2.12+, off by default): which neighbours Inductor fuses in.

The sample turns the fusion on (``torch._inductor.config.epilogue_fusion_user_defined_triton_kernel``).
What tritoninspect should report (the "Epilogue fusion into user kernels" section, ``Report.epilogues``):

- ``Net``: ``add_kernel`` writes one fresh ``torch.empty_like`` with a single ``tl.store``; the ``relu``
  after it is a candidate epilogue. On a GPU with torch 2.12+ Inductor fuses it into the kernel; in
  compile-only mode the C++ backend refuses it (it never fuses into a Triton kernel), said as such.
- ``TwoStoresNet``: ``add_two_kernel`` stores twice: Inductor's check refuses any epilogue ("it has 2
  tl.store calls"), and the ``relu`` stays an Inductor kernel of its own.

On torch 2.11 (the H200 machine) the report says the fusion is not available on that torch.
"""
import torch
import torch._inductor.config
import triton
import triton.language as tl

# The option came with the fusion (torch 2.12+): older torch has neither.
if hasattr(torch._inductor.config, "epilogue_fusion_user_defined_triton_kernel"):
    torch._inductor.config.epilogue_fusion_user_defined_triton_kernel = True


@triton.jit
def add_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


@triton.jit
def add_two_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a, mask=mask)
    tl.store(out_ptr + offs, a + tl.load(b_ptr + offs, mask=mask), mask=mask)


class Net(torch.nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        add_kernel[(triton.cdiv(a.numel(), 64),)](a, b, out, a.numel(), BLOCK=64)
        return out.relu()


class TwoStoresNet(torch.nn.Module):
    def forward(self, a, b):
        out = torch.empty_like(a)
        add_two_kernel[(triton.cdiv(a.numel(), 64),)](a, b, out, a.numel(), BLOCK=64)
        return out.relu()


def example_inputs():
    return (torch.randn(256), torch.randn(256))


if __name__ == "__main__":
    torch.manual_seed(0)
    for cls in (Net, TwoStoresNet):
        print(f"{cls.__name__} checksum: {cls()(*example_inputs()).sum().item():.6f}")
