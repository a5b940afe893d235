"""`triton.autotune` objects: what one holds (hooks, pruning, benchmark), as plain settings.

Read from the user's own Autotuner and from the one Dynamo keeps in its kernel side table (which
Inductor compiles: `ir.UserDefinedTritonKernel.get_kernel_and_metadata` reads its `configs`,
`restore_value` and `reset_to_zero`, torch 2.11-2.14). Dynamo rebuilds the Autotuner, with only
`configs`, `key=[]` and `prune_configs_by`, when it prunes configs, folds `@triton.heuristics` into
them or moves a call-site launch option into a Config (torch/_higher_order_ops/triton_kernel_wrap.py,
`TritonHOPifier.call_triton_kernel`, ~lines 1987-2186 in 2.13; the rebuild for heuristics and pruning
came with https://github.com/pytorch/pytorch/pull/122280 and later PRs, not all found).
"""

from __future__ import annotations

import threading
from typing import Any

from triton.runtime.autotuner import Autotuner, Heuristics

from tritoninspect.model.hazard_records import AutotuneSettings

_TRITON_MODULES = ("triton.", "torch.")


def settings(obj: Any) -> AutotuneSettings | None:
    """The settings of an Autotuner (None for anything else).

    Attributes, triton 3.6-3.8 (triton/runtime/autotuner.py `Autotuner.__init__`): `configs`, `keys`,
    `reset_to_zero`, `restore_value` (lists of names since triton-lang/triton#5083),
    `user_defined_pre_hook` / `user_defined_post_hook`, `early_config_prune`, `perf_model`,
    `configs_top_k`, `_do_bench` (or an instance `do_bench`), `num_warmups` / `num_reps` (older: `warmup`
    / `rep`), `use_cuda_graph`.
    """
    if not isinstance(obj, Autotuner):
        return None
    configs = list(getattr(obj, "configs", ()) or ())
    perf_model = getattr(obj, "perf_model", None)
    return AutotuneSettings(
        configs=len(configs),
        key=tuple(str(k) for k in (getattr(obj, "keys", None) or ())),
        reset_to_zero=tuple(str(n) for n in (getattr(obj, "reset_to_zero", None) or ())),
        restore_value=tuple(str(n) for n in (getattr(obj, "restore_value", None) or ())),
        pre_hook=bool(getattr(obj, "user_defined_pre_hook", False)),
        post_hook=bool(getattr(obj, "user_defined_post_hook", False)),
        config_pre_hooks=sum(1 for c in configs if getattr(c, "pre_hook", None) is not None),
        early_config_prune=_name(getattr(obj, "early_config_prune", None)),
        perf_model=_name(perf_model),
        top_k=_number(getattr(obj, "configs_top_k", None)) if perf_model is not None else None,
        do_bench=_custom_bench(obj),
        warmup=_first(obj, "num_warmups", "warmup"),
        rep=_first(obj, "num_reps", "rep"),
        use_cuda_graph=bool(getattr(obj, "use_cuda_graph", False)),
    )


def refused(obj: Any) -> tuple[str, ...]:
    """The settings of an Autotuner torch refuses to trace a launch with, as Dynamo does (a graph break) and
    `wrap_triton` inside a `triton_op` does (a RuntimeError: the compile fails): a pre_hook or post_hook, a
    `Config(pre_hook=...)`, warmup/rep other than Triton's defaults, use_cuda_graph. Read from
    torch/_higher_order_ops/triton_kernel_wrap.py (`TritonHOPifier.call_triton_kernel`, torch 2.13; the
    pre_hook check since pytorch/pytorch#139059); none when
    `torch._inductor.config.unsafe_ignore_unsupported_triton_autotune_args` is set."""
    found = settings(obj)
    if found is None or _ignored_by_inductor():
        return ()
    names = [name for name, given in (("pre_hook", found.pre_hook), ("post_hook", found.post_hook),
                                      ("Config.pre_hook", bool(found.config_pre_hooks)),
                                      ("warmup", found.warmup not in (None, 25)), ("rep", found.rep not in (None, 100)),
                                      ("use_cuda_graph", found.use_cuda_graph)) if given]
    return tuple(names)


def _ignored_by_inductor() -> bool:
    import torch._inductor.config as inductor_config

    return bool(getattr(inductor_config, "unsafe_ignore_unsupported_triton_autotune_args", False))


