"""`tritoninspect diff` without compiling (tiers a and b): name normalisation, the diff of
saved captures, the DiffReport model, its terminal gold file, the side protocol and timing stats.

Reports come from the real compile-only captures in tests/fixtures/ (add_raw, triton_op,
custom_op: the same kernel raw, in a triton_op and in a custom_op). "Renumbered" variants
are made here by renaming every generated name in a graph's text consistently, the way a
second compile of the same program would.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from _expect import REPO, cli_env
from _zygote import run as zygote_run
from test_render import compare_gold
from tritoninspect.analyse import build_report
from tritoninspect.analyse.diff import COMPILE_ONLY_BENCH_NOTE, bench_pair, diff_reports, match_kernels
from tritoninspect.analyse.diff_text import (
    canonical_name,
    clone_copy_count,
    normalise_graph,
    output_code_skeleton,
    output_code_stats,
)
from tritoninspect.model.records import Capture
from tritoninspect.model.diff_report import DIFF_SCHEMA_VERSION, DiffReport, SideBench, Timing
from tritoninspect.model.errors import CaptureError, ExitCode, InputsError, ReportError, UserCodeError
from tritoninspect.render.diff import CHANGED, DiffRenderer
from tritoninspect.model.report import Graph, Report
from tritoninspect.run.pipeline import CaptureOptions
from tritoninspect.children import side_child as child
from tritoninspect.children.side import (
    SideResult,
    build_diff,
    capture_side,
    check_save_dir,
    child_command,
    error_from_payload,
    save_reports,
)

FIXTURES = REPO / "tests" / "fixtures"


def fixture_report(name: str) -> Report:
    return build_report(Capture.from_json((FIXTURES / f"capture_{name}.json").read_text()))


@pytest.fixture(scope="module")
def raw() -> Report:
    return fixture_report("add_raw")


@pytest.fixture(scope="module")
def custom() -> Report:
    return fixture_report("custom_op")


@pytest.fixture(scope="module")
def triton_op() -> Report:
    return fixture_report("triton_op")


# --- renumbering, as a second compile would do it ---------------------------------------------


def _bump(match: re.Match[str], by: int) -> str:
    return f"{match[1]}{int(match[2]) + by}"


def renumber(code: str) -> str:
    """The same program, every generated name numbered differently and sources moved."""
    code = re.sub(r"\b(buf)(\d+)\b", lambda m: _bump(m, 11), code)
    code = re.sub(r"\b(arg)(\d+)(?=_\d+\b)", lambda m: _bump(m, 3), code)
    code = re.sub(r"\b(kernel_idx = )(\d+)", lambda m: _bump(m, 4), code)
    code = re.sub(r"\b(constant_args_idx = )(\d+)", lambda m: _bump(m, 7), code)
    code = re.sub(r"# File: \S+:(\d+)", lambda m: f"# File: /elsewhere/model.py:{int(m[1]) + 100}", code)
    code = re.sub(r"# kernel path: \S+", "# kernel path: /tmp/torchinductor_x/ab/cabcdef0123.py", code)
    # Node names FX deduplicated, and Inductor's running kernel index.
    for name in ("sin", "cos", "mul", "getitem", "empty", "triton_kernel_wrapper_functional_proxy",
                 "triton_kernel_wrapper_mutation", "add_default"):
        code = re.sub(rf"(?<!\.)\b{name}\b(?!\.)", f"{name}_2", code)
    code = re.sub(r"\b(add_kernel_|cpp_fused_\w+?_)(\d+)\b", lambda m: _bump(m, 5), code)
    return code


def renumbered(report: Report) -> Report:
    graphs = tuple(dataclasses.replace(g, code=renumber(g.code)) for g in report.graphs)
    return dataclasses.replace(report, graphs=graphs)


# --- normalisation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("buf0", "buf#"), ("buf12", "buf#"), ("arg0_1", "arg#"), ("arg13_2", "arg#"), ("add_3", "add"),
        ("triton_kernel_wrapper_functional_proxy_2", "triton_kernel_wrapper_functional_proxy"),
        ("add_kernel_0", "add_kernel"), ("triton_poi_fused_sin_0", "triton_poi_fused_sin"),
        ("sin", "sin"), ("l_x_", "l_x_"), ("conv2d", "conv2d"), ("stream0", "stream0"),
    ],
)
def test_canonical_name(name: str, canonical: str) -> None:
    assert canonical_name(name) == canonical


def test_renumbering_changes_the_text_but_not_the_normalised_graph(raw: Report) -> None:
    for graph in raw.graphs:
        moved = renumber(graph.code)
        assert moved != graph.code, f"renumber() touched nothing in {graph.stage}"
        assert normalise_graph(moved, graph.stage) == normalise_graph(graph.code, graph.stage), graph.stage


def test_renumbered_report_gives_an_empty_diff(raw: Report) -> None:
    diff = diff_reports(raw, renumbered(raw))
    assert diff.graph_diffs and all(not g.changed and g.lines == () for g in diff.graph_diffs)
    assert diff.changed_rows == ()
    assert diff.notes == ()


def test_a_real_change_shows_in_the_diff(raw: Report) -> None:
    post_grad = next(g for g in raw.graphs if g.stage == "post_grad")
    lines = post_grad.code.splitlines()
    at = next(i for i, line in enumerate(lines) if "aten.cos" in line)
    extra = '        neg: "f32[64]" = torch.ops.aten.neg.default(getitem)'
    changed = dataclasses.replace(post_grad, code="\n".join(lines[:at] + [extra] + lines[at:]))
    other = dataclasses.replace(raw, graphs=tuple(changed if g is post_grad else g for g in raw.graphs))
    diff = diff_reports(raw, renumbered(other))
    differing = [g for g in diff.graph_diffs if g.changed]
    assert [(g.stage, g.part) for g in differing] == [("post_grad", post_grad.part)]
    added = [line for line in differing[0].lines if line.startswith("+") and not line.startswith("+++")]
    assert added == ['+        neg: "f32[64]" = torch.ops.aten.neg.default(getitem)']


def test_fx_release_trailers_and_comments_are_not_compared() -> None:
    a = 'def forward(self, arg0_1):\n    # File: /a/m.py:3 in forward\n    sin = torch.sin(arg0_1);  arg0_1 = None\n'
    b = 'def forward(self, arg0_1):\n\n    sin = torch.sin(arg0_1)\n'
    assert normalise_graph(a, "aot_inference") == normalise_graph(b, "aot_inference")


def test_numbers_that_are_not_names_stay() -> None:
    a = 'x: "f32[64]" = torch.ops.aten.mul.Tensor(arg0_1, 2)'
    b = 'x: "f32[128]" = torch.ops.aten.mul.Tensor(arg0_1, 3)'
    na, nb = normalise_graph(a, "aot_forward"), normalise_graph(b, "aot_forward")
    assert na != nb and "f32[64]" in na[0] and ", 2)" in na[0]


OUTPUT_CODE = '''# AOT ID: ['0_inference']
import torch
# kernel path: /tmp/torchinductor_u/ab/cab0123456789abcdef0123456789abcdef0.py
triton_poi_fused_sin_0 = async_compile.triton('triton_poi_fused_sin_0', \'\'\'
@triton.jit
def triton_poi_fused_sin_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):
    pass
\'\'\', device_str='cuda')


# Original path: /home/me/model.py:12
add_kernel_0 = async_compile.triton('add_kernel', \'\'\'
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass
\'\'\', device_str='cuda')


cpp_fused_copy_1 = async_compile.cpp_pybinding(['const float*', 'float*'], r\'\'\'
extern "C" void kernel(const float* in_ptr0, float* out_ptr0) {}
\'\'\')
async_compile.wait(globals())

class Runner:
    def call(self, args):
        arg0_1, = args
        args.clear()
        buf0 = empty_strided_cuda((64, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [sin], Original ATen: [aten.sin]
        stream0 = get_raw_stream(0)
        triton_poi_fused_sin_0.run(arg0_1, buf0, 64, stream=stream0)
        buf1 = empty_strided_cuda((64, ), (1, ), torch.float32)
        add_kernel_0.run(buf0, arg0_1, buf1, 64, 1, 1, 1, stream=stream0)
        buf2 = torch.ops.mylib.opaque.default(buf1)
        buf3 = extern_kernels.mm(buf2, buf2)
        buf4 = torch.ops.aten.clone.default(buf3)
        buf4.copy_(buf3)
        cpp_fused_copy_1(buf3, buf4)
        buf5 = buf0; del buf0  # reuse
        return (buf4, )

runner = Runner(partitions=[])
'''


def test_output_code_skeleton_keeps_definitions_and_call_body_only() -> None:
    lines = output_code_skeleton(OUTPUT_CODE).splitlines()
    assert lines[:3] == [
        "triton_poi_fused_sin_0 = async_compile.triton('triton_poi_fused_sin_0', ...)",
        "add_kernel_0 = async_compile.triton('add_kernel', ...)",
        "cpp_fused_copy_1 = async_compile.cpp_pybinding(['const float*', 'float*'], ...)",
    ]
    assert lines[3].strip() == "arg0_1, = args" and lines[-1].strip() == "return (buf4, )"
    assert not any("def triton_poi_fused_sin_0" in line or "runner" in line for line in lines)


def test_output_code_renumbered_normalises_equal() -> None:
    moved = OUTPUT_CODE.replace("_sin_0", "_sin_7").replace("add_kernel_0", "add_kernel_3")
    moved = re.sub(r"\bbuf(\d)\b", lambda m: f"buf{int(m[1]) * 2 + 5}", moved).replace("cab0123456789", "cff9876543210")
    assert normalise_graph(moved, "output_code") == normalise_graph(OUTPUT_CODE, "output_code")
    assert not any("0123456789" in line or "/tmp/" in line for line in normalise_graph(OUTPUT_CODE, "output_code"))


def test_output_code_stats() -> None:
    assert output_code_stats(OUTPUT_CODE) == {
        "Inductor kernels": 2,  # triton_poi_fused_sin_0, cpp_fused_copy_1
        "user Triton kernels": 1,  # add_kernel_0 (its "# Original path:" line)
        "kernel calls": 3,
        "extern kernel calls": 1,
        "aten op calls": 1,
        "custom op calls": 1,
    }


def test_clone_copy_count() -> None:
    # aten.clone and .copy_; cpp_fused_copy_1 is a kernel whose name says copy, not a clone/copy call.
    assert clone_copy_count(OUTPUT_CODE, "output_code") == 2
    fx = "clone = torch.ops.aten.clone.default(x)\ny = torch.ops.higher_order.f(tensors_to_clone = ['out'])"
    assert clone_copy_count(fx, "post_grad") == 1


# --- diffs of the three ways in -------------------------------------------------------------------


def rows(diff: DiffReport, section: str | None = None) -> dict[str, tuple[Any, Any, bool]]:
    return {r.name: (r.a, r.b, r.changed) for r in diff.rows if section is None or r.section == section}


def test_raw_against_custom_op(raw: Report, custom: Report) -> None:
    diff = diff_reports(raw, custom)
    kernels = rows(diff, "kernels")
    assert kernels["add_kernel: entries"] == ("hop", "custom_op", True)
    assert kernels["add_kernel: in op"] == ("none", "tisample_custom_op::add", True)
    assert kernels["add_kernel: in output code"] == ("yes", "inside custom_op", True)
    graphs = rows(diff, "graphs")
    assert graphs["graph breaks"] == (0, 0, False)
    assert graphs["opaque ops"][1] == "tisample_custom_op::add"
    inductor = rows(diff, "inductor kernels")
    assert inductor["inference: user Triton kernels"] == (1, 0, True)
    assert inductor["inference: custom op calls"] == (0, 1, True)
    by_stage = {g.stage: g for g in diff.graph_diffs}
    assert by_stage["dynamo"].changed and by_stage["output_code"].changed
    removed = "\n".join(line for line in by_stage["dynamo"].lines if line.startswith("-"))
    added = "\n".join(line for line in by_stage["dynamo"].lines if line.startswith("+"))
    assert "triton_kernel_wrapper_mutation" in removed and "tisample_custom_op.add.default" in added
    code_added = [line for line in by_stage["output_code"].lines if line.startswith("+")]
    assert any("torch.ops.tisample_custom_op.add.default(" in line for line in code_added)


def test_raw_against_triton_op_compiles_to_the_same_output_code(raw: Report, triton_op: Report) -> None:
    diff = diff_reports(raw, triton_op)
    by_stage = {g.stage: g for g in diff.graph_diffs}
    assert by_stage["dynamo"].changed  # the op call instead of the launch
    assert not by_stage["output_code"].changed  # Inductor sees through the triton_op
    assert rows(diff, "kernels")["add_kernel: entries"] == ("hop", "triton_op", True)
    assert rows(diff, "clones and copies")["add_kernel: tensors_to_clone"] == ("out_ptr", "out_ptr", False)


def test_kernels_match_by_name_across_files(raw: Report, custom: Report) -> None:
    ((ka, kb),) = match_kernels(raw, custom)
    assert ka.id != kb.id and ka.name == kb.name == "add_kernel"


def test_a_kernel_only_one_side_has(raw: Report) -> None:
    none = dataclasses.replace(raw, kernels=())
    diff = diff_reports(raw, none)
    assert rows(diff, "kernels")["add_kernel: entries"] == ("hop", None, True)


def test_compile_times_are_compared_as_ratios_never_as_changes(raw: Report) -> None:
    def timed(report: Report, seconds: float) -> Report:
        graphs = tuple(dataclasses.replace(g, compile_time_s=seconds) if g.stage in ("dynamo", "aot_inference")
                       else g for g in report.graphs)
        return dataclasses.replace(report, graphs=graphs)

    diff = diff_reports(timed(raw, 2.0), timed(raw, 3.0))
    times = [r for r in diff.rows if r.section == "compile time"]
    assert {(r.a, r.b, r.unit, r.changed) for r in times} == {(2.0, 3.0, "s", False)}
    untimed = dataclasses.replace(raw, graphs=tuple(dataclasses.replace(g, compile_time_s=None) for g in raw.graphs))
    assert not [r for r in diff_reports(untimed, untimed).rows if r.section == "compile time"]


def test_fields_other_analyses_add_are_used_when_present(raw: Report) -> None:
    """Occurrence.neighbourhood / .clones and numeric Graph totals, when a report has them."""
    kernel = raw.kernels[0]
    fields = {f.name for f in dataclasses.fields(type(kernel.occurrences[0]))}
    if not {"neighbourhood", "clones"} <= fields:
        pytest.skip("this checkout's Occurrence has no neighbourhood/clones fields")
    near = SimpleNamespace(call="add_kernel_0", before=SimpleNamespace(name="cpp_fused_sin_0"),
                           after=SimpleNamespace(name="cpp_fused_cos_mul_1"), related=(), epilogue_fusion="off")
    far = SimpleNamespace(call="add_kernel_2", before=None, after=SimpleNamespace(name="cpp_fused_cos_mul_4"),
                          related=(), epilogue_fusion="off")
    clones = SimpleNamespace(after_reinplace=(), bytes=0, copies=())

    def with_facts(report: Report, neighbourhood: Any) -> Report:
        occ = tuple(dataclasses.replace(o, neighbourhood=(neighbourhood,), clones=clones)
                    if o.stage == "output_code" else o for o in kernel.occurrences)
        return dataclasses.replace(report, kernels=(dataclasses.replace(kernel, occurrences=occ),))

    diff = diff_reports(with_facts(raw, near), with_facts(raw, far))
    facts = rows(diff, "neighbourhood")
    assert facts["add_kernel: launched between"] == (
        "cpp_fused_sin → [add_kernel] → cpp_fused_cos_mul", "start/end → [add_kernel] → cpp_fused_cos_mul", True)
    assert facts["add_kernel: epilogue fusion"] == ("off", "off", False)
    assert rows(diff, "clones and copies")["add_kernel: still cloned"] == ("none", "none", False)
    # A report without the field (an older one): shown, not counted as a difference.
    older = dataclasses.replace(raw, kernels=tuple(
        dataclasses.replace(k, occurrences=tuple(dataclasses.replace(o, neighbourhood=None) for o in k.occurrences))
        for k in raw.kernels))
    one_sided = diff_reports(older, with_facts(raw, near))
    assert rows(one_sided, "neighbourhood")["add_kernel: launched between"] == (
        None, "cpp_fused_sin → [add_kernel] → cpp_fused_cos_mul", False)
    assert not [r for r in diff_reports(older, older).rows if r.section == "neighbourhood"]


def test_numeric_graph_fields_added_later_become_totals(raw: Report) -> None:
    @dataclasses.dataclass(frozen=True)
    class CountedGraph(Graph):
        widgets: int | None = None

    def counted(report: Report, n: int) -> Report:
        graphs = tuple(CountedGraph(**{**dataclasses.asdict(g), "widgets": n if g.stage == "output_code" else None})
                       for g in report.graphs)
        return dataclasses.replace(report, graphs=graphs)

    totals = rows(diff_reports(counted(raw, 2), counted(raw, 5)), "graph totals")
    assert totals.pop("inference: widgets") == (2, 5, True)
    assert not [name for name, (_, _, changed) in totals.items() if changed]


def test_notes_when_the_sides_were_captured_differently(raw: Report) -> None:
    from tritoninspect.model.report import with_meta

    diff = diff_reports(raw, with_meta(raw, mode="gpu", stage="dynamo"))
    assert any("modes" in n for n in diff.notes) and any("stages" in n for n in diff.notes)


def test_settings_in_notes_read_as_the_headers_print_them(raw: Report) -> None:
    # Found by the newcomer pass (h20): a graph report against an export report said
    # "differ in dynamic settings (None vs False)" where the headers say "auto" and "no".
    from tritoninspect.model.report import with_meta

    diff = diff_reports(with_meta(raw, dynamic=None, backward=True), with_meta(raw, dynamic=False, backward=False))
    assert any("dynamic settings (auto vs no)" in n for n in diff.notes), diff.notes
    assert any("backward settings (yes vs no)" in n for n in diff.notes), diff.notes


# --- the model ------------------------------------------------------------------------------------------


def gpu_bench() -> Any:
    a = SideBench(eager=Timing(0.05, 0.049, 0.052, 0.048, 200, 0.021), compiled=Timing(0.04, 0.039, 0.041, 0.038,
                  200, 0.011), compile_s=2.0, first_call_s=5.0)
    b = SideBench(eager=Timing(0.06, 0.058, 0.062, 0.057, 200, 0.025), compiled=Timing(0.05, 0.049, 0.052, 0.048,
                  200, 0.016), compile_s=2.5, first_call_s=4.0)
    return bench_pair("gpu", "NVIDIA H200", "CUDA events (test)", a, b)


def test_bench_ratios_are_b_over_a() -> None:
    bench = gpu_bench()
    assert bench.ratios["eager"] == pytest.approx(0.06 / 0.05)
    assert bench.ratios["compiled"] == pytest.approx(0.05 / 0.04)
    assert bench.ratios["compile_s"] == pytest.approx(1.25)
    assert bench.note is None


def test_compile_only_bench_says_why_there_are_no_run_times() -> None:
    bench = bench_pair("compile-only", "cpu", "", SideBench(compile_s=2.0), SideBench(compile_s=1.0))
    assert bench.note == COMPILE_ONLY_BENCH_NOTE and "interpreter" in bench.note
    assert bench.ratios["compile_s"] == 0.5 and bench.ratios["compiled"] is None


def test_diff_report_json_round_trips(raw: Report, custom: Report) -> None:
    diff = dataclasses.replace(diff_reports(raw, custom), bench=gpu_bench())
    text = diff.to_json()
    assert json.loads(text)["schema_version"] == DIFF_SCHEMA_VERSION
    assert list(json.loads(text))[0] == "schema_version"
    assert DiffReport.from_json(text) == diff


@pytest.mark.parametrize(
    ("text", "message"),
    [("{", "diff report: not valid JSON: "),
     ('{"schema_version": 99}', "diff report: schema_version: this tritoninspect reads version 4, got 99"),
     ('{"schema_version": 1, "a": {}, "b": {}}', "diff report: a.label: missing (and 29 more)")],
)
def test_diff_report_rejects_bad_json(text: str, message: str) -> None:
    with pytest.raises(ReportError) as caught:
        DiffReport.from_json(text)
    assert caught.value.message.startswith(message)


# --- rendering ---------------------------------------------------------------------------------------------


def plain(report: Report) -> Report:
    """Only the fields this diff always has: the gold file then does not change when
    other analyses add fields (their rows are tested above)."""
    known = ("compile_id", "stage", "part", "code", "op_count", "subgraphs", "compile_time_s")
    graphs = tuple(Graph(**{name: getattr(g, name) for name in known}) for g in report.graphs)
    optional = [name for name in ("clones", "neighbourhood") if hasattr(report.kernels[0].occurrences[0], name)]
    kernels = tuple(dataclasses.replace(k, occurrences=tuple(
        dataclasses.replace(o, **{name: None for name in optional}) for o in k.occurrences)) for k in report.kernels)
    return dataclasses.replace(report, graphs=graphs, kernels=kernels)


def test_terminal_gold(raw: Report, custom: Report) -> None:
    diff = diff_reports(plain(raw), plain(custom))
    diff = dataclasses.replace(diff, bench=gpu_bench(), tool_version="<tool_version>")
    compare_gold("diff.txt", DiffRenderer(width=100, color=False).render(diff) + "\n", raw)


def test_terminal_marks_changes_and_says_compile_only(raw: Report, custom: Report) -> None:
    bench = bench_pair("compile-only", "cpu", "", SideBench(compile_s=2.0), SideBench(compile_s=1.0))
    text = DiffRenderer(width=100, color=False).render(diff_reports(raw, custom, bench=bench))
    entries = next(line for line in text.splitlines() if line.startswith("add_kernel: entries"))
    assert "hop" in entries and "custom_op" in entries and entries.rstrip().endswith(CHANGED)
    assert "graph breaks" in text and not next(line for line in text.splitlines()
                                                 if line.startswith("graph breaks")).rstrip().endswith(CHANGED)
    assert COMPILE_ONLY_BENCH_NOTE.split(":")[0] in text.replace("\n", " ")
    assert "×0.50" in text


def test_colour_output_highlights(raw: Report, custom: Report) -> None:
    text = DiffRenderer(width=100, color=True).render(diff_reports(raw, custom))
    assert "\x1b[" in text


# --- sides: the child protocol, --save --------------------------------------------------------------------


def test_child_command_names_the_request_and_the_answer(tmp_path: Path) -> None:
    cmd = child_command(tmp_path / "request.json", tmp_path / "o.json")
    assert cmd == [sys.executable, "-m", "tritoninspect.children.side_child", str(tmp_path / "request.json"),
                   str(tmp_path / "o.json")]


def test_the_request_carries_every_capture_option(monkeypatch: pytest.MonkeyPatch, raw: Report) -> None:
    """What the parent asks is what the child's pipeline gets: options, bench and debug, through JSON."""
    options = CaptureOptions(inputs="8x8", device="cuda", dynamic=True, backward=False, stage="dynamo")
    seen: list[tuple[Any, CaptureOptions]] = []

    def fake_run(spec: Any, got: CaptureOptions) -> Report:
        seen.append((spec, got))
        return raw

    def in_process(request: dict[str, Any], *, debug: bool = False,
                   timeout: float | None = None) -> tuple[dict[str, Any], int, str]:
        assert (request["bench"], request["debug"]) == (False, True) and debug
        answer, code = child.respond(json.loads(json.dumps(request)))
        return json.loads(json.dumps(answer)), code, ""

    monkeypatch.setattr("tritoninspect.run.pipeline.run", fake_run)
    monkeypatch.setattr("tritoninspect.children.side.run_child", in_process)
    result = capture_side("A", "samples/add_raw.py:Net", options=options, debug=True)
    assert seen[0][0].attr == "Net" and seen[0][1] == options
    assert result.report == raw and not result.saved and result.bench is None


