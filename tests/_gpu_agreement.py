"""Compile-only reports made here against the reports stored from the GPU machine.

tests/fixtures/gpu/<sample>.json are gpu-mode reports from the GPU machine (see
tests/fixtures/README.md); tools/agreement.py compares their device-independent
parts. A difference fails the test unless `agreement.KNOWN_DIFFERENCES` explains it by
the torch or Triton versions of the two reports (with its evidence).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tools.agree import load_report
from tools.agreement import compare
from tritoninspect.model.report import Report

GPU_REPORTS = Path(__file__).resolve().parent / "fixtures" / "gpu"


def stored_gpu_report(name: str) -> Path:
    """The stored GPU report of a sample; skips the test when there is none yet."""
    stored = GPU_REPORTS / f"{name}.json"
    if not stored.exists():
        pytest.skip(f"no stored GPU report for {name}: on the GPU machine run scripts/gpu-tests, "
                    "then here scripts/gpu-fixtures on what it brought back")
    return stored


def check_agrees_with_gpu_report(stored: Path, report: dict[str, Any]) -> None:
    gpu = load_report(stored)
    result = compare(gpu, Report.from_dict(report))
    assert result.compared >= 20, f"only {result.compared} fields compared"
    versions = f"GPU report: torch {gpu.meta.torch}, triton {gpu.meta.triton}; here: {report['meta']['torch']}"
    assert not result.unexplained, f"{result.summary()} ({versions}):\n" + "\n".join(
        d.describe() for d in result.unexplained
    )
