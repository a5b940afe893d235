"""Timing torch's mutation analysis of user kernels (which tensors a kernel writes).

torch/_higher_order_ops/triton_kernel_wrap.py `identify_accessed_tensors(kernel, kwargs, tma)`
(torch 2.13-2.14; `identify_mutated_tensors` in 2.11, see compat/dynamo.py) generates the kernel's
TTIR and walks it. It runs twice per launch during functionalization and once in Inductor's
`UserDefinedTritonKernel.__init__` (notes: pitfall 1), each time from scratch:
https://github.com/pytorch/pytorch/pull/193227 (open at last reading) proposes working it out once
at trace time, and puts the cost near 90 ms a model. Its callers look the function up in that module
when they call it (ir.py imports it inside `__init__`), so the module attribute is what is wrapped;
any torch module that bound the same function by name is patched too.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

_NAMES = ("identify_accessed_tensors", "identify_mutated_tensors")


def timing_patches(on_done: Callable[[Any, float], None]) -> list[tuple[Any, str, Any]]:
    """(module, attribute, wrapper) triples: each run of the analysis calls `on_done(kernel, seconds)`
    once it returns (a run that falls back returns too: torch catches the error and logs it)."""
    from torch._higher_order_ops import triton_kernel_wrap as tkw

    patches = []
    for name in _NAMES:
        original = getattr(tkw, name, None)
        if original is None:
            continue
        wrapper = _timed(original, on_done)
        modules = [m for key, m in list(sys.modules.items()) if key.startswith("torch.") and m is not None]
        # Each module's own dict, not getattr: a module-level __getattr__ builds what it is asked for (torch
        # 2.14's torch.utils.mkldnn made its classes, with a FutureWarning for torch.jit.script_method).
        patches += [(m, name, wrapper) for m in modules if getattr(m, "__dict__", {}).get(name) is original]
    return patches


def _timed(original: Any, on_done: Callable[[Any, float], None]) -> Any:
    def analysis(kernel: Any, *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(kernel, *args, **kwargs)
        finally:
            on_done(kernel, time.perf_counter() - start)

    return analysis
