"""A small MoE layer on moe-ops 0.1.0 (``pip install --no-deps moe-ops==0.1.0``), forward only.

moe-ops registers its launchers as ``torch.library.custom_op``s in its own package: ``tg::fused_topk_softmax_fwd``
(``_fused_topk_softmax_fwd_kernel_2d``), ``tg::permute_countsort`` (``_group_offsets_kernel`` and
``_permute_countsort_kernel``) and ``tg::unpermute_forward`` (``_unpermute_kernel``): four kernels, each
``custom_op`` (opaque), none of them the user's code.

What the advice should say: one finding for the four (one cause: the library's custom ops hide its kernels from
Inductor), naming moe-ops as installed library code, with the user-side options (wrap a kernel in an op of
your own with triton_op, or ask upstream) and no path of tritoninspect's repository. The default view fits 45
lines at 120 columns.
"""
import torch

from moe_ops import fused_topk_softmax, permute, unpermute

E, K = 8, 2


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.router = torch.nn.Linear(32, E).requires_grad_(False)
        self.w = torch.nn.Parameter(torch.randn(32, 32) * 0.1, requires_grad=False)

    def forward(self, x):
        weights, indices = fused_topk_softmax(self.router(x), K)
        permuted, row_id_map, offsets = permute(x, indices.to(torch.int32), E=E)
        h = torch.relu(permuted @ self.w)
        return unpermute(h, row_id_map, weights, num_tokens=x.shape[0], num_topK=K)


def example_inputs():
    torch.manual_seed(0)
    return (torch.randn(16, 32),)
