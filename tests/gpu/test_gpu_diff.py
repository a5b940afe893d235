"""`tritoninspect diff --bench` of samples/trio.py on the GPU (tier c on the device machine).

    python -m pytest -q tests/gpu/test_gpu_diff.py      # from the repo root, on a machine with a GPU

Two diffs, one after the other (timings must not share the GPU): RawNet against
CustomOpNet and against TritonOpNet, at 2**22 elements. Skipped without CUDA (tests/conftest.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from _expect import CliRuns, explain
from tritoninspect.model.diff_report import DiffReport, Timing

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

RAW = "samples/trio.py:RawNet"
OTHERS = {"custom_op": "samples/trio.py:CustomOpNet", "triton_op": "samples/trio.py:TritonOpNet"}
SIZE = "4194304"


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=1)
    for entry, target in OTHERS.items():
        cli.submit(entry, ["diff", RAW, target, "--device", "cuda", "--bench", "--inputs", SIZE, "--json"])
    yield cli
    cli.close()


def diff_of(runs: CliRuns, key: str) -> DiffReport:
    proc = runs.get(key)
    assert proc.returncode == 0, explain(proc)
    return DiffReport.from_json(proc.stdout)


def check_timing(timing: Timing | None) -> None:
    assert timing is not None and timing.reps > 0
    assert 0 < timing.min_ms <= timing.p20_ms <= timing.median_ms <= timing.p80_ms
    assert timing.pipelined_ms is not None and timing.pipelined_ms > 0


@pytest.mark.parametrize("entry", list(OTHERS))
def test_trio_bench_on_gpu(runs: CliRuns, entry: str) -> None:
    diff = diff_of(runs, entry)
    assert diff.a.mode == diff.b.mode == "gpu"
    assert diff.a.inputs == diff.b.inputs == (f"{SIZE}:float32",)
    bench = diff.bench
    assert bench is not None and bench.mode == "gpu" and bench.note is None
    for side in (bench.a, bench.b):
        check_timing(side.eager)
        check_timing(side.compiled)
        assert side.compile_s and side.compile_s > 0 and side.first_call_s and side.first_call_s > 0
    assert all(bench.ratios[k] is not None for k in ("eager", "compiled", "pipelined", "compile_s", "first_call_s"))
    facts = {r.name: (r.a, r.b) for r in diff.rows}
    assert facts["add_kernel: entries"] == ("hop", entry)


def test_triton_op_compiles_to_the_raw_kernels_output_code_on_gpu(runs: CliRuns) -> None:
    diff = diff_of(runs, "triton_op")
    code = [g for g in diff.graph_diffs if g.stage == "output_code"]
    assert code and not any(g.changed for g in code), [g.lines for g in code]
    assert any(g.changed for g in diff.graph_diffs if g.stage == "dynamo")
