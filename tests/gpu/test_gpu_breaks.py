"""`tritoninspect breaks` and `check` in gpu mode (tier c on the device machine): every break
sample through the CLI with `--device cuda`, checked against tests/_breaks_expect.py. Record
and graph counts are torch 2.13's, so they are checked only there (`exact`); the user line,
kernel, headline, graph-break id, hint, entries and eager kernels are checked on any torch.

    python -m pytest -q tests/gpu/test_gpu_breaks.py   # on a machine with a GPU, from the repo root

depyf is not needed (no --decompile here).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import torch

from _breaks_expect import EXPECTED, check_breaks, check_constexpr_recompiles, check_item_grid_recompile
from _expect import CliRuns, explain, json_report
from tritoninspect.model.errors import ExitCode

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

CUDA = ["--device", "cuda"]
#: The expectations' exact counts were taken on torch 2.13.
EXACT = torch.__version__.startswith("2.13")


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=max(2, min(8, (os.cpu_count() or 2) // 2)))
    for name, exp in EXPECTED.items():
        dynamic = ["--dynamic"] if exp.dynamic else []
        cli.submit(name, ["breaks", f"samples/{name}.py:Net", "--json", *dynamic, *CUDA])
    cli.submit("autotune", ["breaks", "samples/autotune.py:Net", "--json", *CUDA])
    cli.submit("check fails", ["check", "samples/break_num_ctas.py:Net", "--no-breaks", "--entry", "add_kernel=hop",
                               *CUDA])
    cli.submit("check holds", ["check", "samples/add_raw.py:Net", "--no-breaks", "--max-graphs", "1",
                               "--entry", "add_kernel=hop", "--no-fallback", "--json", *CUDA])
    yield cli
    cli.close()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_breaks_on_gpu(runs: CliRuns, name: str) -> None:
    report = json_report(runs.get(name))
    assert report["meta"]["mode"] == "gpu" and report["meta"]["stage"] == "dynamo"
    check_breaks(name, report, exact=EXACT)


def test_recompiles_on_gpu(runs: CliRuns) -> None:
    check_item_grid_recompile(json_report(runs.get("break_item_grid")))
    check_constexpr_recompiles(json_report(runs.get("recompile_constexpr")))


def test_check_exit_codes_on_gpu(runs: CliRuns) -> None:
    fails = runs.get("check fails")
    assert fails.returncode == ExitCode.FINDINGS, explain(fails)
    assert [ln.split(":")[0] for ln in fails.stdout.splitlines()] == ["FAIL --no-breaks", "FAIL --entry add_kernel=hop"]
    holds = runs.get("check holds")
    assert holds.returncode == ExitCode.OK, explain(holds)
    assert json.loads(holds.stdout)["ok"] is True


def test_an_autotuners_trial_runs_are_not_launches_on_gpu(runs: CliRuns) -> None:
    """`breaks` runs the Dynamo graph as it is: Triton's Autotuner times both configs on the GPU (hundreds
    of trial launches) before the launch it was called for. Each call of the model is one launch."""
    report = json_report(runs.get("autotune"))
    (kernel,) = [k for k in report["kernels"] if k["name"] == "scaled_add_kernel"]
    runtime = [o for o in kernel["occurrences"] if o["stage"] == "runtime"]
    assert runtime and sum(o["launches"] for o in runtime) == report["meta"]["calls"], runtime
