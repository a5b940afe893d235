"""Target asset for tests/test_fusion.py: an opaque custom op whose name looks like two ATen ops.

`tiasset::softmax_cop` is called on `(x + w) * 2`. Inductor computes the add and the mul in one
kernel and, lowering the op, counts the op among that kernel's origins: on CPU the kernel is named
`cpp_fused_add_mul_softmax_cop_0`. Only add and mul run in it; softmax_cop is an extern call.
"""

import torch


@torch.library.custom_op("tiasset::softmax_cop", mutates_args=())
def softmax_cop(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


@softmax_cop.register_fake
def _(x):
    return torch.empty_like(x)


class Net(torch.nn.Module):
    def forward(self, x, w):
        return softmax_cop((x + w) * 2).sin()


def example_inputs():
    return torch.randn(64), torch.randn(64)
