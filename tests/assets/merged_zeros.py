"""Target asset for tests/test_hazards_e2e.py: two separate `torch.zeros` of one shape passed as two
pointers of a kernel that writes both (Liger-Kernel's group_norm passes Mean and RSTD so).
AOTAutograd's common-subexpression elimination makes them one tensor; functionalization then clones
one, which keeps them apart as eager does. Not aliased_args_split: the user's tensors are separate."""

import torch
import triton
import triton.language as tl


@triton.jit
def _mean_rstd_kernel(x_ptr, mean_ptr, rstd_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    mean = tl.sum(x, axis=0) / n
    var = tl.sum((x - mean) * (x - mean), axis=0) / n
    tl.store(mean_ptr, mean)
    tl.store(rstd_ptr, 1 / tl.sqrt(var + 1e-5))


class Net(torch.nn.Module):
    def forward(self, x):
        mean = torch.zeros(1, dtype=x.dtype, device=x.device)
        rstd = torch.zeros(1, dtype=x.dtype, device=x.device)
        _mean_rstd_kernel[(1,)](x, mean, rstd, x.numel(), BLOCK=triton.next_power_of_2(x.numel()))
        return mean, rstd, x * 2  # an output needing grad: the training graph, where AOTAutograd's CSE runs


def example_inputs():
    return (torch.randn(100),)
