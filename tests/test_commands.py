"""The command layer with the capture replaced (tier b, fast): every command through typer's CliRunner.

`pipeline.capture_target` returns a saved capture (tests/fixtures/capture_<sample>.json, picked
by the target's file name), so each command runs its real edge, analyses, renderers, outputs
and exit codes in this process, without torch.compile; `_capture.ready_to_capture` (torch import,
gc.freeze) is a no-op. A target's attribute picks a failure instead: `:Raises` (the user's code
raised), `:Bug` (an unexpected exception of ours). diff's child runs in this process too
(`children.side.run_child`), its request and answer through JSON as between processes.
The end-to-end runs of the real CLI are in test_cli.py, test_diff_cli.py and test_breaks_e2e.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from tritoninspect import render
from tritoninspect.analyse.checks import CHECK_SCHEMA_VERSION
from tritoninspect.model.records import Capture
from tritoninspect.cli import app
from tritoninspect.model.diff_report import DiffReport
from tritoninspect.model.errors import ExitCode, UserCodeError
from tritoninspect.run.pipeline import CaptureOptions, analyse
from tritoninspect.model.report import Report
from tritoninspect.source.spec import TargetSpec

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
RAW, CUSTOM, INLINE_ASM = "samples/add_raw.py:Net", "samples/custom_op.py:Net", "samples/inline_asm.py:Net"
BREAKS = "samples/break_disabled_dispatch.py:Net"
#: The fake capture child runs in this process: one at a time, in its folder.
_ONE_CHILD = threading.Lock()
USER_TRACEBACK = 'Traceback (most recent call last, your frames only):\n  File "m.py", line 3\nValueError: bad\n'


def fixture_capture(name: str) -> Capture:
    return Capture.from_json((FIXTURES / f"capture_{name}.json").read_text(encoding="utf-8"))


def report_of(target: str) -> Report:
    """The report a command makes for `target` from its saved capture."""
    return analyse(fixture_capture(Path(target.partition(":")[0]).stem))


@dataclass
class FakeCapture:
    """Stands for `pipeline.capture_target`; records what each command asked for."""

    calls: list[tuple[TargetSpec, CaptureOptions]] = field(default_factory=list)

    def __call__(self, spec: TargetSpec, options: CaptureOptions) -> Capture:
        self.calls.append((spec, options))
        if spec.attr == "Raises":
            raise UserCodeError("the model failed under torch.compile: ValueError: bad", user_traceback=USER_TRACEBACK)
        if spec.attr == "Bug":
            raise KeyError("oops")
        if options.depyf_dump is not None:  # what depyf's dump would leave there
            (Path(options.depyf_dump) / "__transformed_code_0_for_forward.py").write_text("def forward(): ...\n")
        return fixture_capture(Path(spec.display_name).stem)

    @property
    def options(self) -> CaptureOptions:
        assert len(self.calls) == 1, self.calls
        return self.calls[0][1]


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> FakeCapture:
    fake = FakeCapture()
    monkeypatch.chdir(REPO)  # the saved captures' paths are repo-relative
    monkeypatch.setattr("tritoninspect.run.pipeline.capture_target", fake)
    monkeypatch.setattr("tritoninspect.commands._capture.ready_to_capture", lambda: None)

    def child_in_process(request: dict[str, Any], *, debug: bool = False, timeout: float | None = None,
                         on_stage: Any = None, cwd: Any = None) -> tuple[dict[str, Any], int, str]:
        from tritoninspect.children import side_child as child

        # A child runs in `cwd` (a project's checks): here, the one in-process child at a time does.
        with _ONE_CHILD, _in_dir(cwd):
            answer, code = child.respond(json.loads(json.dumps(request)))
        return json.loads(json.dumps(answer, default=str)), code, ""

    monkeypatch.setattr("tritoninspect.children.side.run_child", child_in_process)
    return fake


@contextlib.contextmanager
def _in_dir(path: Any) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(path or before)
    try:
        yield
    finally:
        os.chdir(before)


def run(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def error_of(result: Result, code: int) -> str:
    """The one `error:` line of a failed command, after which stderr holds only hints."""
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [i for i, line in enumerate(lines) if line.startswith("error: ")]
    assert len(errors) == 1 and all(line.startswith("hint: ") for line in lines[errors[0] + 1:]), result.stderr
    return lines[errors[0]].removeprefix("error: ")


def envelope(result: Result) -> dict[str, Any]:
    payload = json.loads(result.stdout)
    assert list(payload) == ["error"], result.stdout
    return payload["error"]


# --- graph ------------------------------------------------------------------------------------


def test_graph_prints_the_report(captured: FakeCapture) -> None:
    result = run("graph", RAW, "--quiet")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == render.render_as(report_of(RAW), "text") + "\n"
    assert result.stderr == ""
    spec, options = captured.calls[0]
    assert (spec.display_name, spec.attr) == ("samples/add_raw.py", "Net")
    assert options == CaptureOptions()


def test_graph_progress_lines_on_stderr_unless_quiet(captured: FakeCapture) -> None:
    # Piped (CliRunner), each stage is one line with the elapsed time; --quiet and --json silence them.
    lines = run("graph", RAW).stderr.splitlines()
    assert lines and all(line.startswith("[") and " s] " in line for line in lines), lines
    assert run("graph", RAW, "--quiet").stderr == "" and run("graph", RAW, "--json").stderr == ""


def test_graph_passes_every_capture_option(captured: FakeCapture) -> None:
    result = run("graph", RAW, "-i", "8x8", "--device", "cpu", "--dynamic", "--no-backward", "--stage", "aot",
                 "--resources", "--target", "sm_80")
    assert result.exit_code == 0, result.stderr
    assert captured.options == CaptureOptions(inputs="8x8", device="cpu", dynamic=True, backward=False, stage="aot",
                                              resources=True, arch="sm_80")


def test_graph_json_is_the_report_and_nothing_else(captured: FakeCapture) -> None:
    result = run("graph", RAW, "--json")
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout == report_of(RAW).to_json() + "\n"


@pytest.mark.parametrize("view", ["dynamo", "aot", "post-grad", "code", "fusion"])
def test_graph_show(captured: FakeCapture, view: str) -> None:
    result = run("graph", RAW, "--show", view)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == render.render(report_of(RAW), "text", show=view) + "\n"


def test_graph_show_a_stage_the_capture_lacks(captured: FakeCapture) -> None:
    message = error_of(run("graph", BREAKS, "--show", "code"), ExitCode.USAGE)
    assert message == "this report has no code graphs; stages it has: dynamo"


@pytest.mark.parametrize(("name", "fmt", "word"), [("out.txt", "text", "text"), ("out.json", "json", "JSON"),
                                                   ("out.html", "html", "HTML")])
def test_graph_output_file(captured: FakeCapture, tmp_path: Path, name: str, fmt: str, word: str) -> None:
    out = tmp_path / name
    result = run("graph", RAW, "-o", str(out), "-q")
    assert result.exit_code == 0, result.stderr
    findings = len(report_of(RAW).advice)
    what = f"{word} report: 1 kernel, {findings} finding{'s' if findings != 1 else ''}"
    assert result.stdout == "" and result.stderr == f"wrote {out} ({what})\n"  # -q: no summary
    assert out.read_text() == render.render_as(report_of(RAW), fmt, color=False) + "\n"


def test_graph_output_file_prints_the_short_summary(captured: FakeCapture, tmp_path: Path) -> None:
    result = run("graph", RAW, "-o", str(tmp_path / "r.html"))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == render.render_as(report_of(RAW), "summary") + "\n"
    assert result.stdout.startswith("tritoninspect ") and "kernels: 1 (hop 1)" in result.stdout
    assert "Advice" not in result.stdout  # in the file


def test_graph_output_file_and_json_on_stdout(captured: FakeCapture, tmp_path: Path) -> None:
    result = run("graph", RAW, "-o", str(tmp_path / "r.txt"), "--json")
    assert Report.from_json(result.stdout) == report_of(RAW)
    assert (tmp_path / "r.txt").read_text().startswith("tritoninspect ")


@pytest.mark.parametrize(("name", "message"), [
    ("missing/r.txt", "-o {path}: the directory {parent} does not exist"),
    ("missing/r.html", "-o {path}: the directory {parent} does not exist"),
])
def test_graph_output_that_cannot_be_written(captured: FakeCapture, tmp_path: Path, name: str, message: str) -> None:
    path = tmp_path / name
    assert error_of(run("graph", RAW, "-o", str(path)), ExitCode.USAGE) == message.format(path=path, parent=path.parent)


def test_graph_dump(captured: FakeCapture, tmp_path: Path) -> None:
    result = run("graph", RAW, "--dump", str(tmp_path / "d"), "-q")
    assert result.exit_code == 0, result.stderr
    files = sorted(p.name for p in (tmp_path / "d").iterdir() if not p.name.startswith("."))
    assert "report.json" in files and "0_0_dynamo.py" in files
    assert result.stderr == f"wrote {len(files)} files to {tmp_path / 'd'}\n"
    assert result.stdout == render.render_as(report_of(RAW), "text") + "\n"


def test_a_model_that_changes_directory_does_not_move_the_outputs(captured: FakeCapture, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a hostile user: a model that os.chdir'd made `--dump` write into its own directory."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    real = captured.__call__

    def wandering(spec: Any, options: Any) -> Any:
        capture = real(spec, options)
        os.chdir(elsewhere)  # what the user's forward did
        return capture

    monkeypatch.setattr("tritoninspect.run.pipeline.capture_target", wandering)
    raw = str(REPO / RAW.partition(":")[0]) + ":" + RAW.partition(":")[2]
    monkeypatch.chdir(work)
    result = run("graph", raw, "--dump", "d", "-o", "r.json", "-q")
    assert result.exit_code == 0, result.stderr
    assert (work / "d" / "report.json").is_file() and (work / "r.json").is_file()
    assert list(elsewhere.iterdir()) == [] and Path.cwd() == work


def test_graph_refuses_a_foreign_dump_directory_before_capturing(captured: FakeCapture, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert "not written by tritoninspect" in error_of(run("graph", RAW, "--dump", str(tmp_path)), ExitCode.USAGE)
    assert captured.calls == []


def test_graph_strict(captured: FakeCapture) -> None:
    assert run("graph", RAW, "--strict").exit_code == ExitCode.OK
    result = run("graph", INLINE_ASM, "--strict", "-q")
    problems = [d for d in report_of(INLINE_ASM).diagnostics if d.severity != "note"]
    assert problems and result.exit_code == ExitCode.FINDINGS
    assert result.stderr == f"--strict: {len(problems)} diagnostic(s)\n"
    assert result.stdout  # the report is still printed


@pytest.mark.parametrize("stage", ["dynamo", "aot"])
def test_graph_refuses_cudagraphs_before_inductor(captured: FakeCapture, stage: str) -> None:
    result = run("graph", RAW, "--cudagraphs", "--stage", stage)
    assert error_of(result, ExitCode.USAGE) == f"--cudagraphs needs Inductor: it cannot go with --stage {stage}"
    assert captured.calls == []


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "0", "1e7", "ten"])
def test_a_timeout_out_of_range_or_no_number_is_one_usage_error_saying_so(captured: FakeCapture, value: str) -> None:
    """`--timeout nan` said "Input should be less than or equal to 1000000" (hostile, finding K d): NaN
    compares false both ways, and the range check blamed the upper bound."""
    import io

    from tritoninspect.cli import run as cli_run

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli_run(["graph", RAW, "--timeout", value])
    assert code == ExitCode.USAGE and captured.calls == []
    lines = [line for line in err.getvalue().splitlines() if line.strip()]
    assert lines[0] == f"error: Invalid value for '--timeout': {value!r} is not a number of seconds from 0.1 to 1000000"
    assert len(lines) == 2 and lines[1].startswith("usage: ") and lines[1].endswith(" graph [OPTIONS] TARGET"), lines
    assert run("graph", RAW, "--timeout", "0.5", "-q").exit_code == ExitCode.OK


def test_graph_saved_report_refuses_every_capture_option(captured: FakeCapture) -> None:
    saved = str(REPO / "tests" / "gold" / "report.json")
    result = run("graph", saved, "-i", "4", "--device", "cpu", "--dynamic", "--backward", "--stage", "aot",
                 "--resources", "--target", "sm_80", "--json")
    message = error_of(result, ExitCode.USAGE)
    assert message == ("--inputs, --device, --dynamic, --backward/--no-backward, --stage, --resources, --target: meant for "
                       "compiling a target, not for re-rendering a saved report")
    assert envelope(result) == {"type": "UsageError", "message": message, "exit_code": 2}
    assert captured.calls == []


def test_graph_saved_report(captured: FakeCapture) -> None:
    saved = REPO / "tests" / "gold" / "report.json"
    result = run("graph", str(saved), "--json")
    # Re-rendered as saved, plus the advice a report saved without it gets in its JSON.
    from tritoninspect.analyse.advice import with_advice

    assert result.exit_code == 0 and Report.from_json(result.stdout) == with_advice(Report.from_json(saved.read_text()))
    assert captured.calls == []


# --- the one error path, for every command ---------------------------------------------------------

COMMANDS = {
    "graph": ["graph", "{target}"],
    "breaks": ["breaks", "{target}"],
    "check": ["check", "{target}", "--no-breaks"],
    "diff": ["diff", "{target}", CUSTOM],
}


def command(name: str, target: str, *extra: str) -> list[str]:
    return [arg.format(target=target) for arg in COMMANDS[name]] + list(extra)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_an_unexpected_exception_is_an_internal_error(captured: FakeCapture, name: str) -> None:
    result = run(*command(name, "samples/add_raw.py:Bug", "--json"))
    message = error_of(result, ExitCode.INTERNAL)
    assert message.endswith("internal error: KeyError: 'oops'")
    assert envelope(result) == {"type": "CaptureError", "message": message, "exit_code": 6}
    assert "hint: rerun with --debug and report it with the traceback" in result.stderr


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_users_error_shows_their_traceback(captured: FakeCapture, name: str) -> None:
    result = run(*command(name, "samples/add_raw.py:Raises"))
    assert result.exit_code == ExitCode.USER_CODE and result.stdout == ""
    before, label, after = result.stderr.partition("traceback from your code")
    assert label and "error:" not in before
    assert 'File "m.py", line 3' in after and after.count("\nerror: ") == 1
    assert "the model failed under torch.compile: ValueError: bad" in after


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_bad_target_fails_before_capturing(captured: FakeCapture, name: str) -> None:
    result = run(*command(name, "samples/add_raw", "--json"))
    assert "no ':'" in error_of(result, ExitCode.TARGET)
    assert envelope(result)["type"] == "TargetError"
    assert captured.calls == []


@pytest.mark.parametrize("name", list(COMMANDS))
def test_debug_shows_the_tools_traceback(captured: FakeCapture, name: str) -> None:
    result = run(*command(name, "samples/add_raw.py:Bug", "--debug"))
    assert result.exit_code == ExitCode.INTERNAL
    assert "Traceback" in result.stderr and "KeyError" in result.stderr
    assert result.stderr.rstrip().splitlines()[-2].endswith("internal error: KeyError: 'oops'")


# --- breaks -----------------------------------------------------------------------------------


def test_breaks_prints_the_breaks_view_of_a_dynamo_capture(captured: FakeCapture) -> None:
    result = run("breaks", BREAKS)
    assert result.exit_code == 0, result.stderr
    # Forward only: without --backward, breaks does not run the backward (auto_backward=False).
    assert captured.options == CaptureOptions(stage="dynamo", auto_backward=False)
    assert result.stdout == render.render_as(report_of(BREAKS), "breaks") + "\n"


def test_breaks_options_json_and_file(captured: FakeCapture, tmp_path: Path) -> None:
    result = run("breaks", BREAKS, "--stage", "aot", "--dynamic", "-i", "4", "-o", str(tmp_path / "b.txt"), "--json")
    assert captured.options == CaptureOptions(inputs="4", dynamic=True, stage="aot", auto_backward=False)
    assert result.stdout == report_of(BREAKS).to_json() + "\n"
    assert (tmp_path / "b.txt").read_text() == render.render_as(report_of(BREAKS), "breaks", color=False) + "\n"
    only_file = run("breaks", BREAKS, "-o", str(tmp_path / "b.json"))
    assert only_file.stdout == "" and Report.from_json((tmp_path / "b.json").read_text()) == report_of(BREAKS)


def test_breaks_decompile_dump_keeps_depyfs_files(captured: FakeCapture, tmp_path: Path) -> None:
    assert run("breaks", BREAKS, "--decompile").exit_code == 0
    assert captured.options.decompile and captured.options.depyf_dump is None
    captured.calls.clear()
    result = run("breaks", BREAKS, "--decompile", "--dump", str(tmp_path / "d"))
    assert result.exit_code == 0, result.stderr
    assert captured.options.depyf_dump is not None and not Path(captured.options.depyf_dump).exists()
    assert (tmp_path / "d" / "depyf___transformed_code_0_for_forward.py").read_text() == "def forward(): ...\n"


def test_breaks_saved_report_refuses_capture_options(captured: FakeCapture, tmp_path: Path) -> None:
    saved = tmp_path / "r.json"
    saved.write_text(report_of(BREAKS).to_json())
    message = error_of(run("breaks", str(saved), "--stage", "dynamo", "--decompile"), ExitCode.USAGE)
    assert message.startswith("--stage, --decompile: meant for compiling a target")
    # Either spelling of a two-way flag is named as both, not as the one not typed.
    message = error_of(run("breaks", str(saved), "--no-backward"), ExitCode.USAGE)
    assert message.startswith("--backward/--no-backward: meant for compiling a target")
    assert run("breaks", str(saved)).stdout == render.render_as(report_of(BREAKS), "breaks") + "\n"


# --- check ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("conditions", "stage"), [
    ([], "inductor"),
    (["--no-breaks"], "inductor"),
    (["--max-graphs", "1", "--entry", "add_kernel=hop"], "inductor"),
    (["--no-fallback"], "inductor"),
    (["--no-breaks", "--stage", "dynamo"], "dynamo"),
    (["--no-clones", "add_kernel", "--stage", "aot"], "aot"),
])
def test_check_captures_at_inductor_unless_told(captured: FakeCapture, conditions: list[str], stage: str) -> None:
    # The findings gate (always on) reads Inductor's code and launches; --stage trades it for speed.
    run("check", RAW, *conditions)
    assert captured.options == CaptureOptions(stage=stage)


def test_check_text_and_exit_codes(captured: FakeCapture) -> None:
    ok = run("check", RAW, "--no-breaks", "--entry", "add_kernel=hop", "-q")
    assert ok.exit_code == ExitCode.OK and ok.stderr == ""
    assert ok.stdout == (f"ok: 3 conditions hold for {RAW} (--no-breaks, --entry add_kernel=hop, no error finding); "
                         "mode: compile-only (CPU, kernels in Triton's interpreter: no GPU behaviour checked)\n")
    bad = run("check", BREAKS, "--no-breaks", "--max-graphs", "5", "--entry", "gelu_kernel=hop")
    assert bad.exit_code == ExitCode.FINDINGS
    assert [line.split(":")[0] for line in bad.stdout.splitlines()] == ["FAIL --no-breaks", "FAIL --entry gelu_kernel=hop"]


def test_check_json_is_versioned(captured: FakeCapture) -> None:
    from tritoninspect import __version__

    result = run("check", BREAKS, "--no-breaks", "--json")
    assert result.exit_code == ExitCode.FINDINGS
    data = json.loads(result.stdout)
    assert list(data) == ["schema_version", "tool", "tool_version", "target", "mode", "ok", "conditions", "failures"]
    assert (data["schema_version"], data["tool"], data["tool_version"]) == (CHECK_SCHEMA_VERSION, "tritoninspect",
                                                                           __version__)
    findings = "no error finding at stage dynamo (the findings of later stages were not looked for)"  # a Dynamo capture
    assert (data["target"], data["ok"], data["conditions"]) == (BREAKS, False, ["--no-breaks", findings])
    assert len(data["failures"]) == 1 and data["failures"][0].startswith("--no-breaks: ")


@pytest.mark.parametrize(("args", "message"), [
    (["--allow", "no_such_rule"], "--allow 'no_such_rule': no such finding rule"),
    (["--entry", "add_kernel"], "expected KERNEL=KIND"),
    (["--entry", "add_kernel=eager"], "expected KERNEL=KIND"),
])
def test_check_usage_errors(captured: FakeCapture, args: list[str], message: str) -> None:
    result = run("check", RAW, *args, "--json")
    assert message in error_of(result, ExitCode.USAGE)
    assert envelope(result)["type"] == "UsageError" and captured.calls == []


# --- diff -------------------------------------------------------------------------------------


def test_diff_of_two_targets(captured: FakeCapture) -> None:
    result = run("diff", RAW, CUSTOM, "-i", "64", "--inputs-b", "32", "--stage", "aot", "--no-backward")
    assert result.exit_code == 0, result.stderr
    # The sides are captured in parallel: in whichever order they start.
    assert sorted((spec.display_name, repr(options)) for spec, options in captured.calls) == [
        ("samples/add_raw.py", repr(CaptureOptions(inputs="64", stage="aot", backward=False))),
        ("samples/custom_op.py", repr(CaptureOptions(inputs="32", stage="aot", backward=False))),
    ]
    entries = next(line for line in result.stdout.splitlines() if line.startswith("add_kernel: entries"))
    assert "hop" in entries and "custom_op" in entries


def test_diff_json_file_and_save(captured: FakeCapture, tmp_path: Path) -> None:
    # -j 1: sides captured one after the other save as captured (overlapping ones gain CONTENDED_NOTE).
    result = run("diff", RAW, CUSTOM, "--json", "-o", str(tmp_path / "d.json"), "--save", str(tmp_path / "s"),
                 "-j", "1")
    assert result.exit_code == 0, result.stderr
    diff = DiffReport.from_json(result.stdout)
    assert (diff.a.target, diff.b.target) == (report_of(RAW).meta.target, report_of(CUSTOM).meta.target)
    assert DiffReport.from_json((tmp_path / "d.json").read_text()) == diff
    assert Report.from_json((tmp_path / "s" / "B.json").read_text()) == report_of(CUSTOM)
    assert result.stderr == (f"wrote {tmp_path / 's' / 'A.json'} and {tmp_path / 's' / 'B.json'}\n"
                             f"wrote {tmp_path / 'd.json'}\n")


def test_diff_writes_text_for_any_other_suffix(captured: FakeCapture, tmp_path: Path) -> None:
    # -j1: whether parallel captures overlap (no compile-time ratio then) would differ between the two runs.
    result = run("diff", RAW, CUSTOM, "-j1", "-o", str(tmp_path / "d.out"))
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "d.out").read_text() == render.render_as(
        DiffReport.from_json(run("diff", RAW, CUSTOM, "-j1", "--json").stdout), "diff", color=False) + "\n"


def test_diff_bench_in_compile_only_mode_has_compile_times(captured: FakeCapture) -> None:
    diff = DiffReport.from_json(run("diff", RAW, CUSTOM, "--bench", "--json").stdout)
    assert diff.bench is not None and diff.bench.a.eager is None and diff.bench.a.compile_s is not None


def test_a_sides_error_names_the_side(captured: FakeCapture) -> None:
    result = run("diff", RAW, "samples/custom_op.py:Raises", "--json")
    message = error_of(result, ExitCode.USER_CODE)
    assert message == "B (samples/custom_op.py:Raises): the model failed under torch.compile: ValueError: bad"
    assert envelope(result) == {"type": "UserCodeError", "message": message, "exit_code": 4}
    assert 'File "m.py", line 3' in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--stage", "aot", "--bench"], "--stage, --bench: meant for compiling a target"),
    (["-i", "4", "--inputs-b", "8"], "--inputs, --inputs-b: meant for compiling a target"),
])
def test_diff_of_two_saved_reports_refuses_capture_options(
    captured: FakeCapture, tmp_path: Path, args: list[str], message: str
) -> None:
    for name, target in (("a.json", RAW), ("b.json", CUSTOM)):
        (tmp_path / name).write_text(report_of(target).to_json())
    saved = [str(tmp_path / "a.json"), str(tmp_path / "b.json")]
    assert error_of(run("diff", *saved, *args), ExitCode.USAGE).startswith(message)
    assert run("diff", *saved).exit_code == 0 and captured.calls == []


def test_diff_refusals_with_one_saved_side(captured: FakeCapture, tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text(report_of(CUSTOM).to_json())
    assert "--bench times targets" in error_of(run("diff", RAW, str(tmp_path / "b.json"), "--bench"), ExitCode.USAGE)
    message = error_of(run("diff", RAW, str(tmp_path / "b.json"), "--inputs-b", "4"), ExitCode.USAGE)
    assert message == "--inputs-b: B is a saved report, nothing is compiled for it"
    assert captured.calls == []


# --- the renderer registry --------------------------------------------------------------------


def test_a_new_format_is_one_registry_entry(captured: FakeCapture, monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    """What adding a format takes (as the HTML renderer did): `-o x.html` works for every command writing a
    report once `RENDERERS` has the entries ("html", and "html:breaks", the page `breaks` opens on its breaks)."""
    monkeypatch.delitem(render.RENDERERS, "html")
    assert "not supported yet" in error_of(run("graph", RAW, "-o", str(tmp_path / "r.html")), ExitCode.USAGE)
    monkeypatch.setitem(render.RENDERERS, "html", lambda document, **_: f"<pre>{document.meta.target}</pre>")
    monkeypatch.setitem(render.RENDERERS, "html:breaks", render.RENDERERS["html"])
    for name in ("graph", "breaks"):
        out = tmp_path / f"{name}.html"
        assert run(name, RAW, "-o", str(out)).exit_code == 0
        assert out.read_text() == f"<pre>{report_of(RAW).meta.target}</pre>\n"


def test_diff_output_cannot_be_a_file_save_writes(captured: FakeCapture, tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    result = run("diff", RAW, CUSTOM, "--save", str(tmp_path / "s"), "-o", str(tmp_path / "s" / "A.json"))
    assert "--save writes side A's report there" in error_of(result, ExitCode.USAGE)
    assert captured.calls == [] and list((tmp_path / "s").iterdir()) == []


@pytest.mark.parametrize(("make", "message"), [
    (lambda tmp: (tmp / "afile.txt").write_text("x") and tmp / "afile.txt", "exists and is not a folder"),
    (lambda tmp: tmp / "missing" / "deeper", "does not exist"),
])
def test_a_bad_trace_folder_is_refused_before_capturing(captured: FakeCapture, tmp_path: Path, make, message) -> None:
    result = run("graph", RAW, "--trace", str(make(tmp_path)))
    assert message in error_of(result, ExitCode.USAGE)
    assert captured.calls == []


def test_o_into_a_directory_that_is_not_writable_is_refused_before_any_work(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulated: the tests may run as root, for whom every directory is writable.
    import os

    from tritoninspect.model.errors import UsageError
    from tritoninspect.render.emit import check_output

    locked = tmp_path / "locked"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != locked and real_access(path, mode))
    with pytest.raises(UsageError, match="locked is not writable"):
        check_output(locked / "r.json")
    check_output(tmp_path / "r.json")  # a writable one passes
