"""Target asset: kernels chosen by the tensor's device, as torchnorm 0.1.2's RMSNorm chooses (`if
_TRITON and x.is_cuda:`). `forward` asks `x.device.type == "cuda"` while Dynamo traces it
(TRACED-PROBE); the custom op `tiprobe::double` asks `x.is_cuda` when it runs, eagerly
(EAGER-PROBE). In compile-only mode every tensor is a CPU tensor, so both take their PyTorch path
and no kernel launches, where a GPU run launches `double_kernel` twice. tritoninspect must say why
the report has no kernel: each probe with its file:line, and `device=x.device` (NOT-A-PROBE) is
not one."""

import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)


def _double(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)  # NOT-A-PROBE
    double_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


@torch.library.custom_op("tiprobe::double", mutates_args=())
def double(x: torch.Tensor) -> torch.Tensor:
    if x.is_cuda:  # EAGER-PROBE
        return _double(x)
    return x * 2


@double.register_fake
def _(x):
    return torch.empty_like(x)


class Net(torch.nn.Module):
    def forward(self, x):
        y = torch.sin(x)
        if y.device.type == "cuda":  # TRACED-PROBE
            y = _double(y)
        else:
            y = y * 2
        return double(y).cos()


def example_inputs():
    return (torch.randn(100),)
