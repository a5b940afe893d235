"""Issue 22 items 1 and 3 in gpu mode: the same checks as tests/test_dynamic_marks.py and
tests/test_guards.py, on the same assets, with `--device cuda`. Skipped where torch sees no CUDA GPU.

    python -m pytest -q tests/gpu/test_gpu_facts.py
"""

from __future__ import annotations

from typing import Any

import pytest

from _expect import CliRuns, json_report
from test_dynamic_marks import ASSET as MARKS, MARKED_RUNS, check_marked, check_per_call
from test_guards import ASSET as GUARDS, GUARD_CHECKS

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

CUDA = ["--json", "--device", "cuda"]


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=4)
    for key, (extra, _) in {**MARKED_RUNS, "PerCall": ([], "")}.items():
        cli.submit(key, ["graph", f"{MARKS}:{key.split()[0]}", *CUDA, *extra])
    for name in GUARD_CHECKS:
        cli.submit(f"guards {name}", ["graph", f"{GUARDS}:{name}", *CUDA])
    yield cli
    cli.close()


def _report(runs: CliRuns, key: str) -> dict[str, Any]:
    report = json_report(runs.get(key))
    assert report["meta"]["mode"] == "gpu"
    return report


@pytest.mark.parametrize("name", MARKED_RUNS)
def test_marked_size_is_symbolic_on_gpu(runs: CliRuns, name: str) -> None:
    check_marked(_report(runs, name), MARKED_RUNS[name][1])


def test_per_call_marks_give_one_compile_on_gpu(runs: CliRuns) -> None:
    check_per_call(_report(runs, "PerCall"))


@pytest.mark.parametrize("name", GUARD_CHECKS)
def test_kernel_guards_and_symbolic_sizes_on_gpu(runs: CliRuns, name: str) -> None:
    GUARD_CHECKS[name](_report(runs, f"guards {name}"))
