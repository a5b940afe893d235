"""On a GPU: a warm run reports what a cold run does, and compile-only mode never writes into
the Triton cache a real GPU run reads (the CPU twin is tests/test_caches.py).

    python -m pytest -q -m gpu tests/gpu/test_gpu_caches.py     # on a machine with a GPU
"""

from __future__ import annotations

from pathlib import Path

import pytest

from _cache_runs import assert_same_report, cold_then_warm, files
from tritoninspect.capture.compat.caches import COMPILE_ONLY_SUBDIR

pytestmark = [pytest.mark.gpu, pytest.mark.slow]


@pytest.mark.parametrize("sample", ["triton_op_autograd", "custom_op"])
def test_a_warm_gpu_run_reports_what_a_cold_one_reports(tmp_path: Path, sample: str) -> None:
    runs = cold_then_warm(tmp_path, ["graph", f"samples/{sample}.py:Net", "--device", "cuda"])
    assert_same_report(f"warm_vs_cold_gpu_{sample}", runs)
    assert runs.inductor_after_cold, "Inductor cached nothing"
    assert runs.inductor_after_warm == runs.inductor_after_cold
    assert files(runs.triton_dir), "Triton cached nothing"
    assert not (runs.triton_dir / COMPILE_ONLY_SUBDIR).exists()
