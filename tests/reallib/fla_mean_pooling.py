"""flash-linear-attention's chunked mean pooling (``fla.ops.utils.pooling.mean_pooling``), forward and backward.

``mean_pooling`` calls ``MeanPoolingFunction.apply``; its forward and backward launch
``mean_pooling_fwd_kernel`` / ``mean_pooling_bwd_kernel``, each ``@triton.heuristics``
(``IS_VARLEN``) over ``@triton.autotune`` (16 configs over ``BD`` and ``num_warps``, key ``BT``)
over ``@triton.jit(do_not_specialize=["T"])``, with a grid lambda over ``meta["BD"]``. No fla
backend dispatch (``fla.backends.dispatch``) sits in front of it.

The kernels call a nested ``@triton.jit`` helper (``fla.ops.utils.op.unflatten_program_id``), and
``example_inputs()`` makes two calls (16 then 24 tokens), so the second compiles again after the
first has run.

What tritoninspect should report: ``mean_pooling_fwd_kernel`` as ``hop`` (forward graphs) and
``mean_pooling_bwd_kernel`` as ``hop`` (backward graphs), both in ``fla/ops/utils/pooling.py``,
with decorators ``@heuristics @autotune @jit``, heuristic ``IS_VARLEN``, 16 autotune configs, in
both compiles (0/0, then 0/1 after 1 recompile); 0 graph breaks, backward compiled; torch's
mutation analysis finds the stores in both compiles (``tensors_to_clone`` ``o`` / ``dx``, no
fallback). fla probes the device at import (``fla/utils/hardware.py``), so the import itself must
work in compile-only mode.
"""
import torch

from fla.ops.utils.pooling import mean_pooling


class Net(torch.nn.Module):
    def forward(self, x):
        # x: [B, T, H, D]; chunks of 4 tokens -> [B, T / 4, H, D]
        return mean_pooling(torch.sin(x), chunk_size=4) * 2


def example_inputs():
    return [(torch.randn(2, 16, 2, 32, requires_grad=True),), (torch.randn(2, 24, 2, 32, requires_grad=True),)]
