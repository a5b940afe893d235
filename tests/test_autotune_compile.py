"""An Autotuner's configs are compiled at once, in threads, before it times them (compat.autotune.
parallel_compile_patches): every config's binary is in the kernel's cache afterwards, as a serial compile
leaves it, and a config that fails to compile is left for the Autotuner to fail as it would have.

The compiles are real: compile-only mode gives Triton a stub sm_90 target, so `JITFunction.run(warmup=True)`
compiles to a cubin with Triton's own ptxas, as on a GPU (no launch is made here)."""

from __future__ import annotations

import threading

import pytest
import torch
import triton
import triton.language as tl
from triton.compiler.errors import CompileTimeAssertionFailure

from tritoninspect.capture.compat import autotune
from tritoninspect.capture.session import compile_only

EVEN = [triton.Config({"BLOCK": b}, num_warps=w) for b in (32, 64) for w in (1, 2)]


def _kernel(configs: list[triton.Config]) -> triton.runtime.Autotuner:
    @triton.autotune(configs=configs, key=["n"])
    @triton.jit
    def add_one(x_ptr, n, BLOCK: tl.constexpr):
        tl.static_assert(BLOCK % 2 == 0)  # an odd BLOCK fails to compile, as too big a config fails on a GPU
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    return add_one


@pytest.fixture
def patched_prune() -> object:
    patches = {name: value for _, name, value in autotune.parallel_compile_patches()}
    assert "prune_configs" in patches, "this Triton has AsyncCompileMode and Autotuner.prune_configs (3.6-3.8 do)"
    return patches["prune_configs"]


def test_every_config_is_compiled_in_threads_before_it_is_timed(patched_prune: object,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    with compile_only():
        kernel = _kernel(EVEN)
        compiled_in: list[str] = []
        compile = triton.compiler.compile

        def counted(*args: object, **kwargs: object) -> object:
            compiled_in.append(threading.current_thread().name)
            return compile(*args, **kwargs)

        # JITFunction.create_binder takes `compile` from triton.compiler when the kernel first runs
        monkeypatch.setattr(triton.compiler, "compile", counted)
        kernel.nargs = {"x_ptr": torch.zeros(100), "n": 100}  # as Autotuner.run sets them before pruning
        configs = patched_prune(kernel, {"grid": (1,), "warmup": False})  # type: ignore[operator]
        assert configs == EVEN
        (cache,) = autotune._kernel_caches(kernel)
        assert len(cache) == len(EVEN)
        assert all(type(k).__name__ == "CompiledKernel" for k in cache.values())
        assert len(compiled_in) == len(EVEN)
        assert all(name.startswith("tritoninspect-autotune") for name in compiled_in)


def test_a_config_that_fails_to_compile_is_left_to_the_autotuner(patched_prune: object) -> None:
    with compile_only():
        kernel = _kernel([*EVEN, triton.Config({"BLOCK": 3})])
        x = torch.zeros(100)
        kernel.nargs = {"x_ptr": x, "n": 100}
        patched_prune(kernel, {"grid": (1,), "warmup": False})  # type: ignore[operator]
        (cache,) = autotune._kernel_caches(kernel)
        assert len(cache) == len(EVEN)  # the odd config is not there, not even as a failed future
        with pytest.raises(CompileTimeAssertionFailure):  # compiled again, it fails as a serial compile does
            kernel.fn.run(x, 100, grid=(1,), warmup=True, BLOCK=3)


def test_only_the_autotuners_own_timing_run_compiles_ahead(patched_prune: object) -> None:
    """Not `Autotuner.warmup` (no `warmup=False` launch); with `cache_results` not yet (the disk may hold the tuning)."""
    with compile_only():
        kernel = _kernel(EVEN)
        kernel.nargs = {"x_ptr": torch.zeros(100), "n": 100}
        patched_prune(kernel, {"grid": (1,)})  # type: ignore[operator]
        kernel.cache_results = True
        patched_prune(kernel, {"grid": (1,), "warmup": False})  # type: ignore[operator]
        assert sum(len(c) for c in autotune._kernel_caches(kernel)) == 0


def test_with_cache_results_the_configs_are_compiled_when_the_disk_cache_misses(tmp_path: object) -> None:
    """fla's Autotuners set `cache_results`: `run` looks the tuning up on disk and times the configs
    (`check_disk_cache` calls its `bench_fn`) only on a miss; they are compiled then, before the first is
    timed. Called as `Autotuner.run` calls them (compile-only mode runs kernels through its interpreter)."""
    patches = {name: value for _, name, value in autotune.parallel_compile_patches()}
    prune, on_disk = patches["prune_configs"], patches["check_disk_cache"]
    with compile_only():
        key = (100, f"n{tmp_path}")  # a tuning key no earlier run has put on disk
        compiled_when_timed: list[int] = []
        kernels = [_kernel(EVEN), _kernel(EVEN)]  # the second: the same kernel in a later process
        for kernel in kernels:
            kernel.cache_results = True
            kernel.nargs = {"x_ptr": torch.zeros(100), "n": 100}
            configs = prune(kernel, {"grid": (1,), "warmup": False})  # type: ignore[operator]

            def bench(kernel: object = kernel) -> None:
                compiled_when_timed.append(sum(len(c) for c in autotune._kernel_caches(kernel)))
                kernel.configs_timings = {c: [1.0] for c in configs}  # type: ignore[attr-defined]
                kernel.cache[key] = configs[0]  # type: ignore[attr-defined]

            on_disk(kernel, key, configs, bench)  # type: ignore[operator]
        assert compiled_when_timed == [len(EVEN)]  # the first timed its configs, all compiled; the second read the disk
        assert sum(len(c) for c in autotune._kernel_caches(kernels[1])) == 0
