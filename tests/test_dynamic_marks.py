"""Dynamic-shape marks on example inputs reach the compile (issue 22, item 1).

`torch._dynamo.mark_dynamic` & co. set attributes on the tensor; the tool copies every input onto
the device (`target._to_device`), and a copy has none of them. Fast tests load the asset and look
at the copies; slow tests run the CLI and check that the kernel's `n` and grid are symbolic as torch
has them (`s…` or `u…`), where unmarked inputs give `n=40` and a grid of (3, 1, 1).
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from _expect import REPO, CliRuns, json_report, kernels_by_name, occurrences
from tritoninspect.capture import compat
from tritoninspect.source.inputs import describe_inputs
from tritoninspect.source.spec import parse_spec
from tritoninspect.source.target import load_target

ASSET = REPO / "tests" / "assets" / "dynamic_marks.py"


def _load(name: str, device: str = "cpu") -> Any:
    return load_target(parse_spec(f"{ASSET}:{name}"), device=device)


# --- fast: the copies keep the marks ----------------------------------------------------------


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_copied_inputs_keep_mark_dynamic(device: str) -> None:
    x, y = _load("Marked", device).input_sets[0]
    assert x.device.type == device
    assert compat.shapes.dim_marks(x) == [(0, "dynamic")] == compat.shapes.dim_marks(y)


def test_each_kind_of_mark_is_kept_and_described() -> None:
    maybe = _load("MaybeMarked").input_sets[0]
    unbacked = _load("Unbacked").input_sets[0]
    assert compat.shapes.dim_marks(maybe[0]) == [(0, "maybe dynamic")]
    assert compat.shapes.dim_marks(unbacked[0]) == [(0, "unbacked")]
    assert describe_inputs([unbacked]) == ("40:float32 (dim 0 unbacked)",) * 2


def test_every_call_keeps_its_marks_and_aliasing_survives() -> None:
    calls = _load("PerCall").input_sets
    assert [compat.shapes.dim_marks(t) for call in calls for t in call] == [[(0, "dynamic")]] * 4
    x, y = _load("Aliased").input_sets[0]
    assert x is y and compat.shapes.dim_marks(x) == [(0, "dynamic")]


def test_the_copy_has_its_own_mark_sets() -> None:
    source = torch.zeros(4, 4)
    torch._dynamo.mark_dynamic(source, 0)
    copy = source.detach().clone()
    compat.shapes.copy_dim_marks(source, copy)
    torch._dynamo.mark_dynamic(copy, 1)
    assert compat.shapes.dim_marks(copy) == [(0, "dynamic"), (1, "dynamic")]
    assert compat.shapes.dim_marks(source) == [(0, "dynamic")]


def test_unmarked_input_is_described_as_before() -> None:
    assert describe_inputs([(torch.zeros(4, 8),)]) == ("4x8:float32",)


# --- slow: the compile sees them ----------------------------------------------------------------


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=2)
    for key, (extra, _) in {**MARKED_RUNS, "PerCall": ([], "")}.items():
        cli.submit(key, ["graph", f"{ASSET}:{key.split()[0]}", "--json", "--device", "cpu", *extra])
    yield cli
    cli.close()


def _dynamo_occurrence(report: dict[str, Any]) -> dict[str, Any]:
    (found,) = occurrences(kernels_by_name(report)["add_kernel"], "dynamo")
    return found


def check_marked(report: dict[str, Any], prefix: str) -> None:
    """The kernel's `n` is one symbol (`s…`, or `u…` for mark_unbacked) and the grid is over it."""
    occurrence = _dynamo_occurrence(report)
    n = str(occurrence["scalars"]["n"])
    assert n.startswith(prefix) and n[1:].isdigit(), occurrence
    (grid,) = occurrence["grid"]
    assert n in str(grid[0]) and grid[1:] == [1, 1], occurrence
    assert all("(dim 0 " in text for text in report["meta"]["inputs"]), report["meta"]["inputs"]


def check_per_call(report: dict[str, Any]) -> None:
    """Both calls, each marked, run one compile."""
    assert [g["compile_id"] for g in report["graphs"] if g["stage"] == "dynamo"] == ["0/0"]
    assert report["recompiles"] == []
    kernel = kernels_by_name(report)["add_kernel"]
    assert str(_dynamo_occurrence(report)["scalars"]["n"]).startswith("s")
    assert sum(o["launches"] for o in occurrences(kernel, "runtime")) == 2


#: Run key -> the CLI arguments after the target's, and the symbol prefix its `n` has.
MARKED_RUNS = {"Marked": ([], "s"), "MaybeMarked": ([], "s"), "Unbacked": ([], "u"), "Marked --dynamic": (["--dynamic"], "s")}


@pytest.mark.slow
@pytest.mark.parametrize("name", MARKED_RUNS)
def test_marked_size_is_symbolic_in_the_kernel_arguments(runs: CliRuns, name: str) -> None:
    check_marked(json_report(runs.get(name)), MARKED_RUNS[name][1])


@pytest.mark.slow
def test_per_call_marks_give_one_compile_for_two_sizes(runs: CliRuns) -> None:
    check_per_call(json_report(runs.get("PerCall")))
