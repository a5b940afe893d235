"""Triton kernel objects: from a side-table entry to the user's JITFunction, its source and decorators."""

from __future__ import annotations

import inspect
import sys
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


def user_kernel_object(jf: JITFunction, launched: Any = None) -> Any:
    """The outermost decorated object the user defined around `jf`.

    The side table loses the user's decorator stack (Heuristics folded into
    configs), so look in the kernel module's globals for the Autotuner /
    Heuristics that wraps this very JITFunction (`.fn` chains, triton 3.6-3.8).
    A module can wrap one JITFunction in several (torchao 0.18's
    prototype/hqq/kernels.py: `mixed_mm_kernel_compute_bound`, 18 configs, and
    `mixed_mm_kernel_max_autotune`, 418 with Config pre_hooks, around one
    `@triton.heuristics` kernel): `launched`, the object the launch used (the
    side table's entry), says which; without it, or when it cannot tell, the
    first one found.
    """
    candidates = [
        v
        for v in jf.fn.__globals__.values()
        if isinstance(v, (Autotuner, Heuristics)) and innermost_jit(v) is jf
    ]
    inner = {id(getattr(c, "fn", None)) for c in candidates}
    outer = [c for c in candidates if id(c) not in inner]
    if len(outer) > 1 and launched is not None:
        outer = _launched_first(outer, launched)
    return outer[0] if outer else jf


def _launched_first(outer: list[Any], launched: Any) -> list[Any]:
    """`outer` with the one `launched` came from first: `launched` itself (or a layer of it), else the one
    whose configs Dynamo copied into the Autotuner it rebuilt (`copy.deepcopy(variable.kernel.configs)`, then
    each config's kwargs set from the heuristics and the launch options: triton_kernel_wrap.py,
    `TritonHOPifier.call_triton_kernel`, torch 2.11-2.14), in order; unchanged when none or several match."""
    stack = [id(layer) for layer in decorator_stack(launched)]
    mine = [c for c in outer if id(c) in stack]
    if not mine and isinstance(launched, Autotuner):
        mine = [c for c in outer if isinstance(c, Autotuner) and _copied_configs(c, launched.configs)]
    return mine + [c for c in outer if c not in mine] if len(mine) == 1 else outer


def _copied_configs(user: Autotuner, rebuilt: list[Any]) -> bool:
    """`rebuilt` is `user`'s configs, one by one: the same pre_hook (deepcopy keeps a function), and each
    kwarg kept, with its value unless a heuristic of `user` sets it (torchao's hqq kernel clamps BLOCK_K).
    `Autotuner.configs`, `Config.kwargs` / `pre_hook`, `Heuristics.values`: triton 3.6-3.8."""
    if len(user.configs) != len(rebuilt):
        return False
    derived = {name for layer in decorator_stack(user) if isinstance(layer, Heuristics)
               for name in heuristic_names(layer)}
    return all(getattr(new, "pre_hook", None) is getattr(old, "pre_hook", None)
               and all(k in new.kwargs and (k in derived or new.kwargs[k] == v) for k, v in old.kwargs.items())
               for old, new in zip(user.configs, rebuilt))


def launched_object(jf: JITFunction, obj: Any) -> Any:
    """What a launch of kernel `jf` used, given `obj` (the side table's entry, or the JITFunction a run hook
    saw): a launch of the bare JITFunction (eager, or inside a custom_op) came through the user's Autotuner,
    if any, which picks the user's object among several around `jf` (`user_kernel_object`)."""
    return (launching_wrapper(jf) or obj) if obj is jf else obj


def launching_wrapper(jf: JITFunction, depth: int = 32) -> Any:
    """The Autotuner or Heuristics launching `jf` right now, from the calling frames, else None: an eager
    launch reaches `JITFunction.run` from `Autotuner.run` and `Heuristics.run` (`self.fn.run(...)`, triton
    3.6-3.8, and compile-only mode's `autotuner_run_first_config`), so the outermost frame whose first
    argument wraps `jf` holds the object the user launched. Read once per kernel, at its first launch."""
    frame = sys._getframe(1)
    found = None
    for _ in range(depth):
        if frame is None:
            break
        code = frame.f_code
        first = frame.f_locals.get(code.co_varnames[0]) if code.co_argcount else None
        if isinstance(first, (Autotuner, Heuristics)) and innermost_jit(first) is jf:
            found = first
        frame = frame.f_back
    return found


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
