"""`tritoninspect export` without torch.export (tiers a and b, fast): the analysis and its failure
hints on hand-made export captures, the report's JSON round trip and text, and the command
layer with the capture replaced (bad input, saved reports). Each capture below says which real
run it mirrors; the real exports are in tests/test_export_e2e.py (slow).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tritoninspect.analyse.export import build_export_report
from tritoninspect.model.export_records import AotiRecord, EagerLaunch, ExportCapture, ExportNode, InputDims
from tritoninspect.model.records import Failure, KernelRecord
from tritoninspect.cli import app
from tritoninspect.model.errors import ExitCode
from tritoninspect.render import render
from tritoninspect.model.report import SCHEMA_VERSION, Report

META = {"tool": "tritoninspect", "tool_version": "0", "mode": "compile-only", "device": "cpu", "torch": "2.13",
        "triton": "3.7", "target": "m.py:Net", "python": "3.11", "stage": "aoti", "dynamic": False,
        "backward": False, "inputs": ["64:float32"]}
ADD = KernelRecord("m.add_kernel", "add_kernel", "m.py", 5, ("jit",), ("BLOCK",))
ROW = KernelRecord("m.row_scale_kernel", "row_scale_kernel", "m.py", 9, ("jit",), ("N_COLS", "BLOCK"))
DATA_PTR = ("Cannot access data pointer of Tensor (e.g. FakeTensor, FunctionalTensor). If you're using "
            "torch.compile/export/fx, it is likely that we are erroneously tracing into a custom kernel.")


def capture(**fields: Any) -> ExportCapture:
    cap = ExportCapture(meta=dict(META), kernels={ADD.id: ADD})
    for name, value in fields.items():
        setattr(cap, name, value)
    return cap


def failure(stage: str, message: str, exc_type: str = "RuntimeError") -> Failure:
    return Failure(stage=stage, compile_id=None, part="", exc_type=exc_type, message=message)


def causes(report: Report) -> list[str]:
    assert report.export is not None
    return [f.cause for f in report.export.findings]


# --- failure hints ----------------------------------------------------------------------------------


def test_raw_launch_in_non_strict_export_names_the_kernel_and_issue() -> None:
    # As `export samples/add_raw.py:Net` (torch's default, non-strict) on torch 2.13.
    cap = capture(strict=False, launches=[EagerLaunch(ADD.id, None, {"BLOCK": 16}, {"n": 64})],
                  failure=failure("export", DATA_PTR))
    report = build_export_report(cap)
    (finding,) = report.export.findings
    assert (finding.cause, finding.stage, finding.kernel) == ("raw_launch_non_strict", "export", "add_kernel")
    assert "triton_op" in finding.hint and "--strict" in finding.hint
    assert finding.issue.endswith("/146066")
    assert report.export.kernels[0].appears_as == "absent"
    assert report.failure is not None and report.failure.stage == "export"


def test_the_same_failure_in_strict_export_is_not_blamed_on_non_strict() -> None:
    cap = capture(strict=True, launches=[EagerLaunch(ADD.id, None, {}, {})], failure=failure("export", DATA_PTR))
    assert "raw_launch_non_strict" not in causes(build_export_report(cap))


def test_custom_op_without_fake_names_op_and_kernel() -> None:
    # As tests/assets/export_nofake.py.
    message = "tiasset_nofake.add.default: There was no fake impl registered for <CustomOpDef(tiasset_nofake::add)>."
    cap = capture(ops={"tiasset_nofake::add": False}, ops_without_fake=["tiasset_nofake::add"],
                  launches=[EagerLaunch(ADD.id, "tiasset_nofake::add", {"BLOCK": 16}, {"n": 64})],
                  failure=failure("export", message))
    report = build_export_report(cap)
    (finding,) = report.export.findings
    assert (finding.cause, finding.kernel, finding.severity) == ("custom_op_without_fake", "add_kernel", "error")
    assert "register_fake" in finding.hint and "tiasset_nofake::add" in finding.message
    assert report.export.kernels[0].entry == "custom_op"


def test_constexpr_that_specialises_a_named_dim_is_found() -> None:
    # As tests/assets/export_constexpr_dim.py (--dynamic: rows and cols named Dims).
    message = ("Constraints violated (cols)! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
               "  - You marked cols as dynamic but your code specialized it to be a constant (48).")
    cap = capture(kernels={ROW.id: ROW}, dynamic="target",
                  inputs=[InputDims("x", (8, 48), (), ("rows", "cols"))],
                  launches=[EagerLaunch(ROW.id, None, {"N_COLS": 48, "BLOCK": 64}, {"n_rows": 8})],
                  failure=failure("export", message, "ConstraintViolationError"))
    report = build_export_report(cap)
    (finding,) = report.export.findings
    assert (finding.cause, finding.kernel) == ("constexpr_specialises_dynamic_dim", "row_scale_kernel")
    assert "N_COLS=48" in finding.message and finding.issue.endswith("/137024")
    effects = {(c.arg, c.dim): c.effect for c in report.export.constraints}
    assert effects == {("N_COLS", "x.size(1)"): "specialised", ("n_rows", "x.size(0)"): "unknown"}


def test_aoti_failure_with_triton_op_and_dynamic_dim_points_at_the_regression() -> None:
    cap = capture(ops={"ns::op": True}, inputs=[InputDims("x", (8,), ("s0",), ("auto",))],
                  failure=failure("aoti", "InductorError: something"))
    assert causes(build_export_report(cap)) == ["triton_op_aoti_dynamic"]
    static = capture(ops={"ns::op": True}, inputs=[InputDims("x", (8,), ("8",), ("static",))],
                     failure=failure("aoti", "InductorError: something"))
    assert causes(build_export_report(static)) == []


def test_decomposed_mutations_and_kernel_writes_are_reported_and_rendered() -> None:
    # As tests/assets/export_buffer.py --strict: the kernel writes a buffer in place.
    node = ExportNode("triton_kernel_wrapper_mutation_proxy", "hop", ADD.id, kernel_idx=0)
    cap = capture(strict=True, nodes=[node], writes={ADD.id: ["out_ptr"]},
                  signature=[("input", "BUFFER", "b_acc", "acc"), ("output", "USER_OUTPUT", "mul", None)],
                  decomposed_signature=[("input", "BUFFER", "b_acc", "acc"),
                                        ("output", "BUFFER_MUTATION", "getitem", "acc"),
                                        ("output", "USER_OUTPUT", "mul", None)])
    report = build_export_report(cap)
    assert report.export.kernels[0].writes == ("out_ptr",)
    assert [e.kind for e in report.export.decomposed_signature if e.direction == "output"] == [
        "BUFFER_MUTATION", "USER_OUTPUT"]
    text = render(report, "text", width=120)
    assert "BUFFER_MUTATION  getitem -> acc" in text and "out_ptr" in text


def test_strict_raw_launch_is_a_note_and_a_mismatch_an_error() -> None:
    node = ExportNode("triton_kernel_wrapper_mutation_proxy", "hop", ADD.id, kernel_idx=0, grid=((4, 1, 1),),
                      constexprs={"BLOCK": 16}, scalars={"n": 64})
    cap = capture(strict=True, nodes=[node], aoti=AotiRecord("built", "NVIDIA H200", loaded=True,
                                                             matches_eager=False, max_abs_diff=0.5))
    report = build_export_report(cap)
    assert causes(report) == ["raw_launch_strict_only", "aoti_mismatch"]
    assert [f.severity for f in report.export.findings] == ["note", "error"]
    kernel = report.export.kernels[0]
    assert (kernel.entry, kernel.appears_as, kernel.kernel_idx) == ("hop", "hop", 0)


# --- dynamic dims ------------------------------------------------------------------------------------


def test_auto_dim_fixed_by_a_constexpr_is_specialised_and_a_runtime_argument_stays_symbolic() -> None:
    # As `export samples/export_dynamic.py:Net --dynamic`.
    cap = capture(kernels={ROW.id: ROW}, dynamic="target", ranges={"s77": ("2", "4096")},
                  inputs=[InputDims("x", (8, 48), ("s77", "48"), ("rows", "auto"))],
                  launches=[EagerLaunch(ROW.id, "ns::row_scale", {"N_COLS": 48, "BLOCK": 64}, {"n_rows": 8})],
                  ops={"ns::row_scale": True})
    report = build_export_report(cap)
    dims = {(d.input, d.dim): d for d in report.export.dynamic_dims}
    assert dims[("x", 0)].exported == "s77" and dims[("x", 0)].range == "[2, 4096]"
    assert dims[("x", 1)].specialised and not dims[("x", 0)].specialised
    shown = {(c.arg, c.effect, c.value) for c in report.export.constraints}
    assert shown == {("N_COLS", "specialised", "48"), ("n_rows", "symbolic", "s77")}
    (finding,) = report.export.findings
    assert (finding.cause, finding.kernel, finding.severity) == ("constexpr_specialised_dim", "row_scale_kernel",
                                                                 "warning")
    assert "x.size(1)" in finding.message and finding.issue.endswith("/137024")


@pytest.mark.parametrize("stage", ["aoti", "aoti_load", "aoti_run"])
def test_a_failure_after_export_keeps_what_the_program_says_about_dimensions(stage: str) -> None:
    # As `export samples/export_dynamic.py:Net --dynamic` on the H200 (torch 2.11), where the package's
    # loader crashed: the exported program exists, so its specialised dimension is still a finding.
    cap = capture(kernels={ROW.id: ROW}, dynamic="target", ranges={"s77": ("2", "4096")},
                  inputs=[InputDims("x", (8, 48), ("s77", "48"), ("rows", "auto"))],
                  launches=[EagerLaunch(ROW.id, "ns::row_scale", {"N_COLS": 48, "BLOCK": 64}, {"n_rows": 8})],
                  ops={"ns::row_scale": True},
                  failure=failure(stage, "the package crashed with signal 11 (SIGSEGV)", exc_type="NativeCrash"))
    assert "constexpr_specialised_dim" in causes(build_export_report(cap))


def test_a_failed_export_leaves_the_dimension_to_its_own_finding() -> None:
    cap = capture(kernels={ROW.id: ROW}, dynamic="target", ranges={"s77": ("2", "4096")},
                  inputs=[InputDims("x", (8, 48), ("s77", "48"), ("rows", "auto"))],
                  launches=[EagerLaunch(ROW.id, "ns::row_scale", {"N_COLS": 48, "BLOCK": 64}, {"n_rows": 8})],
                  ops={"ns::row_scale": True}, failure=failure("export", "Constraints violated (rows)"))
    assert "constexpr_specialised_dim" not in causes(build_export_report(cap))


# --- the report --------------------------------------------------------------------------------------


def built_report() -> Report:
    node = ExportNode("add", "op", None, "ns::add", False)
    cap = capture(strict=False, nodes=[node], ops={"ns::add": False}, graph_code="def forward(self, x):\n",
                  signature=[("input", "USER_INPUT", "x", None), ("output", "USER_OUTPUT", "add", None)],
                  launches=[EagerLaunch(ADD.id, "ns::add", {"BLOCK": 16}, {"n": 64})],
                  aoti=AotiRecord("built", "cpu (compile-only mode)", files=[("m/x.wrapper.cpp", 10)],
                                  code={"x.wrapper.cpp": "aoti_torch_proxy_executor_call_function(1);\n",
                                        "x.wrapper.json": '{"nodes": [{"target": "torch.ops.ns.add.default"}]}'},
                                  loaded=True, matches_eager=True, max_abs_diff=0.0,
                                  notes=["built and run for CPU in compile-only mode"]))
    return build_export_report(cap)


def test_export_report_round_trips_through_validated_json() -> None:
    report = built_report()
    again = Report.from_json(report.to_json())
    assert again == report
    assert again.schema_version == SCHEMA_VERSION and again.export.aoti.status == "built"
    assert [g.stage for g in again.graphs] == ["export", "aoti_output_code"]
    assert again.opaque_ops[0].kernels == ("add_kernel",)


def test_text_says_compile_only_package_is_not_a_gpu_package() -> None:
    text = render(built_report(), "text", width=120)
    for part in ("torch.export", "Graph signature", "Kernels (1)", "opaque custom_op call", "AOTInductor",
                 "not a GPU package", "matches eager", "proxy_executor_call_function"):
        assert part in text, part


def test_a_report_without_export_renders_as_before() -> None:
    report = Report.from_json(built_report().to_json())
    import dataclasses

    plain = dataclasses.replace(report, export=None)
    assert "Graph signature" not in render(plain, "text", width=120)


# --- the command layer -------------------------------------------------------------------------------


def invoke(args: list[str]) -> Any:
    return CliRunner().invoke(app, args)


def test_saved_export_report_rerenders_and_refuses_capture_options(tmp_path: Path) -> None:
    saved = tmp_path / "r.json"
    saved.write_text(built_report().to_json())
    shown = invoke(["export", str(saved)])
    assert shown.exit_code == 0 and "AOTInductor" in shown.stdout
    refused = invoke(["export", str(saved), "--strict"])
    assert refused.exit_code == ExitCode.USAGE and "--strict" in refused.output


def test_o_dash_is_stdout_as_without_o(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`export ... -o -` wrote a file named `-` (hostile user): it is stdout, as without `-o`."""
    saved = tmp_path / "r.json"
    saved.write_text(built_report().to_json())
    monkeypatch.chdir(tmp_path)
    plain, dashed = invoke(["export", str(saved)]), invoke(["export", str(saved), "-o", "-"])
    assert dashed.exit_code == 0 and dashed.stdout == plain.stdout and "AOTInductor" in dashed.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_saved_compile_report_is_refused_in_one_line(tmp_path: Path) -> None:
    """`export graph_report.json` printed the torch.compile report as export's output, exit 0 (hostile, finding
    K f): a saved report re-renders with `export` only when it is an export's."""
    from tritoninspect.cli import run

    gold = Path(__file__).resolve().parent / "gold" / "report.json"
    code, err = _run_captured(run, ["export", str(gold)])
    assert code == ExitCode.TARGET, err
    assert err.splitlines() == [f"error: export needs a model target (path/to/model.py:Net) or a saved export report: "
                                f"{gold} is a torch.compile report; show it with `tritoninspect graph {gold}`"]
    result = invoke(["export", str(gold), "--json"])
    assert result.exit_code == ExitCode.TARGET and json.loads(result.stdout)["error"]["type"] == "TargetError"


