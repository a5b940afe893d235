"""Clones, copies and fusion neighbourhood (tier a and b): analyses on saved captures and golden
files for `--show fusion` (the output-code parser itself: tests/test_textformats.py).

Captures are real compile-only runs of the samples (tests/fixtures/README.md). Expectations
come from the samples' sources and docstrings (tests/_expect.py reads them), never from the
fixtures themselves.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from _expect import REPO, kernel_pointer_params, kernel_stored_params, line_of
from test_render import compare_gold
from _expect import explain, json_report, run_cli
from tritoninspect.analyse import build_report
from tritoninspect.capture.kernel_ops import fused_ops
from tritoninspect.model.records import Capture
from tritoninspect.render import render
from tritoninspect.render.fusion import render_fusion
from tritoninspect.model.report import Graph, Kernel, Occurrence, Report

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CAPTURES = ("add_raw", "triton_op", "custom_op", "inplace", "inline_asm")


def load(name: str) -> Capture:
    return Capture.from_json((FIXTURES / f"capture_{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    return {name: build_report(load(name)) for name in CAPTURES}


def sample(name: str) -> Path:
    return REPO / "samples" / f"{name}.py"


def only_kernel(report: Report) -> Kernel:
    (kernel,) = report.kernels
    return kernel


def output_graph(report: Report) -> Graph:
    (graph,) = [g for g in report.graphs if g.stage == "output_code"]
    return graph


def stage(kernel: Kernel, name: str) -> list[Occurrence]:
    return [o for o in kernel.occurrences if o.stage == name]


# --- the fixtures carry what the analysis needs ---------------------------------------------------


@pytest.mark.parametrize("name", CAPTURES)
def test_captures_hold_the_final_post_grad_graph_and_the_calls(name: str) -> None:
    capture = load(name)
    stages = [(g.stage, g.part) for g in capture.graphs]
    assert ("post_grad_final", "inference") in stages
    assert stages.index(("post_grad", "inference")) < stages.index(("post_grad_final", "inference"))
    assert all(code.calls for code in capture.output_code)


@pytest.mark.parametrize("name", CAPTURES)
def test_report_with_fusion_fields_round_trips_through_json(reports: dict[str, Report], name: str) -> None:
    report = reports[name]
    assert report.diagnostics == () or {d.source for d in report.diagnostics} == {"interpreter"}
    assert Report.from_json(report.to_json()) == report


# --- a raw launch between two ops --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["add_raw", "triton_op"])
def test_visible_kernel_sits_between_sin_and_cos_mul(reports: dict[str, Report], name: str) -> None:
    report = reports[name]
    kernel = only_kernel(report)
    graph = output_graph(report)
    assert [c.kind for c in graph.code_calls] == ["inductor", "user", "inductor"]
    assert (graph.inductor_kernels, graph.user_kernels, graph.extern_calls, graph.copies) == (2, 1, 0, 0)
    (launch,) = stage(kernel, "output_code")
    (n,) = launch.neighbourhood
    assert (n.compile_id, n.part, n.index, n.call) == ("0/0", "inference", 1, launch.inductor_name)
    assert n.before.ops == ("sin",) and n.after.ops == ("cos", "mul")
    # sin feeds the kernel's input; cos * 2 reads what the kernel stored.
    stored = kernel_stored_params(sample(name), kernel.name)
    assert [(s.flow, s.arg in stored) for s in n.before.shared] == [("producer", False)]
    assert [(s.flow, s.arg) for s in n.after.shared] == [("consumer", a) for a in stored]
    assert n.related == (n.before, n.after)
    assert n.epilogue_fusion == "off"  # torch 2.13 can, but only when asked


def test_output_buffer_is_reinplaced(reports: dict[str, Report]) -> None:
    kernel = only_kernel(reports["add_raw"])
    (aot,) = stage(kernel, "aot_inference")
    stored = tuple(kernel_stored_params(sample("add_raw"), kernel.name))
    assert aot.clones.before_reinplace == stored and aot.clones.after_reinplace == ()
    (arg,) = aot.clones.arguments
    assert (arg.reason, arg.cloned, arg.tensor, arg.bytes) == ("written", False, "float32[64]", 64 * 4)
    assert (aot.clones.bytes, aot.clones.copies, aot.clones.fallback) == (0, (), None)
    # Only functional-HOP nodes of the AOT graph carry clones; only launches carry neighbourhoods.
    others = [o for o in kernel.occurrences if o is not aot]
    assert all(o.clones is None for o in others)
    assert [o.stage for o in kernel.occurrences if o.neighbourhood] == ["output_code"]


# --- an opaque custom op -------------------------------------------------------------------------------


def test_opaque_op_splits_inductor_kernels_around_its_extern_call(reports: dict[str, Report]) -> None:
    report = reports["custom_op"]
    kernel = only_kernel(report)
    graph = output_graph(report)
    assert (graph.inductor_kernels, graph.user_kernels, graph.extern_calls) == (2, 0, 1)
    (runtime,) = stage(kernel, "runtime")
    (n,) = runtime.neighbourhood
    assert re.fullmatch(r"torch\.ops\.tisample_custom_op\.add\.\w+", n.call)
    assert graph.code_calls[n.index].kind == "extern"
    # Inductor names the sin kernel after the op it feeds (cpp_fused_add_sin_0); it fused only sin.
    assert n.before.ops == ("sin",) and n.after.ops == ("cos", "mul")
    assert n.before.ops_source == n.after.ops_source == "inductor"
    assert [s.flow for s in n.before.shared] == ["producer"]
    assert [s.flow for s in n.after.shared] == ["consumer"]
    assert n.epilogue_fusion is None


# --- which ops a kernel fused: Inductor's records, never its name ---------------------------------------------


def test_fused_ops_leave_out_the_op_whose_extern_call_reads_the_kernel() -> None:
    # What Inductor records for tests/assets/softmax_cop_model.py (torch 2.13, CPU): the
    # kernel computing (x + w) * 2 for the opaque op counts that op among its origins.
    origins = (("buf0", (("softmax_cop", "tiasset.softmax_cop"), ("mul", "mul"), ("add", "add"))),)
    positions = {"arg0_1": 0, "arg1_1": 1, "add": 2, "mul": 3, "softmax_cop": 4}
    assert fused_ops(origins, {"buf0": frozenset({"softmax_cop"})}, positions) == ("add", "mul")
    # Read by no extern kernel, the op stays: a kernel computing a node's epilogue belongs to it.
    assert fused_ops(origins, {"buf9": frozenset({"softmax_cop"})}, positions) == ("add", "mul", "tiasset.softmax_cop")
    # Several nodes of one ATen op (a decomposed softmax: exp, sum, div) name it once.
    decomposed = (("buf1", (("exp", "_softmax"), ("sum_1", "_softmax"), ("div", "_softmax"))),)
    assert fused_ops(decomposed, {}, {}) == ("_softmax",)


def test_ops_neither_recorded_nor_commented_are_unknown_not_guessed() -> None:
    capture = load("add_raw")
    codes = [dataclasses.replace(c, calls=tuple(
        dataclasses.replace(x, ops=(), ops_source="unknown") if x.kind == "inductor" else x for x in c.calls
    )) for c in capture.output_code]
    report = build_report(dataclasses.replace(capture, output_code=codes))
    graph = output_graph(report)
    assert [(c.ops, c.ops_source) for c in graph.code_calls if c.kind == "inductor"] == [((), "unknown")] * 2
    text = render_fusion(report, color=False, width=200)
    assert re.search(r"cpp_fused_sin_0\s+inductor\s+unknown\s", text)
    assert "before  cpp_fused_sin_0 (#0, inductor: ops unknown)" in text
    assert "inductor: sin" not in text


def test_ops_from_a_comment_lose_the_opaque_op_it_names() -> None:
    capture = load("custom_op")
    (code,) = capture.output_code
    extern = next(c for c in code.calls if c.kind == "extern")
    op = ".".join(extern.name.split(".")[2:4])  # torch.ops.ns.name.default -> ns.name
    calls = tuple(dataclasses.replace(c, ops=("sin", op), ops_source="comment") if c.name.startswith("cpp_fused_add_sin")
                  else c for c in code.calls)
    graph = output_graph(build_report(dataclasses.replace(capture, output_code=[dataclasses.replace(code, calls=calls)])))
    (sin,) = [c for c in graph.code_calls if c.name.startswith("cpp_fused_add_sin")]
    assert (sin.ops, sin.ops_source) == (("sin",), "comment")


@pytest.mark.slow
def test_fusion_view_lists_only_the_ops_a_kernel_fused(tmp_path: Path) -> None:
    """End to end (compile-only): the kernel Inductor names cpp_fused_add_mul_softmax_cop_0 fused
    add and mul; softmax_cop is the opaque op called after it."""
    proc = run_cli(["graph", "tests/assets/softmax_cop_model.py:Net", "--device", "cpu", "--json"])
    rep = json_report(proc)
    (graph,) = [g for g in rep["graphs"] if g["stage"] == "output_code"]
    first = graph["code_calls"][0]
    assert first["name"].startswith("cpp_fused_add_mul_softmax_cop_"), graph["code_calls"]
    assert (first["ops"], first["ops_source"]) == (["add", "mul"], "inductor")
    assert [(c["kind"], c["ops"]) for c in graph["code_calls"][1:]] == [("extern", []), ("inductor", ["sin"])]
    saved = tmp_path / "report.json"
    saved.write_text(proc.stdout)
    shown = run_cli(["graph", str(saved), "--show", "fusion"])
    assert shown.returncode == 0, explain(shown)
    (row,) = [line for line in shown.stdout.splitlines() if "cpp_fused_add_mul_softmax_cop_" in line]
    assert re.search(r"\binductor\s+add, mul\s+arg", row), row


# --- an in-place kernel ----------------------------------------------------------------------------------


def test_inplace_first_launch_reinplaced_second_cloned_and_copied_back(reports: dict[str, Report]) -> None:
    report = reports["inplace"]
    kernel = only_kernel(report)
    written = tuple(kernel_stored_params(sample("inplace"), kernel.name))
    whole, view = stage(kernel, "aot_inference")
    assert whole.clones.before_reinplace == view.clones.before_reinplace == written
    assert whole.clones.after_reinplace == () and whole.clones.copies == ()
    assert view.clones.after_reinplace == written
    (arg,) = view.clones.arguments
    assert (arg.cloned, arg.tensor, arg.bytes) == (True, "float32[32]", 32 * 4)  # x[:32] of float32
    assert view.clones.bytes == 32 * 4
    # One copy into the clone before the launch, one back into x after it.
    graph = output_graph(report)
    copies = [i for i, c in enumerate(graph.code_calls) if c.copy]
    assert graph.copies == 2 and len(view.clones.copies) == 2
    launches = [i for i, c in enumerate(graph.code_calls) if c.kind == "user"]
    assert copies[0] < launches[1] < copies[1]
    assert view.clones.copies == tuple(graph.code_calls[i].name for i in copies)


def test_inplace_launches_each_have_a_neighbourhood(reports: dict[str, Report]) -> None:
    kernel = only_kernel(reports["inplace"])
    launches = stage(kernel, "output_code")
    assert len(launches) == 2 and all(len(o.neighbourhood) == 1 for o in launches)
    second = launches[1].neighbourhood[0]
    assert [s.flow for s in second.before.shared] == ["producer"]
    assert [s.flow for s in second.after.shared] == ["consumer"]


# --- mutation analysis falls back ---------------------------------------------------------------------------


def test_fallback_clones_every_tensor_and_names_the_line(reports: dict[str, Report]) -> None:
    report = reports["inline_asm"]
    kernel = only_kernel(report)
    src = sample("inline_asm")
    (aot,) = stage(kernel, "aot_inference")
    pointers = tuple(kernel_pointer_params(src, kernel.name))
    assert aot.clones.before_reinplace == pointers != tuple(kernel_stored_params(src, kernel.name))
    assert {a.reason for a in aot.clones.arguments} == {"assumed"}
    assert "tt.elementwise_inline_asm" in aot.clones.fallback
    assert aot.clones.fallback_file.endswith("inline_asm.py")
    assert aot.clones.fallback_line == line_of(src, "y = tl.inline_asm_elementwise(")
    # The launch was skipped in the interpreter, and the report says so; the clones are still known.
    assert [d.source for d in report.diagnostics] == ["interpreter"]


# --- a kernel that vanishes ---------------------------------------------------------------------------------


def test_kernel_missing_from_output_code_names_the_dropped_node() -> None:
    capture = load("add_raw")
    codes = [dataclasses.replace(c, user_kernels=(), calls=tuple(x for x in c.calls if x.kind != "user"))
             for c in capture.output_code]
    kernel = only_kernel(build_report(dataclasses.replace(capture, output_code=codes)))
    (final,) = [n for n in capture.nodes if n.stage == "post_grad_final"]
    assert kernel.missing_from_output_code == ("0/0",)
    assert [(d.compile_id, d.part, d.node, d.last_stage) for d in kernel.dropped_nodes] == [
        ("0/0", "inference", final.node, "post_grad_final")
    ]


def test_kernel_dropped_before_aot_is_missing_too() -> None:
    """AOTAutograd drops a launch nothing reads: only the Dynamo graph held it."""
    capture = load("add_raw")
    nodes = [n for n in capture.nodes if n.stage == "dynamo"]
    codes = [dataclasses.replace(c, user_kernels=(), calls=tuple(x for x in c.calls if x.kind != "user"))
             for c in capture.output_code]
    kernel = only_kernel(build_report(dataclasses.replace(capture, nodes=nodes, output_code=codes)))
    assert [(d.part, d.node, d.last_stage) for d in kernel.dropped_nodes] == [("", nodes[0].node, "dynamo")]
    assert kernel.missing_from_output_code == ("0/0",)


def test_launched_kernels_have_no_dropped_nodes(reports: dict[str, Report]) -> None:
    assert all(k.dropped_nodes == () and k.missing_from_output_code == () for r in reports.values() for k in r.kernels)


def test_a_failing_fusion_analysis_is_a_diagnostic() -> None:
    capture = load("add_raw")
    broken = dataclasses.replace(capture, output_code=[dataclasses.replace(capture.output_code[0], calls=None)])
    report = build_report(broken)
    assert [d.source for d in report.diagnostics] == ["fusion"]
    assert only_kernel(report).occurrences  # the kernels analysis still stands


# --- the fusion view (golden files) -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["add_raw", "custom_op", "inplace", "inline_asm"])
def test_fusion_view_gold(reports: dict[str, Report], name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    report = reports[name]
    compare_gold(f"fusion_{name}.txt", render(report, "text", show="fusion", color=False, width=100) + "\n", report)


def test_fusion_view_says_which_kernels_inductor_wrote(reports: dict[str, Report]) -> None:
    report = reports["add_raw"]
    assert "CPU (C++) kernels in compile-only mode" in render_fusion(report, color=False)
    gpu = dataclasses.replace(report, meta=dataclasses.replace(report.meta, mode="gpu"))
    assert "Inductor's kernels: Triton kernels" in render_fusion(gpu, color=False)


def test_fusion_view_of_an_opaque_op_names_the_split(reports: dict[str, Report]) -> None:
    text = render_fusion(reports["custom_op"], color=False, width=200)
    assert "inside opaque tisample_custom_op::add: extern call torch.ops.tisample_custom_op.add." in text
    assert "sin and cos, mul compiled as separate kernels around it" in text


def test_fusion_view_flags_a_removed_kernel() -> None:
    capture = load("add_raw")
    codes = [dataclasses.replace(c, user_kernels=(), calls=tuple(x for x in c.calls if x.kind != "user"))
             for c in capture.output_code]
    text = render_fusion(build_report(dataclasses.replace(capture, output_code=codes)), color=False, width=200)
    assert re.search(r"REMOVED \[0/0\] inference: node \w+ \(last in the post_grad_final graph\)", text)