def layers(obj: Any) -> tuple[str, ...]:
    """The decorator layers above the JITFunction, outermost first ("autotune", "heuristics")."""
    names = []
    while isinstance(obj, (Autotuner, Heuristics)) and len(names) < 8:
        names.append("autotune" if isinstance(obj, Autotuner) else "heuristics")
        obj = getattr(obj, "fn", None)
    return tuple(names)


def _name(fn: Any) -> str | None:
    if fn is None:
        return None
    return str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _first(obj: Any, *names: str) -> int | None:
    for name in names:
        value = getattr(obj, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _custom_bench(obj: Any) -> str | None:
    """The user's own benchmark, by name: `do_bench=` (kept as `_do_bench`), or an instance `do_bench`
    the user set. Triton's own default (cached on the instance once used) is not one."""
    for fn in (vars(obj).get("_do_bench"), vars(obj).get("do_bench")):
        if fn is None:
            continue
        module = str(getattr(fn, "__module__", "") or "")
        if not module.startswith(_TRITON_MODULES):  # warmup=/rep= make a lambda of Triton's: said apart
            return _name(fn)
    return None


# --- launches made to benchmark ---------------------------------------------------------------------

#: `.depth`: how many of Triton's autotuner benchmarks are under way in this thread (an Autotuner times its
#: configs in the thread that launches; a benchmark may launch a kernel that autotunes in turn).
_BENCHMARKS = threading.local()


def benchmarking() -> bool:
    """Is a `triton.autotune` Autotuner timing its configs in this thread? Its launches then are trial runs."""
    return getattr(_BENCHMARKS, "depth", 0) > 0


def benchmark_patches() -> list[tuple[Any, str, Any]]:
    """(object, name, value) patches that make `benchmarking()` true while an Autotuner times a config.

    Triton's Autotuner times each config with `Autotuner._bench`, which launches the kernel through
    `JITFunction.run` tens to thousands of times (`do_bench`: 25 ms of warm-up, 100 ms of repetitions),
    then launches the chosen config once more from `Autotuner.run` (triton/runtime/autotuner.py, the same
    in triton 3.6-3.8). A launch hook that counted them all said an fla kernel called once ran 7,727 times,
    and walked the stack for each. No patch where this Triton has no `_bench` (its trial runs are then counted)."""
    bench = vars(Autotuner).get("_bench")
    if not callable(bench):
        return []

    def timed(autotuner: Any, *args: Any, **kwargs: Any) -> Any:
        _BENCHMARKS.depth = getattr(_BENCHMARKS, "depth", 0) + 1
        try:
            return bench(autotuner, *args, **kwargs)
        finally:
            _BENCHMARKS.depth -= 1

    return [(Autotuner, "_bench", timed)]


def autotuner_patches(*, compile_ahead: bool) -> list[tuple[Any, str, Any]]:
    """`benchmark_patches`, and `parallel_compile_patches` when `compile_ahead` (a GPU run)."""
    return benchmark_patches() + (parallel_compile_patches() if compile_ahead else [])


# --- configs compiled at once -----------------------------------------------------------------------


def parallel_compile_patches() -> list[tuple[Any, str, Any]]:
    """(object, name, value) patches that compile the configs an Autotuner is about to time all at once,
    in threads, before it times them one by one. For a GPU run only (compile-only mode interprets kernels).

    Triton's `Autotuner.run` takes the configs to time from `prune_configs`, then `_bench` compiles and times
    each in turn (triton/runtime/autotuner.py, triton 3.6-3.8). fla's chunk kernels are autotuned eagerly
    (its ops are behind `torch.compiler.disable`): on the H200 a cold `graph` of the fla block spent 62 s of
    its 106 in 67 ptxas runs made one after another, as a plain run does (cProfile, scripts/gpu-profile).
    Here the configs `prune_configs` gives `run` are first compiled through Triton's own `AsyncCompileMode`
    (triton/runtime/_async_compile.py): `JITFunction._do_compile` hands the compile to the executor, whose
    threads mostly wait on ptxas, a process of its own. Each binary lands where a serial compile puts it
    (the kernel's cache, Triton's cache dir); `_bench` then finds it and times it as before, so the timings,
    the config chosen and the report are those of a serial run. A config that fails to compile is taken
    out of the kernel's cache again, so `_bench` compiles it and fails it as it would have.

    With `cache_results` (fla sets it) `run` times the configs only when Triton's disk cache has no tuning
    for them (`check_disk_cache` calls its `bench_fn`): the configs are compiled then, not before.
    No patch where this Triton lacks `AsyncCompileMode` or `prune_configs`."""
    prune = vars(Autotuner).get("prune_configs")
    on_disk = vars(Autotuner).get("check_disk_cache")
    try:
        from triton.runtime import _async_compile
    except ImportError:
        return []
    if not callable(prune) or not hasattr(_async_compile, "AsyncCompileMode"):
        return []

    def compile_ahead(autotuner: Any, kwargs: dict[str, Any], configs: list[Any]) -> None:
        if _async_compile.active_mode.get() is None:
            try:
                _compile_all(autotuner, kwargs, configs, _async_compile)
            except Exception:  # noqa: BLE001 - only a head start: `_bench` compiles whatever is not there
                pass

    def pruned(autotuner: Any, kwargs: dict[str, Any], *rest: Any, **more: Any) -> Any:
        configs = prune(autotuner, kwargs, *rest, **more)
        _PENDING.sweep = None
        if _about_to_time(autotuner, kwargs, configs):
            if getattr(autotuner, "cache_results", False) and callable(on_disk):
                _PENDING.sweep = (autotuner, kwargs, configs)  # `check_disk_cache` comes next, in `run`
            elif not getattr(autotuner, "cache_results", False):
                compile_ahead(autotuner, kwargs, configs)
        return configs

    def cached_or_timed(autotuner: Any, tuning_key: Any, configs: Any, bench_fn: Any, *rest: Any) -> Any:
        sweep, _PENDING.sweep = getattr(_PENDING, "sweep", None), None

        def compiled_then_timed() -> Any:
            if sweep is not None and sweep[0] is autotuner:
                compile_ahead(*sweep)
            return bench_fn()

        return on_disk(autotuner, tuning_key, configs, compiled_then_timed, *rest)

    patches = [(Autotuner, "prune_configs", pruned)]
    return patches + ([(Autotuner, "check_disk_cache", cached_or_timed)] if callable(on_disk) else [])


#: `.sweep`: (autotuner, kwargs, configs) that `prune_configs` gave `run`, to compile if the disk cache misses.
_PENDING = threading.local()


def _about_to_time(autotuner: Any, kwargs: dict[str, Any], configs: Any) -> bool:
    """`run` is about to time `configs` (not `Autotuner.warmup`), or to look their tuning up on disk."""
    return (kwargs.get("warmup") is False and getattr(autotuner, "nargs", None) is not None
            and isinstance(configs, list) and len(configs) > 1)


def _compile_all(autotuner: Any, kwargs: dict[str, Any], configs: list[Any], async_compile: Any) -> None:
    import os
    from concurrent.futures import ThreadPoolExecutor

    args = list(autotuner.nargs.values())  # `run` set nargs from the positional arguments, in order
    workers = max(1, min(len(configs), os.cpu_count() or 1, 32))
    try:
        with ThreadPoolExecutor(workers, thread_name_prefix="tritoninspect-autotune") as pool:
            with async_compile.AsyncCompileMode(pool, ignore_errors=True):
                for config in configs:  # what `_bench` runs, less the launch
                    autotuner.fn.run(*args, **{**kwargs, "warmup": True, **config.all_kwargs()})
    finally:  # a failed compile stays a FutureKernel in the cache, even when a later config raised: drop it
        for cache in _kernel_caches(autotuner):
            for key in [key for key, kernel in cache.items() if isinstance(kernel, async_compile.FutureKernel)]:
                del cache[key]


def _kernel_caches(autotuner: Any) -> list[dict[Any, Any]]:
    """The per-device kernel caches of the JITFunction under `autotuner` (`device_caches`: device ->
    (kernel cache, key cache, target, backend, binder), triton 3.6-3.8)."""
    fn = autotuner
    for _ in range(8):
        if not isinstance(fn, (Autotuner, Heuristics)):
            break
        fn = getattr(fn, "fn", None)
    device_caches = getattr(fn, "device_caches", None) or {}
    return [entry[0] for entry in device_caches.values() if isinstance(entry, tuple) and isinstance(entry[0], dict)]
