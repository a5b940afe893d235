"""Triton kernel objects: from a side-table entry to the user's JITFunction, its source and decorators."""

from __future__ import annotations

import inspect
from typing import Any

from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction


def innermost_jit(kernel: Any) -> JITFunction | None:
    """Walk Autotuner -> [Heuristics] -> JITFunction. The JITFunction is the
    stable identity of a user kernel: Dynamo may store a synthesised Autotuner
    in the side table (triton_kernel_wrap.py, TritonHOPifier; torch 2.11-2.14).
    Call-site launch options became a new Autotuner's Config in
    https://github.com/pytorch/pytorch/pull/122280; the folding of @heuristics
    into configs: PR not found. `.fn` chains: triton 3.6-3.8."""
    seen = 0
    while not isinstance(kernel, JITFunction):
        kernel = getattr(kernel, "fn", None)
        seen += 1
        if kernel is None or seen > 8:
            return None
    return kernel


def kernel_id(jf: JITFunction) -> str:
    """A stable id for a user kernel: module.qualname."""
    fn = jf.fn
    return f"{fn.__module__}.{fn.__qualname__}"


def kernel_source(jf: JITFunction) -> tuple[str | None, int | None]:
    """(file, line) of the kernel's `def`, as Inductor prints in `# Original path:`."""
    try:
        _, line = inspect.getsourcelines(jf.fn)
        return inspect.getsourcefile(jf.fn), line
    except (OSError, TypeError):
        return None, None


def constexpr_params(jf: JITFunction) -> tuple[str, ...]:
    # JITFunction.params[i].is_constexpr (KernelParam), triton 3.6-3.8; PR not found.
    return tuple(p.name for p in jf.params if p.is_constexpr)


def user_kernel_object(jf: JITFunction) -> Any:
    """The outermost decorated object the user defined around `jf`.

    The side table loses the user's decorator stack (Heuristics folded into
    configs), so look in the kernel module's globals for the Autotuner /
    Heuristics that wraps this very JITFunction (`.fn` chains, triton 3.6-3.8).
    """
    candidates = [
        v
        for v in jf.fn.__globals__.values()
        if isinstance(v, (Autotuner, Heuristics)) and innermost_jit(v) is jf
    ]
    inner = {id(getattr(c, "fn", None)) for c in candidates}
    outer = [c for c in candidates if id(c) not in inner]
    return outer[0] if outer else jf


def decorator_stack(obj: Any) -> list[Any]:
    """The decorator layers from outermost to the JITFunction."""
    layers = []
    while obj is not None and len(layers) < 8:
        layers.append(obj)
        if isinstance(obj, JITFunction):
            break
        obj = getattr(obj, "fn", None)
    return layers


def layer_name(layer: Any) -> str:
    if isinstance(layer, Autotuner):
        return "autotune"
    if isinstance(layer, Heuristics):
        return "heuristics"
    if isinstance(layer, JITFunction):
        return "jit"
    return type(layer).__name__


def autotune_configs(layer: Autotuner) -> list[dict[str, Any]]:
    # Autotuner.configs / Config.all_kwargs(), triton 3.6-3.8; PR not found.
    return [dict(c.all_kwargs()) for c in layer.configs]


def autotune_key(layer: Autotuner) -> list[str]:
    # Autotuner.keys holds the `key=` argument names (triton/runtime/autotuner.py,
    # triton 3.6-3.8; PR not found).
    return list(getattr(layer, "keys", []) or [])


def autotune_cache_results(layer: Autotuner) -> bool:
    """Whether the Autotuner keeps its tuning in Triton's disk cache: `Autotuner.cache_results`, the
    `cache_results=` argument or `knobs.autotuning.cache` (TRITON_CACHE_AUTOTUNING=1), False under the
    interpreter (triton/runtime/autotuner.py, triton 3.6-3.8; PR not found)."""
    return bool(getattr(layer, "cache_results", False))


def heuristic_names(layer: Heuristics) -> list[str]:
    # Heuristics.values (name -> function), triton 3.6-3.8; PR not found.
    return list(layer.values)


def kernel_text(jf: JITFunction) -> str:
    """The kernel's source as Triton parsed it (`JITFunction.src`, the `def` without decorators;
    triton 3.6-3.8); "" when there is none."""
    return str(getattr(jf, "src", "") or "")


def called_jit_source(jf: JITFunction, name: str) -> str | None:
    """The source of the `@triton.jit` function a kernel calls by `name` (looked up in the kernel
    module's globals, as Triton's code generator resolves it: triton/compiler/code_generator.py,
    triton 3.6-3.8); None for anything else (tl.*, builtins, unknown names)."""
    value = jf.fn.__globals__.get(name)
    jit = innermost_jit(value) if value is not None else None
    return kernel_text(jit) if jit is not None else None
