"""On the GPU, an Autotuner whose configs the tool compiled ahead, in threads
(compat.autotune.parallel_compile_patches), times them all, fails the one that does not compile
as Triton does without the patch, and launches the chosen config with the right result.

    python -m pytest -q tests/gpu/test_gpu_autotune_compile.py
"""

from __future__ import annotations

import math
import threading

import pytest
import torch
import triton
import triton.language as tl

from tritoninspect.capture.compat import autotune

pytestmark = pytest.mark.gpu

CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128, 256, 512) for w in (2, 4)]
ODD = triton.Config({"BLOCK": 3})


def _kernel(**options: object) -> triton.runtime.Autotuner:
    @triton.autotune(configs=[*CONFIGS, ODD], key=["n"], **options)
    @triton.jit
    def add_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        tl.static_assert(BLOCK % 2 == 0)
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    return add_one


@pytest.mark.parametrize("options", [{}, {"cache_results": True}], ids=["plain", "cache_results"])
def test_configs_compiled_ahead_are_timed_and_the_failing_one_fails(monkeypatch: pytest.MonkeyPatch, tmp_path: object,
                                                                   options: dict[str, object]) -> None:
    """Also with `cache_results` (fla's Autotuners), with an empty Triton cache: compiled when the disk misses."""
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))  # read when used: this run alone tunes on disk
    for obj, name, value in autotune.parallel_compile_patches():
        monkeypatch.setattr(obj, name, value)
    compile = triton.compiler.compile
    threads: list[str] = []

    def counted(*args: object, **kwargs: object) -> object:
        threads.append(threading.current_thread().name)
        return compile(*args, **kwargs)

    monkeypatch.setattr(triton.compiler, "compile", counted)
    kernel = _kernel(**options)
    x = torch.randn(4000, device="cuda")
    out = torch.empty_like(x)
    kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, out, x.numel())
    torch.testing.assert_close(out, x + 1)
    timings = kernel.configs_timings
    assert set(timings) == {*CONFIGS, ODD}
    assert all(math.isfinite(timings[c][0]) for c in CONFIGS) and math.isinf(timings[ODD][0])
    ahead = [t for t in threads if t.startswith("tritoninspect-autotune")]
    assert len(ahead) >= len(CONFIGS), threads  # the odd one, compiled again by `_bench`, fails in this thread
    assert kernel.best_config in CONFIGS