def test_child_answers_every_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A typed error keeps its type and code; anything else is an internal error (exit 6)."""
    request = {"target": "samples/add_raw.py:Net", "options": {}, "bench": False, "debug": False}
    answer, code = child.respond({**request, "target": "no colon"})
    assert code == ExitCode.TARGET and answer["error"]["type"] == "TargetError"

    def boom(spec: Any, options: CaptureOptions) -> Report:
        raise KeyError("oops")

    monkeypatch.setattr("tritoninspect.run.pipeline.run", boom)
    answer, code = child.respond(request)
    assert code == ExitCode.INTERNAL and answer["error"]["message"] == "internal error: KeyError: 'oops'"


def test_a_child_without_an_answer_is_a_capture_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tritoninspect.children.side.run_child",
                        lambda request, debug=False, timeout=None: (None, -9, "line 1\nKilled\n"))
    with pytest.raises(CaptureError, match=r"B: the capture process for m.py:Net ended \(exit -9\) without a "
                                           r"result: line 1 \| Killed"):
        capture_side("B", "m.py:Net", options=CaptureOptions())


def test_child_errors_come_back_typed() -> None:
    user = error_from_payload("A", "m.py:Net", {"type": "UserCodeError", "message": "boom", "exit_code": 4,
                                                 "user_traceback": "Traceback ...", "hint": None})
    assert isinstance(user, UserCodeError) and user.user_traceback == "Traceback ..."
    assert user.message == "A (m.py:Net): boom" and user.exit_code == ExitCode.USER_CODE
    inputs = error_from_payload("B", "m.py:Net", {"type": "InputsError", "message": "bad", "hint": "try"})
    assert isinstance(inputs, InputsError) and inputs.hint == "try"
    assert type(error_from_payload("B", "t", {"type": "KeyError", "message": "?"})) is CaptureError


def test_save_reports_and_refuse_foreign_files(tmp_path: Path, raw: Report, custom: Report) -> None:
    a, b = SideResult(raw, None, "x", saved=False), SideResult(custom, None, "y", saved=False)
    written = save_reports(tmp_path / "new" / "dir", a, b)
    assert [p.name for p in written] == ["A.json", "B.json"]
    assert Report.from_json(written[1].read_text()).meta.target == custom.meta.target
    save_reports(tmp_path / "new" / "dir", b, a)  # our own files: overwritten
    assert Report.from_json(written[0].read_text()).meta.target == custom.meta.target
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "B.json").write_text('{"mine": true}')
    with pytest.raises(ValueError, match="not a tritoninspect report"):
        check_save_dir(tmp_path / "mine")
    assert (tmp_path / "mine" / "B.json").read_text() == '{"mine": true}'
    with pytest.raises(ValueError, match="not a directory"):
        check_save_dir(written[0])


def test_build_diff_pairs_benches_only_when_both_sides_have_one(raw: Report, custom: Report) -> None:
    with_bench = SideResult(raw, SideBench(compile_s=1.0), "x", saved=False, bench_method="m")
    without = SideResult(custom, None, "y", saved=True)
    assert build_diff(with_bench, without).bench is None
    paired = build_diff(with_bench, dataclasses.replace(without, bench=SideBench(compile_s=3.0)))
    assert paired.bench is not None and paired.bench.ratios["compile_s"] == 3.0
    assert paired.b.saved and paired.b.source == "y"


# --- timing statistics ---------------------------------------------------------------------------------------


def test_timing_summary_matches_numpy() -> None:
    np = pytest.importorskip("numpy")
    from tritoninspect.children.bench import summarise

    times = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6, 5.0, 3.5, 8.0, 7.9, 0.7]
    got = summarise(times, pipelined_ms=0.5)
    assert got.median_ms == pytest.approx(np.median(times))
    assert got.p20_ms == pytest.approx(np.percentile(times, 20))
    assert got.p80_ms == pytest.approx(np.percentile(times, 80))
    assert (got.min_ms, got.reps, got.pipelined_ms) == (0.7, len(times), 0.5)


def test_gpu_bench_loads_and_calls_the_model_through_the_pipeline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gpu-mode wiring of --bench, on the CPU: CUDA timing stubbed, each step called as a capture calls it."""
    import torch

    from tritoninspect.children import bench

    calls: list[tuple[str, Any]] = []
    model = torch.nn.Linear(4, 4)
    loaded = SimpleNamespace(module=model, input_sets=[(torch.ones(2, 4),)], requires_grad=True)

    def fake_load(spec: Any, options: CaptureOptions, *, device: str) -> Any:
        calls.append(("load", (options, device)))
        return loaded

    def fake_time(fn: Any) -> Timing:
        fn()
        return bench.summarise([1.0, 2.0], pipelined_ms=1.0)

    def fake_compile(module: Any, args: Any, *, dynamic: bool, backward: bool) -> tuple[Any, float]:
        calls.append(("compile", (dynamic, backward)))
        return bench._step(module, args, backward), 0.5

    real_call_once = bench.pipeline.call_once
    monkeypatch.setattr("tritoninspect.run.pipeline.load", fake_load)
    monkeypatch.setattr("tritoninspect.run.pipeline.call_once",
                        lambda fn, args, backward: calls.append(("call", backward)) or real_call_once(fn, args, backward))
    monkeypatch.setattr(bench, "time_calls", fake_time)
    monkeypatch.setattr(bench, "fresh_compile", fake_compile)
    options = CaptureOptions(inputs="2x4", dynamic=True)
    side = bench.bench_target(SimpleNamespace(), options, mode="gpu", compile_s=3.0)
    assert calls == [("load", (options, "cuda")), ("call", True), ("compile", (True, True)), ("call", True)]
    assert side.compile_s == 3.0 and side.first_call_s == 0.5 and side.eager == side.compiled == fake_time(lambda: 0)
    assert model.weight.grad is not None  # backward ran, as the capture's call_once does
    assert bench.bench_target(SimpleNamespace(), options, mode="compile-only", compile_s=2.0) == SideBench(compile_s=2.0)