@pytest.mark.parametrize("args, code", [
    (["export", "no_such_file.py:Net"], ExitCode.TARGET),
    (["export", "samples/add_raw.py:Net", "--stage", "inductor"], ExitCode.USAGE),
    (["export", "samples/add_raw.py:Net", "--timeout", "0"], ExitCode.USAGE),
])
def test_bad_input_is_one_error_line_and_its_exit_code(args: list[str], code: int) -> None:
    from tritoninspect.cli import run

    result = _run_captured(run, args)
    assert result[0] == code, result
    assert result[1].count("error:") == 1 and "Traceback" not in result[1]


def _run_captured(run: Any, args: list[str]) -> tuple[int, str]:
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = run(args)
    return code, err.getvalue()


def test_json_of_a_failed_export_is_the_report_and_exit_4(monkeypatch: pytest.MonkeyPatch) -> None:
    cap = capture(strict=False, launches=[EagerLaunch(ADD.id, None, {}, {})], failure=failure("export", DATA_PTR))
    import tritoninspect.run.pipeline_export as route

    monkeypatch.setattr("tritoninspect.commands._capture.ready_to_capture", lambda: None)
    monkeypatch.setattr(route, "run_export", lambda spec, options: build_export_report(cap))
    result = invoke(["export", "samples/add_raw.py:Net", "--json"])
    assert result.exit_code == ExitCode.USER_CODE
    data = json.loads(result.stdout)
    assert data["failure"]["stage"] == "export" and data["export"]["findings"][0]["cause"] == "raw_launch_non_strict"


