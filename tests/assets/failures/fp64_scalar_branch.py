"""A float scalar cast under a runtime `if` (hostile, stop 39). Inductor's signature types a Python float
`fp64`, and the cast redefines it as fp32 in a branch Triton cannot fold: on a GPU the compile fails
("initial value for `gate` is of type fp64[], but the then block redefines it as fp32[]"; triton.compile for
sm_90 with Inductor's signature gives it). An eager launch types the float fp32 and compiles (`Eager`)."""

import torch
import triton
import triton.language as tl


@triton.jit
def k_runtime(x_ptr, out_ptr, gate, n, flag, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if flag > 0:  # RUNTIME-IF
        gate = gate.to(tl.float32)
    tl.store(out_ptr + offs, x * gate, mask=mask)


def launch(x):
    out = torch.empty_like(x)
    k_runtime[(triton.cdiv(x.numel(), 256),)](x, out, 1.5, x.numel(), 2, BLOCK=256)
    return out


class Net(torch.nn.Module):
    def forward(self, x):
        return launch(x)


class Eager(torch.nn.Module):
    @torch.compiler.disable
    def forward(self, x):
        return launch(x)


def example_inputs():
    return (torch.randn(1024),)
