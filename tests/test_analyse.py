"""Analyses on saved captures (tier a): no compiling, no torch.compile, just records in, report out.

The fixtures are real compile-only captures of five samples (tests/fixtures/README.md says how
they were made). Expected values come from the samples' sources (tests/_expect.py reads them);
variants of a capture (a kernel missing from output code, a mutation-analysis fallback, ...)
are made here with dataclasses.replace, since no sample produces them on purpose.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from _expect import (
    EXPECTED,
    REPO,
    kernel_constexprs,
    kernel_decorators,
    kernel_first_line,
    kernel_stored_params,
    line_of,
)
from tritoninspect.analyse import build_report
from tritoninspect.analyse.breaks import analyse_graph_breaks
from tritoninspect.analyse.graphs import analyse_graphs
from tritoninspect.analyse.kernels import analyse_kernels
from tritoninspect.model.records import Capture, FallbackRecord
from tritoninspect.model.report import Diagnostic, Kernel, MutationFallback, Report

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CAPTURES = ("add_raw", "triton_op", "custom_op", "graph_break", "autograd_function", "triton_op_autograd")
GRAPH_STAGES = ("dynamo", "aot_forward", "aot_backward", "aot_inference", "post_grad")


def load(name: str) -> Capture:
    return Capture.from_json((FIXTURES / f"capture_{name}.json").read_text(encoding="utf-8"))


def kernel(report: Report, name: str) -> Kernel:
    found = report.kernel(name)
    assert found is not None, [k.name for k in report.kernels]
    return found


def by_stage(k: Kernel) -> Counter[str]:
    return Counter(o.stage for o in k.occurrences)


def sample(name: str) -> Path:
    return REPO / "samples" / f"{name}.py"


def unlaunch(
    capture: Capture, compile_id: str | None = None, part: str | None = None, *, drop: bool = False
) -> Capture:
    """The capture with the user kernels of some output code not launched (or not defined at all)."""
    codes = []
    for code in capture.output_code:
        if (compile_id is None or code.compile_id == compile_id) and (part is None or code.part == part):
            kernels = () if drop else tuple(dataclasses.replace(k, launched=False) for k in code.user_kernels)
            code = dataclasses.replace(code, user_kernels=kernels)
        codes.append(code)
    return dataclasses.replace(capture, output_code=codes)


# --- the fixtures themselves ----------------------------------------------------------------


@pytest.mark.parametrize("name", CAPTURES)
def test_fixture_round_trips(name: str) -> None:
    text = (FIXTURES / f"capture_{name}.json").read_text(encoding="utf-8")
    assert Capture.from_json(text).to_json() + "\n" == text


@pytest.mark.parametrize("name", CAPTURES)
def test_report_round_trips_through_json(name: str) -> None:
    report = build_report(load(name))
    assert Report.from_json(report.to_json()) == report


@pytest.mark.parametrize("name", CAPTURES)
def test_real_captures_analyse_cleanly(name: str) -> None:
    report = build_report(load(name))
    assert report.diagnostics == ()
    assert report.meta.mode == "compile-only"
    assert report.meta.target == f"samples/{name}.py:Net"
    assert report.meta.torch == load(name).meta["torch"]


# --- kernels: identity and entries ------------------------------------------------------------


@pytest.mark.parametrize(("name", "kernel_name", "entries"), [
    ("add_raw", "add_kernel", ("hop",)),
    ("triton_op", "add_kernel", ("triton_op",)),
    ("custom_op", "add_kernel", ("custom_op",)),
    ("autograd_function", "mul_kernel", ("hop",)),
    ("graph_break", "add_kernel", ("hop",)),
    ("graph_break", "scale_kernel", ("eager",)),
])
def test_entry_kinds(name: str, kernel_name: str, entries: tuple[str, ...]) -> None:
    k = kernel(build_report(load(name)), kernel_name)
    assert k.entries == entries
    assert (k.file, k.line) == (f"samples/{name}.py", kernel_first_line(sample(name), kernel_name))
    assert list(k.decorators) == kernel_decorators(sample(name), kernel_name)
    assert list(k.constexpr_params) == kernel_constexprs(sample(name), kernel_name)


def test_kernels_sorted_by_source_position() -> None:
    report = build_report(load("graph_break"))
    assert [k.name for k in report.kernels] == ["add_kernel", "scale_kernel"]
    assert [k.line for k in report.kernels] == sorted(k.line for k in report.kernels)


def test_hop_occurrences_per_stage() -> None:
    k = kernel(build_report(load("add_raw")), "add_kernel")
    # One node per captured graph, the definition in the output code, one counted launch record.
    assert by_stage(k) == {"dynamo": 1, "aot_inference": 1, "post_grad": 1, "post_grad_final": 1, "output_code": 1, "runtime": 1}
    graph = [o for o in k.occurrences if o.stage in GRAPH_STAGES]
    assert all(o.in_output_code is True and o.compile_id == "0/0" for o in graph)
    (code,) = [o for o in k.occurrences if o.stage == "output_code"]
    assert code.in_output_code is True
    assert {o.inductor_name for o in graph} == {code.inductor_name}
    (run,) = [o for o in k.occurrences if o.stage == "runtime"]
    assert (run.entry, run.compile_id, run.launches) == ("hop", "0/0", 1)
    assert k.missing_from_output_code == ()


def test_tensors_to_clone_is_the_output_pointer() -> None:
    k = kernel(build_report(load("add_raw")), "add_kernel")
    outputs = tuple(kernel_stored_params(sample("add_raw"), "add_kernel"))
    assert outputs == ("out_ptr",)
    for o in k.occurrences:
        if o.stage in ("aot_inference", "post_grad"):
            assert o.tensors_to_clone == outputs
        elif o.stage == "dynamo":
            assert o.tensors_to_clone is None  # the mutation form clones nothing


def test_constexprs_apart_from_scalars() -> None:
    k = kernel(build_report(load("add_raw")), "add_kernel")
    # add_raw.py launches add_kernel[...](y, w, out, n, BLOCK=16) with n = 64 elements.
    for o in k.occurrences:
        if o.stage in GRAPH_STAGES:
            assert (o.constexprs, o.scalars) == ({"BLOCK": 16}, {"n": 64}), o


def test_triton_op_occurrences_name_the_op() -> None:
    report = build_report(load("triton_op"))
    k = kernel(report, "add_kernel")
    visible = [o for o in k.occurrences if o.stage != "runtime"]
    assert visible and all(o.custom_op == "tisample_triton_op::add" for o in visible)
    assert all(o.in_output_code is True for o in visible)
    assert report.opaque_ops == ()  # Inductor sees through a triton_op


def test_triton_ops_reached_inside_an_op_and_from_its_registered_backward() -> None:
    """samples/triton_op_autograd.py: each kernel under the triton_op that launched it, though
    the graphs call only the outer op (nested) or none (the backward's op)."""
    report = build_report(load("triton_op_autograd"))
    expected = EXPECTED["triton_op_autograd"]
    for name, op in expected.ops.items():
        k = kernel(report, name)
        assert k.entries == expected.kernels[name] == ("triton_op",)
        seen = [o for o in k.occurrences if o.stage != "runtime"]
        assert seen and all(o.custom_op == op and o.in_output_code is True for o in seen), seen
    backward = kernel(report, "mul_grads_kernel")
    assert {o.part for o in backward.occurrences if o.stage != "runtime"} == {"backward"}
    assert report.opaque_ops == ()


def test_custom_op_is_opaque_with_its_kernel_inside() -> None:
    report = build_report(load("custom_op"))
    k = kernel(report, "add_kernel")
    assert [(o.stage, o.entry, o.custom_op) for o in k.occurrences] == [
        ("runtime", "custom_op", "tisample_custom_op::add")
    ]
    assert {(op.op, op.kernels) for op in report.opaque_ops} == {("tisample_custom_op::add", ("add_kernel",))}
    assert {op.stage for op in report.opaque_ops} == {"dynamo", "aot_inference", "post_grad", "post_grad_final"}


def test_opaque_op_without_a_seen_launch_lists_no_kernel() -> None:
    capture = load("custom_op")
    capture = dataclasses.replace(capture, launches=[])
    report = build_report(capture)
    assert report.opaque_ops and all(op.kernels == () for op in report.opaque_ops)
    assert kernel(report, "add_kernel").entries == ()


def test_launch_outside_any_graph_is_eager() -> None:
    capture = load("add_raw")
    launches = [dataclasses.replace(la, in_graph=False, compile_id=None) for la in capture.launches]
    k = kernel(build_report(dataclasses.replace(capture, launches=launches)), "add_kernel")
    # The inductor launch is matched through the output code by name, so it still counts.
    assert k.entries == ("hop", "eager")


def test_graph_break_kernels_on_both_sides() -> None:
    report = build_report(load("graph_break"))
    add = kernel(report, "add_kernel")
    dynamo_ids = sorted({g.compile_id for g in report.graphs if g.stage == "dynamo"})
    assert len(dynamo_ids) == 3
    assert {o.compile_id for o in add.occurrences if o.stage == "dynamo"} == {dynamo_ids[0], dynamo_ids[-1]}
    scale = kernel(report, "scale_kernel")
    assert [(o.stage, o.compile_id, o.launches) for o in scale.occurrences] == [("runtime", None, 1)]


def test_autograd_function_backward() -> None:
    report = build_report(load("autograd_function"))
    k = kernel(report, "mul_kernel")
    stages = by_stage(k)
    assert stages["aot_forward"] >= 1 and stages["aot_backward"] >= 1
    assert {(g.stage, g.part) for g in report.graphs} >= {("output_code", "forward"), ("output_code", "backward")}
    assert sum(o.launches or 0 for o in k.occurrences if o.stage == "runtime") == 3  # 1 forward + 2 backward
    assert {o.subgraph for o in k.occurrences if o.stage == "dynamo"} == {"fwd_body_0", "bwd_body_0"}


# --- missing from output code -----------------------------------------------------------------


def test_kernel_not_launched_by_output_code_is_missing() -> None:
    k = kernel(build_report(unlaunch(load("add_raw"))), "add_kernel")
    assert k.missing_from_output_code == ("0/0",)
    assert all(o.in_output_code is False for o in k.occurrences if o.stage in GRAPH_STAGES)
    (code,) = [o for o in k.occurrences if o.stage == "output_code"]
    assert code.in_output_code is False


def test_kernel_absent_from_output_code_is_missing() -> None:
    k = kernel(build_report(unlaunch(load("add_raw"), drop=True)), "add_kernel")
    assert k.missing_from_output_code == ("0/0",)
    assert [o for o in k.occurrences if o.stage == "output_code"] == []
    assert all(o.in_output_code is False for o in k.occurrences if o.stage in GRAPH_STAGES)


def test_missing_only_where_it_is_missing() -> None:
    k = kernel(build_report(unlaunch(load("graph_break"), "2/0")), "add_kernel")
    assert k.missing_from_output_code == ("2/0",)
    flags = {(o.compile_id, o.in_output_code) for o in k.occurrences if o.stage in GRAPH_STAGES}
    assert flags == {("0/0", True), ("2/0", False)}


def test_missing_from_the_backward_part_only() -> None:
    k = kernel(build_report(unlaunch(load("autograd_function"), part="backward")), "mul_kernel")
    assert k.missing_from_output_code == ("0/0",)
    assert {o.in_output_code for o in k.occurrences if o.stage == "aot_backward"} == {False}
    assert {o.in_output_code for o in k.occurrences if o.stage == "aot_forward"} == {True}


def test_no_output_code_is_unknown_not_missing() -> None:
    capture = dataclasses.replace(load("add_raw"), output_code=[])
    k = kernel(build_report(capture), "add_kernel")
    assert k.missing_from_output_code == ()
    assert all(o.in_output_code is None for o in k.occurrences if o.stage in GRAPH_STAGES)


# --- mutation-analysis fallbacks ------------------------------------------------------------------


def test_fallback_is_attributed_to_its_kernel_and_compile() -> None:
    capture = load("graph_break")
    capture.fallbacks.append(FallbackRecord("0/0", "graph_break.add_kernel", "RuntimeError: ttir failed"))
    report = build_report(capture)
    causes = {(o.compile_id, o.mutation_analysis_fallback) for o in kernel(report, "add_kernel").occurrences
              if o.stage in GRAPH_STAGES}
    assert causes == {("0/0", "RuntimeError: ttir failed"), ("2/0", None)}
    assert report.mutation_fallbacks_unattributed == ()


def test_fallback_causes_are_joined_once_each() -> None:
    capture = load("add_raw")
    for cause in ("B: second", "A: first", "B: second"):
        capture.fallbacks.append(FallbackRecord("0/0", "add_raw.add_kernel", cause))
    k = kernel(build_report(capture), "add_kernel")
    assert {o.mutation_analysis_fallback for o in k.occurrences if o.stage in GRAPH_STAGES} == {"A: first; B: second"}


def test_unattributed_fallbacks() -> None:
    capture = load("add_raw")
    capture.fallbacks += [FallbackRecord("1/0", None, "Y"), FallbackRecord("0/0", None, "X")]
    capture.fallbacks.append(FallbackRecord("0/0", None, "X"))
    report = build_report(capture)
    assert report.mutation_fallbacks_unattributed == (MutationFallback("0/0", "X"), MutationFallback("1/0", "Y"))
    assert all(o.mutation_analysis_fallback is None for o in kernel(report, "add_kernel").occurrences)


# --- graph breaks -----------------------------------------------------------------------------------


def test_graph_breaks_point_at_the_breaking_lines() -> None:
    report = build_report(load("graph_break"))
    src = sample("graph_break")
    expected = [line_of(src, "h = scale(h, 0.5)"), line_of(src, "torch._dynamo.graph_break()")]
    assert [(b.file, b.line) for b in report.graph_breaks] == [("samples/graph_break.py", n) for n in expected]
    assert [b.frame_skipped for b in report.graph_breaks] == [False, False]
    stacks = [b.user_stack[-1] for b in report.graph_breaks]
    assert stacks == [f"samples/graph_break.py:{n} in forward" for n in expected]


def test_graph_break_logged_twice_is_reported_once() -> None:
    capture = load("graph_break")
    first = capture.breaks[0]
    capture.breaks += [first, dataclasses.replace(first)]
    assert len(build_report(capture).graph_breaks) == 2


def test_same_break_in_another_compile_is_kept() -> None:
    capture = load("graph_break")
    capture.breaks.append(dataclasses.replace(capture.breaks[0], compile_id="3/0"))
    breaks = analyse_graph_breaks(capture)["graph_breaks"]
    assert [b.compile_id for b in breaks] == ["0/0", "1/0", "3/0"]


def test_no_breaks_in_a_single_graph() -> None:
    assert build_report(load("add_raw")).graph_breaks == ()
    assert build_report(load("add_raw")).recompiles == ()


# --- graphs -----------------------------------------------------------------------------------------


def test_graphs_in_capture_order_then_output_code() -> None:
    capture = load("add_raw")
    graphs = analyse_graphs(capture)["graphs"]
    assert [(g.stage, g.part) for g in graphs] == [(g.stage, g.part) for g in capture.graphs] + [
        ("output_code", c.part) for c in capture.output_code
    ]
    (code,) = [g for g in graphs if g.stage == "output_code"]
    assert code.op_count >= 1  # the kernel's .run( launch
    assert code.code == capture.output_code[0].code


# --- diagnostics ------------------------------------------------------------------------------------


def test_failing_analysis_becomes_a_diagnostic_and_the_rest_run() -> None:
    def boom(capture: Capture) -> dict[str, object]:
        raise RuntimeError("kaput")

    report = build_report(load("add_raw"), [("graphs", analyse_graphs), ("boom", boom), ("kernels", analyse_kernels)])
    assert report.diagnostics == (Diagnostic("error", "boom", "analysis failed: RuntimeError: kaput"),)
    assert report.graphs and [k.name for k in report.kernels] == ["add_kernel"]
    assert report.graph_breaks == ()  # not run: the default of the report


def test_capture_problems_become_warnings() -> None:
    capture = load("add_raw")
    capture.problems.append(("inductor", "[0/0] the graph ran uncompiled"))
    report = build_report(capture)
    assert report.diagnostics == (Diagnostic("warning", "inductor", "[0/0] the graph ran uncompiled"),)


def test_a_bad_record_sinks_only_its_analysis() -> None:
    capture = load("graph_break")
    # A line number that is not a number: the kernel analysis cannot order the kernels.
    kid = "graph_break.add_kernel"
    capture.kernels[kid] = dataclasses.replace(capture.kernels[kid], line="17")  # type: ignore[arg-type]
    report = build_report(capture)
    (diagnostic,) = report.diagnostics
    assert (diagnostic.severity, diagnostic.source) == ("error", "kernels")
    assert diagnostic.message.startswith("analysis failed: TypeError")
    assert report.kernels == ()
    assert len(report.graph_breaks) == 2 and report.graphs
