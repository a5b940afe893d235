"""The views of a training run (tier c): one compile id holds a forward and a backward graph, and the
report says which one each line is about. `samples/autograd_function.py` launches `mul_kernel` in both
(its forward and its backward call the same kernel), compiled once here in compile-only mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from _expect import CliRuns, json_report
from tritoninspect.model.report import Report, read_report
from tritoninspect.render import render_as

CPU = ["--device", "cpu"]


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=2)
    cli.submit("autograd", ["graph", "samples/autograd_function.py:Net", "--json", *CPU])
    yield cli
    cli.close()


def saved(runs: CliRuns, key: str, tmp_path: Path) -> Report:
    """The report a run printed, read back as a saved report is (what `graph report.json` renders)."""
    path = tmp_path / f"{key}.json"
    json_report(runs.get(key))  # asserts the run succeeded
    path.write_text(runs.get(key).stdout, encoding="utf-8")
    return read_report(path)


def test_epilogue_lines_say_which_graph_of_the_compile_they_are_about(runs: CliRuns, tmp_path: Path) -> None:
    """`--detail` listed "[0/0] mul_kernel: off" three times, a forward and two backward launches alike."""
    report = saved(runs, "autograd", tmp_path)
    text = render_as(report, "detail", color=False, width=200)
    section = text[text.index("Epilogue fusion into user kernels"):].split("\n\n")[0]
    heads = [line.split(":")[0] for line in section.splitlines()[1:] if line.startswith("[")]
    assert heads == ["[0/0 forward] mul_kernel", "[0/0 backward] mul_kernel", "[0/0 backward] mul_kernel"], section


def test_the_neighbours_column_keeps_forward_and_backward_apart(runs: CliRuns, tmp_path: Path) -> None:
    """The before/after column read "tanh_backward / tanh": the backward's kernel before the backward launch,
    and the forward's after the forward launch, as one pair."""
    from tritoninspect.render.overview import render_overview

    text = render_overview(saved(runs, "autograd", tmp_path), color=False, width=120)
    rows = text[text.index("Kernels (1)"):].split("\n\n")[0]
    assert "forward: - / tanh" in rows and "backward: tanh_backward / -" in rows, rows
    assert "tanh_backward / tanh" not in rows, rows


def test_no_epilogue_is_fused_while_the_fusion_is_off(runs: CliRuns, tmp_path: Path) -> None:
    """A backward pointwise node named like the forward's launch (op1: names restart in each graph) was taken
    for the launch: its fusion with op4 was listed under "[0/0 forward] mul_kernel: off" as "op4 (mul, sub):
    fused"."""
    report = saved(runs, "autograd", tmp_path)
    assert report.epilogues and not any(e.enabled for e in report.epilogues)
    fused = [(e.part, n.node) for e in report.epilogues for n in e.neighbours if n.fused]
    assert fused == [], fused
    forward = next(e for e in report.epilogues if e.part == "forward")
    assert [(n.node, n.ops) for n in forward.neighbours] == [("op2", ("tanh",))]