# --- diff: a compile's report against an export report ------------------------------------------


def test_diff_pairs_how_the_kernel_enters_compile_and_export() -> None:
    from tritoninspect.analyse.diff import diff_reports
    from tritoninspect.model.records import Capture
    from tritoninspect.run.pipeline import analyse

    fixtures = Path(__file__).resolve().parent / "fixtures"
    compiled = analyse(Capture.from_json((fixtures / "capture_custom_op.json").read_text(encoding="utf-8")))
    exported = built_report()  # add_kernel inside an opaque op, as samples/custom_op.py exports
    diff = diff_reports(compiled, exported)
    rows = {r.name: (r.a, r.b) for r in diff.rows if r.section == "torch.compile vs export"}
    assert rows["add_kernel: entry"] == ("custom_op", "custom_op")
    assert rows["add_kernel: in the graph as"] == ("opaque custom_op call", "opaque custom_op call")
    assert rows["add_kernel: launched by generated code"][1] == "yes"
    assert rows["pipeline"][1].startswith("torch.export (non-strict)")
    swapped = {r.name: (r.a, r.b) for r in diff_reports(exported, compiled).rows if r.section == "torch.compile vs export"}
    assert swapped["pipeline"] == (rows["pipeline"][1], rows["pipeline"][0])
    (cross,) = [g for g in diff.graph_diffs if g.stage == "dynamo | export"]
    assert cross.compile_id_b == "export"
    text = render(diff, "diff", width=120)
    assert "torch.compile vs torch.export" in text


def test_diff_of_two_compile_reports_has_no_export_section() -> None:
    from tritoninspect.analyse.diff import diff_reports

    report = built_report()
    assert not [r for r in diff_reports(report, report).rows if r.section == "torch.compile vs export"]
