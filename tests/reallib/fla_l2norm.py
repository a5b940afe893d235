"""flash-linear-attention's L2 normalisation (``fla.modules.l2norm.l2norm``), forward and backward.

``l2norm`` calls ``L2NormFunction.apply``; its forward calls ``l2norm_fwd`` and its backward
``l2norm_bwd``, both wrapped by fla's backend dispatcher (``@fla.backends.dispatch``), which returns
``torch.compiler.disable(wrapper)`` (fla/backends.py:202 in 0.6.0: "runtime backend selection must
stay outside torch.compile graphs"). They launch ``l2norm_fwd_kernel`` / ``l2norm_bwd_kernel``:
``@triton.jit(do_not_specialize=["T"])`` under fla's ``fla_cache_autotune`` (a ``CachedAutotuner``,
a subclass of Triton's ``Autotuner``, 25 configs over ``BT`` and ``num_warps``, key ``D``, ``NB``),
with a grid lambda over ``meta["BT"]`` (``D <= 512``).

What tritoninspect should report: ``l2norm_fwd_kernel`` and ``l2norm_bwd_kernel``
(``fla/modules/norm/l2norm.py``) as ``eager`` only; a graph break at the ``h = l2norm(h)`` line
("Skip calling `torch.compiler.disable()`d function", inside fla's ``L2NormFunction.forward``),
concerning ``l2norm_fwd_kernel`` (and its follow-on records for the frames Dynamo then compiles:
``l2norm`` and ``L2NormFunction.forward``); 3 compiled frames with graphs. fla probes the device at import (``fla/utils/hardware.py``), so the
import itself must work in compile-only mode.
"""
import torch

from fla.modules.l2norm import l2norm


class Net(torch.nn.Module):
    def forward(self, x):
        h = torch.sin(x)
        h = l2norm(h)
        return h * 2


def example_inputs():
    return (torch.randn(2, 8, 64, requires_grad=True),)
