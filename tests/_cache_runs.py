"""A cold and a warm `graph` run over the same kernel caches, for the warm-equals-cold tests
(tests/test_caches.py on CPU, tests/gpu/test_gpu_caches.py on a GPU).

Each pair runs in a private TMPDIR with private TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR
(empty before the cold run), so the user's caches are neither read nor written.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from _expect import REPO, cli_env, json_report, run_cli

MISMATCH = REPO / "tests" / "gold" / "_mismatch"
#: Fields that measure time, not what was compiled: the only ones a warm run may change.
#: Timing fields (Graph.compile_time_s; Evidence.seconds: what torch's mutation analysis took).
TIMINGS = ("compile_time_s", "seconds")


@dataclass
class ColdWarm:
    """The two reports, and the cache folders' files after each run."""

    cold: dict[str, Any]
    warm: dict[str, Any]
    inductor_after_cold: list[str]
    inductor_after_warm: list[str]
    triton_dir: Path


def files(directory: Path) -> list[str]:
    """Every file under `directory`, relative, sorted (lock files left out: torch rewrites them)."""
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*")
                  if p.is_file() and not p.name.endswith(".lock"))


def cold_then_warm(tmp_path: Path, args: list[str]) -> ColdWarm:
    """`python -m tritoninspect ARGS --json` twice over the same, initially empty, caches."""
    tmp, inductor, triton = tmp_path / "tmp", tmp_path / "inductor", tmp_path / "triton"
    tmp.mkdir()
    env = cli_env(TMPDIR=str(tmp), TORCHINDUCTOR_CACHE_DIR=str(inductor), TRITON_CACHE_DIR=str(triton))
    cold = json_report(run_cli([*args, "--json"], env=env))
    after_cold = files(inductor)
    warm = json_report(run_cli([*args, "--json"], env=env))
    return ColdWarm(cold, warm, after_cold, files(inductor), triton)


def without_timings(report: Any) -> Any:
    """The report with every timing field set to None."""
    if isinstance(report, dict):
        return {k: None if k in TIMINGS else without_timings(v) for k, v in report.items()}
    if isinstance(report, list):
        return [without_timings(v) for v in report]
    return report


def assert_same_report(name: str, runs: ColdWarm) -> None:
    """Gold-style: the warm report, timings scrubbed, equals the cold one; on a mismatch both
    are saved in tests/gold/_mismatch/ and the diff is shown."""
    cold, warm = (json.dumps(without_timings(r), indent=1, sort_keys=True) for r in (runs.cold, runs.warm))
    if cold == warm:
        return
    MISMATCH.mkdir(parents=True, exist_ok=True)
    for side, text in (("cold", cold), ("warm", warm)):
        (MISMATCH / f"{name}.{side}.json").write_text(text, encoding="utf-8")
    diff = "".join(difflib.unified_diff(cold.splitlines(True), warm.splitlines(True), "cold", "warm"))
    pytest.fail(f"{name}: the warm run's report differs from the cold run's (saved in {MISMATCH}):\n{diff[:4000]}")
