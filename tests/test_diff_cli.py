"""`tritoninspect diff` end to end (tier c, slow): samples/trio.py through the real CLI, compile-only.

Three real compiles in all, started up front (`runs` fixture): the diff of RawNet against
CustomOpNet (two fresh capture processes, with --bench and --save), and RawNet once more
with `graph`, so "the same model captured twice" is a diff of two saved reports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _expect import CliRuns, explain, run_cli
from tritoninspect.analyse.diff import COMPILE_ONLY_BENCH_NOTE
from tritoninspect.model.diff_report import DiffReport
from tritoninspect.render.diff import CHANGED
from tritoninspect.model.report import Report

pytestmark = pytest.mark.slow

RAW, CUSTOM = "samples/trio.py:RawNet", "samples/trio.py:CustomOpNet"
CPU = ["--device", "cpu"]


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("diff")


@pytest.fixture(scope="module")
def runs(out: Path) -> Any:
    cli = CliRuns(workers=2)
    cli.submit("raw vs custom", ["diff", RAW, CUSTOM, "--bench", "--save", str(out / "saved"), "--json", *CPU])
    cli.submit("raw again", ["graph", RAW, "-o", str(out / "raw_again.json"), *CPU])
    yield cli
    cli.close()


def diff_of(proc: Any) -> DiffReport:
    assert proc.returncode == 0, explain(proc)
    return DiffReport.from_json(proc.stdout)


def rows(diff: DiffReport) -> dict[str, tuple[Any, Any, bool]]:
    return {r.name: (r.a, r.b, r.changed) for r in diff.rows}


def test_raw_against_custom_op(runs: CliRuns) -> None:
    diff = diff_of(runs.get("raw vs custom"))
    assert (diff.a.target, diff.b.target) == (RAW, CUSTOM)
    assert not diff.a.saved and diff.a.mode == diff.b.mode == "compile-only"
    facts = rows(diff)
    assert facts["add_kernel: entries"] == ("hop", "custom_op", True)
    assert facts["add_kernel: in op"][1] == "tisample_trio::add_custom_op"
    assert facts["graph breaks"] == (0, 0, False)
    changed = {g.stage for g in diff.graph_diffs if g.changed}
    assert {"dynamo", "aot_inference", "output_code"} <= changed
    dynamo = next(g for g in diff.graph_diffs if g.stage == "dynamo")
    assert any(line.startswith("-") and "triton_kernel_wrapper_mutation" in line for line in dynamo.lines)
    assert any(line.startswith("+") and "tisample_trio.add_custom_op.default" in line for line in dynamo.lines)


def test_both_sides_start_clean(runs: CliRuns) -> None:
    """Each side is its own process: both are compile id 0/0 and kernel_idx 0."""
    diff = diff_of(runs.get("raw vs custom"))
    assert {(g.compile_id_a, g.compile_id_b) for g in diff.graph_diffs} == {("0/0", "0/0")}


def test_compile_only_bench_has_compile_times_only(runs: CliRuns) -> None:
    bench = diff_of(runs.get("raw vs custom")).bench
    assert bench is not None and bench.mode == "compile-only" and bench.note == COMPILE_ONLY_BENCH_NOTE
    for side in (bench.a, bench.b):
        assert side.eager is None and side.compiled is None
        assert side.compile_s is not None and side.compile_s > 0
    assert bench.ratios["compile_s"] == pytest.approx(bench.b.compile_s / bench.a.compile_s)
    times = [r for r in diff_of(runs.get("raw vs custom")).rows if r.section == "compile time"]
    assert times and all(r.unit == "s" and r.a > 0 and r.b > 0 for r in times)


def test_save_writes_each_sides_report(runs: CliRuns, out: Path) -> None:
    runs.get("raw vs custom")
    a = Report.from_json((out / "saved" / "A.json").read_text())
    b = Report.from_json((out / "saved" / "B.json").read_text())
    assert (a.meta.target, b.meta.target) == (RAW, CUSTOM)
    assert any(g.stage == "dynamo" and g.compile_time_s is not None for g in a.graphs)


def test_same_model_captured_twice_has_no_graph_differences(runs: CliRuns, out: Path) -> None:
    runs.get("raw vs custom")
    again = runs.get("raw again")
    assert again.returncode == 0, explain(again)
    diff = diff_of(run_cli(["diff", str(out / "saved" / "A.json"), str(out / "raw_again.json"), "--json"]))
    assert diff.graph_diffs and not diff.changed_graphs
    assert diff.changed_rows == ()
    assert diff.a.saved and diff.b.saved


def test_text_diff_of_the_saved_sides(runs: CliRuns, out: Path) -> None:
    runs.get("raw vs custom")
    proc = run_cli(["diff", str(out / "saved" / "A.json"), str(out / "saved" / "B.json")])
    assert proc.returncode == 0, explain(proc)
    entries = next(line for line in proc.stdout.splitlines() if line.startswith("add_kernel: entries"))
    assert entries.rstrip().endswith(CHANGED)
    assert "--- A dynamo [0/0]" in proc.stdout and "+++ B dynamo [0/0]" in proc.stdout
    assert json.loads((out / "saved" / "A.json").read_text())["meta"]["target"] == RAW
