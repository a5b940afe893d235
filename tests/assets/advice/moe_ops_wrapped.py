"""moe_ops_layer.py with the library advice applied to one op: the user registers an op of their own with
``torch.library.triton_op`` that launches moe-ops' ``_unpermute_kernel`` through ``wrap_triton``, and calls it
instead of ``moe_ops.unpermute``. ``_unpermute_kernel`` becomes a ``triton_op`` kernel launched in Inductor's
code; the other three stay inside moe-ops' custom ops; the same values."""
import torch
from moe_ops import fused_topk_softmax, permute
from moe_ops.unpermute_ops import _unpermute_kernel
from torch.library import triton_op, wrap_triton

E, K = 8, 2


@triton_op("advice_moe::unpermute", mutates_args=())
def unpermute(permuted: torch.Tensor, row_id_map: torch.Tensor, prob: torch.Tensor, num_tokens: int,
              num_topk: int) -> torch.Tensor:
    out = torch.empty(num_tokens, permuted.shape[1], device=permuted.device, dtype=permuted.dtype)
    wrap_triton(_unpermute_kernel)[(num_tokens,)](
        permuted, row_id_map, prob, out, num_tokens, permuted.shape[1], num_topk,
        permuted.stride(0), permuted.stride(1), prob.stride(0), prob.stride(1), out.stride(0), out.stride(1),
    )
    return out


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.router = torch.nn.Linear(32, E).requires_grad_(False)
        self.w = torch.nn.Parameter(torch.randn(32, 32) * 0.1, requires_grad=False)

    def forward(self, x):
        weights, indices = fused_topk_softmax(self.router(x), K)
        permuted, row_id_map, offsets = permute(x, indices.to(torch.int32), E=E)
        h = torch.relu(permuted @ self.w)
        return unpermute(h, row_id_map, weights, x.shape[0], K)


def example_inputs():
    torch.manual_seed(0)
    return (torch.randn(16, 32),)
