"""Target asset: asks torch.cuda about the device at import and in forward, as kernel libraries do.

On a CPU build of torch these calls raise ("Torch not compiled with CUDA enabled"); compile-only
mode answers them for its emulated GPU and lists them in a note. In forward, Dynamo traces the
queries as it does on a GPU: `get_device_capability` and `get_device_properties` fold into
constants, `get_device_name` breaks the graph ("torch.* op returned non-Tensor", GB0208).
"""

import torch
import triton
import triton.language as tl

MAJOR, MINOR = torch.cuda.get_device_capability()  # IMPORT-CAPABILITY
NAME = torch.cuda.get_device_name(0)  # IMPORT-NAME
ON_HOPPER = MAJOR >= 9 and "H100" in NAME


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * factor, mask=mask)


class Net(torch.nn.Module):
    def forward(self, x):
        sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count  # FORWARD-PROPS
        block = 16 if torch.cuda.get_device_capability()[0] >= 9 else 32  # FORWARD-CAPABILITY
        out = torch.empty_like(x)
        scale_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), float(sms), BLOCK=block)
        name = torch.cuda.get_device_name()  # FORWARD-NAME
        return out + len(name)


def example_inputs():
    return (torch.randn(64),)
