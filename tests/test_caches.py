"""Kernel-binary caches stay on, stage caches are off, and a warm run reports what a cold run does
(tritoninspect/capture/compat/caches.py).

Fast: which config a capture patches; compile-only mode's Triton cache folder and its scope.
Slow: the same CLI run twice over the same private caches (cold, then warm): the reports are
equal but for compile times, the warm run compiled no new C++, and compile-only mode's Triton
binaries are only in their own folder. The GPU twin is tests/gpu/test_gpu_caches.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _cache_runs import assert_same_report, cold_then_warm
from tritoninspect.capture.compat import caches


def test_stage_caches_are_patched_off_and_binary_caches_are_left_alone() -> None:
    from tritoninspect.capture.compat import inductor

    patched = {name: value for _, name, value in inductor.config_patches(lambda graph: None)}
    for name in ("fx_graph_cache", "enable_autograd_cache", "automatic_dynamic_local_pgo"):
        assert patched[name] is False, name
    # What kept the C++ and Triton caches cold before issue 15.
    assert "force_disable_caches" not in patched and "cpp_cache_precompile_headers" not in patched


def test_compile_only_triton_cache_is_a_scoped_subfolder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import triton

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    with caches.compile_only_triton_cache() as directory:
        assert directory == str(tmp_path / caches.COMPILE_ONLY_SUBDIR) == triton.knobs.cache.dir
    assert triton.knobs.cache.dir == str(tmp_path)


def test_compile_only_mode_compiles_into_its_own_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import triton

    from tritoninspect.capture.session import compile_only

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    with compile_only():
        assert triton.knobs.cache.dir == str(tmp_path / caches.COMPILE_ONLY_SUBDIR)
    assert triton.knobs.cache.dir == str(tmp_path)


@pytest.mark.slow
def test_a_warm_run_reports_what_a_cold_run_reports(tmp_path: Path) -> None:
    # Forward and backward, kernels through triton_op, C++ kernels around them.
    runs = cold_then_warm(tmp_path, ["graph", "samples/triton_op_autograd.py:Net", "--device", "cpu"])
    assert_same_report("warm_vs_cold_cpu", runs)
    assert any(name.endswith(".so") for name in runs.inductor_after_cold), runs.inductor_after_cold
    # Every C++ kernel of the warm run came from the cache: it compiled nothing new.
    assert runs.inductor_after_warm == runs.inductor_after_cold
    # Triton binaries for the stub target only in compile-only mode's own folder.
    assert [p.name for p in runs.triton_dir.iterdir()] == [caches.COMPILE_ONLY_SUBDIR]
