"""`tritoninspect export` after a hostile tester's pass (/tmp/hostile/m/*.py): what it got wrong.

Fast: findings on hand-made captures (each mirrors the run named above it), the command layer with
the capture replaced, and the route (`export_capture`) really loading small targets (no
torch.export for most). The real `--stage export` runs are marked slow.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import tritoninspect
from test_export import ADD, ROW, built_report, capture, causes, failure, invoke

from tritoninspect.analyse.export import build_export_report
from tritoninspect.model.export_records import EagerLaunch, InputDims
from tritoninspect.model.errors import ExitCode, UserCodeError
from tritoninspect.run.pipeline_export import ExportOptions, export_capture
from tritoninspect.render import render
from tritoninspect.render.export import export_failure_line
from tritoninspect.source.spec import parse_spec

ROOT = Path(__file__).resolve().parents[1]

#: torch 2.13's message for a named Dim whose example size is 1 (`export samples/export_dynamic.py:Net
#: --dynamic --stage export -i 1x48`).
ROWS_ONE = ("Constraints violated (rows)! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
            "  - You marked rows as dynamic but your code specialized it to be a constant (1). If you're using "
            "mark_dynamic, either remove it or use maybe_mark_dynamic.\nSuggested fixes:\n  rows = 1")


# --- 1. 0/1 specialisation is said as such, a kernel is blamed only when its constexpr has the value ---


def test_an_example_size_of_one_is_the_cause_not_a_kernel_constexpr() -> None:
    # As `export samples/export_dynamic.py:Net --dynamic --stage export -i 1x48`: n_rows is a runtime argument.
    cap = capture(kernels={ROW.id: ROW}, dynamic="target", inputs=[InputDims("x", (1, 48), (), ("rows", "auto"))],
                  launches=[EagerLaunch(ROW.id, None, {"N_COLS": 48, "BLOCK": 64}, {"n_rows": 1})],
                  failure=failure("export", ROWS_ONE, "ConstraintViolationError"))
    report = build_export_report(cap)
    (finding,) = report.export.findings
    assert (finding.cause, finding.kernel) == ("zero_one_specialised_dim", None)
    assert "example size is 1 (x.size(0))" in finding.message and "0 and 1" in finding.message
    assert "at least 2" in finding.hint and "constexpr" not in finding.hint
    assert "at least 2" in export_failure_line(report)


def test_a_model_without_kernels_gets_no_kernel_advice() -> None:
    # As /tmp/hostile/m/nokern.py (x * 2, Dim("b") on x) with `--dynamic --stage export -i 1`.
    message = ROWS_ONE.replace("rows", "b")
    cap = capture(kernels={}, dynamic="target", inputs=[InputDims("x", (1,), (), ("b",))],
                  failure=failure("export", message, "ConstraintViolationError"))
    (finding,) = build_export_report(cap).export.findings
    assert finding.cause == "zero_one_specialised_dim" and "kernel" not in finding.hint


def test_size_one_wins_over_a_constexpr_that_happens_to_be_one() -> None:
    cap = capture(dynamic="target", inputs=[InputDims("x", (1, 48), (), ("rows", "auto"))],
                  launches=[EagerLaunch(ADD.id, None, {"BLOCK": 1}, {})],
                  failure=failure("export", ROWS_ONE, "ConstraintViolationError"))
    assert causes(build_export_report(cap)) == ["zero_one_specialised_dim"]


def test_dim_dynamic_zero_one_message_of_non_strict_export_is_recognised() -> None:
    # torch/_export/non_strict_utils.py's wording for Dim.DYNAMIC on an example size of 0 or 1.
    message = ("- Received user-specified dim hint Dim.DYNAMIC(min=None, max=None), but export 0/1 specialized "
               "due to hint of 0 for dimension inputs['x'].shape[0].")
    cap = capture(kernels={}, dynamic="target", inputs=[InputDims("x", (0, 4), (), ("dynamic", "static"))],
                  failure=failure("export", message, "UserError"))
    (finding,) = build_export_report(cap).export.findings
    assert finding.cause == "zero_one_specialised_dim" and "example size is 0" in finding.message


def test_a_size_no_constexpr_carries_is_blamed_on_the_model_not_a_kernel() -> None:
    message = ROWS_ONE.replace("constant (1)", "constant (6)")
    cap = capture(kernels={ROW.id: ROW}, dynamic="target", inputs=[InputDims("x", (6, 48), (), ("rows", "auto"))],
                  launches=[EagerLaunch(ROW.id, None, {"N_COLS": 48, "BLOCK": 64}, {"n_rows": 6})],
                  failure=failure("export", message, "ConstraintViolationError"))
    (finding,) = build_export_report(cap).export.findings
    assert (finding.cause, finding.kernel) == ("dynamic_dim_specialised", None)
    assert "TORCH_LOGS" in finding.hint


def test_an_auto_dim_of_example_size_one_is_not_blamed_on_a_constexpr_equal_to_one() -> None:
    # As `export printer.py --dynamic --stage export -i 1` (Dim.AUTO), with a kernel whose constexpr is 1.
    cap = capture(dynamic="auto", inputs=[InputDims("x", (1,), ("1",), ("auto",))],
                  launches=[EagerLaunch(ADD.id, None, {"BLOCK": 1}, {})])
    report = build_export_report(cap)
    assert causes(report) == ["zero_one_specialised_dim"]
    assert report.export.findings[0].severity == "warning"


# --- 2. `file.py` alone: the class found is the recorded target ----------------------------------------


def test_a_target_without_class_is_recorded_with_the_class_found(monkeypatch: pytest.MonkeyPatch) -> None:
    import tritoninspect.capture.export as capture_module

    seen: dict[str, Any] = {}
    monkeypatch.setattr(capture_module, "capture_export", lambda *a, **kw: seen.update(kw) or capture())
    export_capture(parse_spec("tests/assets/export_bad_shapes.py"), ExportOptions(stage="export", device="cpu"))
    assert seen["target"] == "tests/assets/export_bad_shapes.py:Net"


# --- 3. the eager reference run failing is not "the compiled model" ------------------------------------


def test_a_model_raising_in_its_eager_run_is_labelled_the_eager_reference_run(tmp_path: Path) -> None:
    # As /tmp/hostile/m/raisefwd.py with `--stage export`.
    model = tmp_path / "raisefwd.py"
    model.write_text(textwrap.dedent("""
        import torch
        class Net(torch.nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        def example_inputs(): return (torch.randn(8),)
    """))
    cap = export_capture(parse_spec(f"{model}:Net"), ExportOptions(stage="export", device="cpu"))
    assert cap.failure is not None and cap.failure.stage == "eager"
    report = build_export_report(cap)
    text = render(report, "text", width=160)
    assert "FAILED in the eager reference run of the model" in text and "compiled model" not in text
    assert "eager reference run" in export_failure_line(report)


# --- 4. `graph --show` on an export report ---------------------------------------------------------------


def test_graph_show_lists_and_shows_an_export_reports_stages(tmp_path: Path) -> None:
    saved = tmp_path / "e.json"
    saved.write_text(built_report().to_json())
    missing = invoke(["graph", str(saved), "--show", "code"])
    assert missing.exit_code == ExitCode.USAGE and "stages it has: export, aoti" in missing.output
    program = invoke(["graph", str(saved), "--show", "export"])
    assert program.exit_code == 0 and "== export [export] ==" in program.stdout and "def forward" in program.stdout
    aoti = invoke(["graph", str(saved), "--show", "aoti"])
    assert aoti.exit_code == 0 and "proxy_executor_call_function" in aoti.stdout


# --- 5. contradicting flags ------------------------------------------------------------------------------


def test_strict_and_non_strict_together_is_a_usage_error() -> None:
    result = invoke(["export", "samples/add_raw.py:Net", "--strict", "--non-strict"])
    assert result.exit_code == ExitCode.USAGE
    assert "--strict and --non-strict" in result.output and "Traceback" not in result.output


# --- 6. progress, and -q -------------------------------------------------------------------------------


def _fake_route(monkeypatch: pytest.MonkeyPatch) -> None:
    import tritoninspect.run.pipeline_export as route
    from tritoninspect.capture.progress import stage

    def run_export(spec: Any, options: Any) -> Any:
        stage("torch.export: tracing the program")
        return built_report()

    monkeypatch.setattr("tritoninspect.commands._capture.ready_to_capture", lambda: None)
    monkeypatch.setattr(route, "run_export", run_export)


@pytest.mark.parametrize("flags, shown", [([], True), (["-q"], False), (["--quiet"], False), (["--json"], False)])
def test_progress_lines_when_piped_and_off_with_quiet_or_json(monkeypatch: pytest.MonkeyPatch, flags: list[str],
                                                             shown: bool) -> None:
    _fake_route(monkeypatch)
    result = invoke(["export", "samples/add_raw.py:Net", *flags])
    assert result.exit_code == 0, result.output
    assert ("s] torch.export: tracing the program" in result.stderr) is shown


def test_the_aoti_childs_stages_reach_the_progress_display(tmp_path: Path) -> None:
    from tritoninspect.capture.progress import listening
    from tritoninspect.run import aoti

    stage_file = tmp_path / "stage"
    child = textwrap.dedent(f"""
        import time
        for s in ("eager", "export", "aoti", "aoti_load"):
            open({str(stage_file)!r}, "w").write(s)
            time.sleep(0.7)
    """)
    seen: list[str] = []
    with listening(seen.append):
        code = aoti._wait(subprocess.Popen([sys.executable, "-c", child]), stage_file)
    assert code == 0
    assert seen[0].startswith("AOTInductor (child process)")
    assert [s.split(":")[0] for s in seen[1:]] == ["AOTInductor", "AOTInductor"]
    assert "building the package" in seen[1] and "loading the package" in seen[2]


# --- 7. the user's export_dynamic_shapes() raising: exit 4 with their traceback -------------------------


def test_a_raising_dynamic_shapes_hook_is_the_users_code_failing() -> None:
    # As /tmp/hostile/m/dynraise.py: the same kind of error as example_inputs() raising.
    with pytest.raises(UserCodeError) as raised:
        export_capture(parse_spec("tests/assets/export_bad_shapes.py:Net"),
                       ExportOptions(stage="export", device="cpu", dynamic=True))
    err = raised.value
    assert err.exit_code == ExitCode.USER_CODE
    assert err.message == "error in tests/assets/export_bad_shapes.py:export_dynamic_shapes(): ValueError: no shapes today"
    # No frame of the tool's own package; compared by its directory, not by the folder name
    # "tritoninspect/", which a checkout cloned under its default name also has (issue 11).
    package_dir = str(Path(tritoninspect.__file__).resolve().parent) + "/"
    assert "export_bad_shapes.py" in err.user_traceback and package_dir not in err.user_traceback


# --- the real runs ---------------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tritoninspect", "export", *args, "--device", "cpu"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_real_export_with_a_row_of_one_says_zero_one_and_records_the_class() -> None:
    proc = _cli("samples/export_dynamic.py:Net", "--dynamic", "--stage", "export", "-i", "1x48", "--json")
    assert proc.returncode == ExitCode.USER_CODE, proc.stderr
    report = json.loads(proc.stdout)
    assert report["meta"]["target"] == "samples/export_dynamic.py:Net"
    assert [f["cause"] for f in report["export"]["findings"]] == ["zero_one_specialised_dim"]