# --- the CLI on saved reports (no compile) -------------------------------------------------------------------


def run_diff(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return zygote_run([sys.executable, "-m", "tritoninspect", "diff", *args], cwd=cwd, env=cli_env(),
                      capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, raw: Report, custom: Report) -> Path:
    tmp = tmp_path_factory.mktemp("saved")
    (tmp / "raw.json").write_text(raw.to_json())
    (tmp / "custom.json").write_text(custom.to_json())
    return tmp


def test_cli_diff_of_saved_reports(saved: Path) -> None:
    proc = run_diff(str(saved / "raw.json"), str(saved / "custom.json"), "--json")
    assert proc.returncode == 0, proc.stderr
    diff = DiffReport.from_json(proc.stdout)
    assert diff.a.saved and diff.b.saved and diff.bench is None
    assert rows(diff)["add_kernel: entries"] == ("hop", "custom_op", True)
    text = run_diff(str(saved / "raw.json"), str(saved / "custom.json"), "-o", str(saved / "diff.json"))
    assert text.returncode == 0 and "saved report, not recompiled" in text.stdout and CHANGED in text.stdout
    assert DiffReport.from_json((saved / "diff.json").read_text()) == diff


SAVED_ONLY_SCRIPT = """
import json, sys
from tritoninspect.cli import app
try:
    app(["diff", sys.argv[1], sys.argv[2], "--json"], prog_name="tritoninspect")
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "triton"))), file=sys.stderr)
"""


def test_cli_diff_of_saved_reports_does_not_import_torch(saved: Path) -> None:
    args = [sys.executable, "-c", SAVED_ONLY_SCRIPT, str(saved / "raw.json"), str(saved / "custom.json")]
    proc = subprocess.run(args, cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [(["--bench"], "--bench"), (["--inputs", "64"], "--inputs"), (["--stage", "dynamo"], "--stage")],
)
def test_cli_refuses_capture_options_with_two_saved_reports(saved: Path, extra: list[str], message: str) -> None:
    proc = run_diff(str(saved / "raw.json"), str(saved / "custom.json"), *extra)
    assert proc.returncode == ExitCode.USAGE, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_cli_bench_needs_two_targets(saved: Path) -> None:
    proc = run_diff(str(saved / "raw.json"), "samples/trio.py:RawNet", "--bench", "--json")
    assert proc.returncode == ExitCode.USAGE
    assert json.loads(proc.stdout)["error"]["type"] == "UsageError"


def test_cli_unreadable_report_names_the_side(saved: Path, tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    proc = run_diff(str(saved / "raw.json"), str(tmp_path / "bad.json"))
    assert proc.returncode == ExitCode.REPORT
    assert f"error: B: {tmp_path / 'bad.json'}: not valid JSON: " in proc.stderr


def test_cli_save_refuses_a_foreign_file_before_compiling(saved: Path, tmp_path: Path) -> None:
    (tmp_path / "A.json").write_text("my notes\n")
    proc = run_diff(str(saved / "raw.json"), str(saved / "custom.json"), "--save", str(tmp_path))
    assert proc.returncode == ExitCode.USAGE and "not a tritoninspect report" in proc.stderr
    assert (tmp_path / "A.json").read_text() == "my notes\n"


def test_cli_bad_target_is_a_target_error_from_the_child(saved: Path) -> None:
    proc = run_diff("samples/no_such_file.py:Net", str(saved / "raw.json"), "--json")
    assert proc.returncode == ExitCode.TARGET, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["type"] == "TargetError" and error["message"].startswith("A (samples/no_such_file.py:Net): ")


def test_sides_whose_forward_ran_with_and_without_grad_are_noted() -> None:
    # breaks (grad on, no backward) against breaks --no-backward: the Dynamo graphs can differ
    # (an autograd.Function is traced with its backward only with grad on).
    from tritoninspect.analyse.diff import comparison_notes
    from tritoninspect.model.diff_report import Side

    a = Side("A", "m.py:Net", False, "m.py:Net", "gpu", "H200", "2.11", "3.6", "dynamo", None, False, grad=True)
    b = dataclasses.replace(a, label="B", grad=False)
    (note,) = comparison_notes(a, b)
    assert "differ in grad settings (yes vs no)" in note
    # An older side (grad not said) had grad on exactly when backward ran.
    older = dataclasses.replace(a, backward=True, grad=None)
    assert comparison_notes(older, dataclasses.replace(b, backward=True, grad=True)) == ()
    assert comparison_notes(dataclasses.replace(a, grad=None), b) == ()  # not said, no backward: grad off
