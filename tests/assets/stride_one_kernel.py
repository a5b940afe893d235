"""Target asset for tests/test_interpreter_launch.py: a row-normalising kernel shaped like
Liger's RMSNorm (tests/reallib/liger_rms_norm.py), launched raw from `forward`.

The weight's stride is 1 at the call site, so Inductor specialises it like Triton does an int
equal to 1 ('constexpr' in triton_meta["signature"], 1 in triton_meta["constants"]) and still
passes it positionally; `eps` is a Python float after it.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _scale_rows_kernel(Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, W_stride, n_cols, eps,
                       BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X_ptr + row * X_row_stride + cols, mask=mask, other=0.0)
    w = tl.load(W_ptr + cols * W_stride, mask=mask, other=0.0)
    mean_square = tl.sum(x * x, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(mean_square + eps)
    tl.store(Y_ptr + row * Y_row_stride + cols, x * rstd * w, mask=mask)


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, 48), requires_grad=False)

    def forward(self, x):
        x = torch.sin(x)
        y = torch.empty_like(x)
        rows, cols = x.shape
        _scale_rows_kernel[(rows,)](y, y.stride(0), x, x.stride(0), self.weight, self.weight.stride(0), cols, 1e-6,
                                    BLOCK=64)
        return y * 2


def reference(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """What Net computes, in plain torch."""
    x = torch.sin(x)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight * 2


def example_inputs():
    return (torch.randn(6, 48),)
