"""The command line end to end (tier c, fast): help, version, every bad-input path, saved reports.

Each case is a real `python -m tritoninspect` process: its exit code, its stderr (one
`error:` line, maybe a `hint:` line, never a tool traceback) and its stdout (nothing, or
only JSON with `--json`). Error paths stop before compiling; the two runs that trace a
model stop after Dynamo (`--stage dynamo`). Every case starts up front, two at a time
(`cli` fixture), because each process pays for importing torch.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from _expect import REPO, CliRuns, cli_env, explain
from tritoninspect.model.errors import ExitCode
from tritoninspect.render.emit import written_by_tritoninspect
from tritoninspect.model.report import SCHEMA_VERSION, Report

ASSETS = REPO / "tests" / "assets"
SIMPLE = "tests/assets/simple_model.py"
CLASSES = "tests/assets/class_inputs_model.py"
FIXTURE = REPO / "tests" / "fixtures" / "report_small.json"
RAISES = ASSETS / "raises_in_forward.py"
BROKEN = ASSETS / "broken_import.py"
FOREIGN = {"notes.txt": "mine, not tritoninspect's\n", "keep.py": "x = 1\n"}


@dataclass
class Setup:
    """Files the cases read, made before any process starts."""

    tmp: Path
    target_dir: Path
    target_cwd: Path
    target_before: list[str]

    @property
    def foreign(self) -> Path:
        return self.tmp / "foreign"


def make_files(tmp: Path) -> Setup:
    report = json.loads(FIXTURE.read_text())
    (tmp / "garbage.json").write_text("this is not JSON {\n")
    (tmp / "binary.json").write_bytes(b"\xff\xfe\x00\x81 not text")
    (tmp / "v2.json").write_text(json.dumps({**report, "schema_version": 99}))
    (tmp / "meta_not_object.json").write_text(json.dumps({**report, "meta": 3}))
    (tmp / "kernels_not_objects.json").write_text(json.dumps({**report, "kernels": [1, 2]}))
    dynamo_only = [g for g in report["graphs"] if g["stage"] == "dynamo"]
    assert dynamo_only and len(dynamo_only) < len(report["graphs"])
    (tmp / "dynamo_only.json").write_text(json.dumps({**report, "graphs": dynamo_only}))
    (tmp / "a_file").write_text("not a directory\n")
    (tmp / "foreign").mkdir()
    for name, text in FOREIGN.items():
        (tmp / "foreign" / name).write_text(text)
    target_dir, target_cwd = tmp / "target", tmp / "cwd"
    target_dir.mkdir()
    target_cwd.mkdir()
    shutil.copy(ASSETS / "simple_model.py", target_dir / "model.py")
    return Setup(tmp, target_dir, target_cwd, listing(target_dir))


def listing(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def cases(s: Setup) -> dict[str, tuple[list[str], dict[str, Any]]]:
    """Every process this file runs. Most error cases use --json: stderr still carries the
    error line, so one run checks both streams."""
    t = s.tmp
    small = str(FIXTURE)
    return {
        # Slowest first (they trace a model), so they overlap with the rest.
        "raises in forward": (["graph", f"{RAISES.relative_to(REPO)}:Net", "--stage", "dynamo", "--json"], {}),
        # Python writes __pycache__ next to an imported module unless told not to; users
        # do not set PYTHONDONTWRITEBYTECODE, so neither does this run.
        "target dir": (
            ["graph", str(s.target_dir / "model.py") + ":Net", "--stage", "dynamo", "--device", "cpu"],
            {"cwd": s.target_cwd, "env": cli_env(PYTHONDONTWRITEBYTECODE=None)},
        ),
        "missing file": (["graph", "no_such_model.py:Net"], {}),
        "missing file --debug": (["graph", "no_such_model.py:Net", "--debug"], {}),
        "no colon": (["graph", "samples/add_raw", "--json"], {}),
        "bad attribute": (["graph", "samples/add_raw.py:1Net", "--json"], {}),
        "missing attribute": (["graph", f"{SIMPLE}:Nett", "--json"], {}),
        "import error": (["graph", f"{BROKEN.relative_to(REPO)}:Net"], {}),
        "no inputs": (["graph", f"{CLASSES}:NoInputs", "--json"], {}),
        "inputs do not fit": (["graph", f"{CLASSES}:WrongArity", "--json"], {}),
        "--inputs do not fit": (["graph", f"{SIMPLE}:Net", "--inputs", "4", "--json"], {}),
        "bad --inputs shape": (["graph", f"{SIMPLE}:Net", "--inputs", "4xq", "--json"], {}),
        "bad --inputs dtype": (["graph", f"{SIMPLE}:Net", "--inputs", "4:floaty", "--json"], {}),
        "cuda": (["graph", f"{SIMPLE}:Net", "--device", "cuda", "--stage", "dynamo", "--json"], {}),
        # Saved reports: no torch import, so these are quick.
        "garbage report": (["graph", str(t / "garbage.json")], {}),
        "garbage report --json": (["graph", str(t / "garbage.json"), "--json"], {}),
        "absent report": (["graph", str(t / "absent.json"), "--json"], {}),
        "binary report": (["graph", str(t / "binary.json")], {}),
        "meta not an object": (["graph", str(t / "meta_not_object.json")], {}),
        "kernels not objects": (["graph", str(t / "kernels_not_objects.json")], {}),
        "schema 99": (["graph", str(t / "v2.json"), "--json"], {}),
        "show missing stage": (["graph", str(t / "dynamo_only.json"), "--show", "code"], {}),
        "dump into foreign dir": (["graph", small, "--dump", str(s.foreign)], {}),
        "dump onto a file": (["graph", small, "--dump", str(t / "a_file")], {}),
        "html output": (["graph", small, "-o", str(t / "r.html")], {}),
        "saved report": (["graph", small], {}),
        "saved report --json": (["graph", small, "--json"], {}),
        "saved report -o": (["graph", small, "-o", str(t / "out.json")], {}),
        "saved report --strict": (["graph", small, "--strict"], {}),
        "saved report with capture options": (["graph", small, "--inputs", "4", "--stage", "dynamo", "--json"], {}),
        "version": (["--version"], {}),
    }


@dataclass
class Cli:
    runs: CliRuns
    setup: Setup

    def __call__(self, key: str) -> subprocess.CompletedProcess[str]:
        return self.runs.get(key)


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Any:
    setup = make_files(tmp_path_factory.mktemp("cli"))
    runs = CliRuns(workers=2)
    for key, (args, kwargs) in cases(setup).items():
        runs.submit(key, args, timeout=300, **kwargs)
    yield Cli(runs, setup)
    runs.close()


# --- checks -------------------------------------------------------------------------------------


PROGRESS = re.compile(r"^\[ *\d+\.\d s\] ")


def error_line(proc: subprocess.CompletedProcess[str], code: int, kind: str | None = None) -> str:
    """The one `error:` line of a tool error: stderr holds that line and maybe a hint, no
    traceback; stdout is empty, or with --json only a JSON error of type `kind`."""
    assert proc.returncode == code, explain(proc)
    assert "Traceback" not in proc.stderr, proc.stderr
    # Progress lines (`[  2.5 s] importing ...`) may come first: the capture had started.
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not PROGRESS.match(line)]
    assert lines and lines[0].startswith("error: "), proc.stderr
    assert all(line.startswith("hint: ") for line in lines[1:]), proc.stderr
    message = lines[0].removeprefix("error: ")
    if "--json" in proc.args:
        assert json_error(proc) == {"type": kind, "message": message, "exit_code": code}
    else:
        assert proc.stdout == ""
    return message


def hint_of(proc: subprocess.CompletedProcess[str]) -> str:
    hints = [line.removeprefix("hint: ") for line in proc.stderr.splitlines() if line.startswith("hint: ")]
    assert len(hints) == 1, proc.stderr
    return hints[0]


def json_error(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """With --json, stdout is one JSON document even on error: {"error": {...}}."""
    payload = json.loads(proc.stdout)
    assert list(payload) == ["error"], proc.stdout
    return payload["error"]


def user_traceback(proc: subprocess.CompletedProcess[str], asset: Path) -> list[tuple[str, int]]:
    """A user-code error: exit 4, a labelled traceback with only the user's frames, one error line."""
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    head, label, rest = proc.stderr.partition("traceback from your code")
    assert label and "error:" not in head, proc.stderr
    frames = [(f, int(n)) for f, n in re.findall(r'File "([^"]+)", line (\d+)', rest)]
    assert frames and all(Path(f) == asset for f, _ in frames), rest
    assert len(re.findall(r"^error: ", rest, re.M)) == 1
    return frames


def marker_line(path: Path, marker: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if marker in line)


# --- help and version -----------------------------------------------------------------------------

HELP_SCRIPT = """
import json, sys
from tritoninspect.cli import app
loaded = {}
for argv in (["--help"], ["graph", "--help"], ["graph", sys.argv[1], "--json"]):
    try:
        app(argv, prog_name="tritoninspect")
    except SystemExit as exc:
        assert exc.code in (0, None), (argv, exc.code)
    loaded[" ".join(argv[:2])] = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "triton"))
print(json.dumps(loaded), file=sys.stderr)
"""


def test_help_and_saved_reports_do_not_import_torch() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", HELP_SCRIPT, str(FIXTURE)],
        cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stderr.strip().splitlines()[-1])
    assert loaded == {"--help": [], "graph --help": [], f"graph {FIXTURE}": []}
    assert "graph" in proc.stdout and "--inputs" in proc.stdout


BAD_TARGET_SCRIPT = """
import sys
from tritoninspect.cli import app
codes = []
for argv in (["graph", "nope.py:Net"], ["breaks", "samples/add_raw.py:Net:x"], ["check", "samples/add_raw.py:1Net", "--no-breaks"]):
    try:
        app(argv, prog_name="tritoninspect")
    except SystemExit as exc:
        codes.append(exc.code)
print(codes, sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "triton")), file=sys.stderr)
"""


def test_a_bad_target_fails_before_torch_is_imported() -> None:
    """A typo costs a fraction of a second, not the seconds of importing torch."""
    proc = subprocess.run([sys.executable, "-c", BAD_TARGET_SCRIPT], cwd=REPO, env=cli_env(), capture_output=True,
                          text=True, timeout=60)
    assert proc.stderr.strip().splitlines()[-1] == f"[{ExitCode.TARGET.value}, {ExitCode.TARGET.value}, " \
        f"{ExitCode.TARGET.value}] []", proc.stderr


def test_graph_help_lists_the_options() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tritoninspect", "graph", "--help"], cwd=REPO, env=cli_env(COLUMNS="200"),
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    for option in ("--inputs", "--device", "--dynamic", "--backward", "--stage", "--show", "--json", "--output",
                   "--dump", "--strict", "--debug"):
        assert option in proc.stdout


def test_help_documents_the_exit_codes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tritoninspect", "--help"], cwd=REPO, env=cli_env(COLUMNS="200"),
        capture_output=True, text=True, timeout=60,
    )
    text = " ".join(proc.stdout.replace("│", " ").split())
    assert "Exit codes" in text
    for code in ExitCode:
        assert f"{int(code)} " in text.split("Exit codes", 1)[1]


def test_version(cli: Cli) -> None:
    from tritoninspect import __version__

    proc = cli("version")
    assert proc.returncode == 0, explain(proc)
    assert proc.stdout == f"tritoninspect {__version__}\n"


# --- the target ---------------------------------------------------------------------------------


def test_missing_file(cli: Cli) -> None:
    assert error_line(cli("missing file"), ExitCode.TARGET) == "No such file: no_such_model.py"


def test_debug_shows_the_traceback(cli: Cli) -> None:
    proc = cli("missing file --debug")
    assert proc.returncode == ExitCode.TARGET
    assert "Traceback" in proc.stderr and "TargetError" in proc.stderr
    assert proc.stderr.rstrip().splitlines()[-1] == "error: No such file: no_such_model.py"


@pytest.mark.parametrize(("key", "why"), [("no colon", "no ':'"), ("bad attribute", "not a Python identifier")])
def test_malformed_spec(cli: Cli, key: str, why: str) -> None:
    line = error_line(cli(key), ExitCode.TARGET, "TargetError")
    assert why in line and "path/to/model.py:Net" in line


def test_missing_attribute_lists_what_exists(cli: Cli) -> None:
    proc = cli("missing attribute")
    line = error_line(proc, ExitCode.TARGET, "TargetError")
    assert "No attribute 'Nett'" in line
    assert "Net, Block" in line and "make_model" in line
    assert hint_of(proc) == f"did you mean {SIMPLE}:Net?"


def test_import_error_shows_the_users_traceback(cli: Cli) -> None:
    proc = cli("import error")
    frames = user_traceback(proc, BROKEN)
    assert frames == [(str(BROKEN), marker_line(BROKEN, "CALL-LINE")), (str(BROKEN), marker_line(BROKEN, "RAISE-LINE"))]
    assert "FileNotFoundError: weights.bin is missing" in proc.stderr
    assert proc.stdout == ""


def test_exception_in_forward_gives_a_report_of_the_failure(cli: Cli) -> None:
    """A forward that raises under torch.compile still gives a report: with --json, stdout
    is the report (not the error envelope) holding the failure, and the exit code is 4."""
    proc = cli("raises in forward")
    assert proc.returncode == ExitCode.USER_CODE, explain(proc)
    report = json.loads(proc.stdout)
    failure = report["failure"]
    assert (failure["stage"], failure["exc_type"], failure["message"]) == ("run", "ValueError", "expected 3 rows, got 4")
    call, raise_ = marker_line(RAISES, "CALL-LINE"), marker_line(RAISES, "RAISE-LINE")
    assert failure["user_stack"] == [f"{RAISES}:{call} in forward", f"{RAISES}:{raise_} in check_rows"]
    assert failure["user_frame"] == f"{RAISES}:{raise_} in check_rows"
    assert failure["torch_frame"] is None  # the user's code raised, not torch
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "ValueError: expected 3 rows, got 4" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr


# --- inputs -------------------------------------------------------------------------------------------


def test_no_example_inputs_lists_the_three_ways(cli: Cli) -> None:
    line = error_line(cli("no inputs"), ExitCode.TARGET, "InputsError")
    assert "--inputs" in line and "example_inputs()" in line and "example_inputs staticmethod" in line


def test_inputs_that_do_not_fit_forward(cli: Cli) -> None:
    line = error_line(cli("inputs do not fit"), ExitCode.TARGET, "InputsError")
    assert "WrongArity.forward(x, y)" in line and "got 3 inputs" in line


def test_cli_inputs_that_do_not_fit_forward(cli: Cli) -> None:
    line = error_line(cli("--inputs do not fit"), ExitCode.TARGET, "InputsError")
    assert "Net.forward(x, y)" in line and "got 1 input (from --inputs)" in line


@pytest.mark.parametrize(("key", "bad"), [("bad --inputs shape", "'4xq'"), ("bad --inputs dtype", "'floaty'")])
def test_bad_inputs_text(cli: Cli, key: str, bad: str) -> None:
    assert bad in error_line(cli(key), ExitCode.TARGET, "InputsError")


# --- environment ------------------------------------------------------------------------------------


def test_cuda_without_gpu(cli: Cli) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    assert "no CUDA GPU" in error_line(cli("cuda"), ExitCode.ENVIRONMENT, "EnvironmentProblem")


# --- saved reports ----------------------------------------------------------------------------------


def test_saved_report_renders_without_compiling(cli: Cli) -> None:
    proc = cli("saved report")
    assert proc.returncode == 0, explain(proc)
    assert proc.stderr == ""
    report = Report.from_json(FIXTURE.read_text())
    for kernel in report.kernels:
        assert kernel.name in proc.stdout


def test_saved_report_json_round_trips(cli: Cli) -> None:
    proc = cli("saved report --json")
    assert proc.returncode == 0, explain(proc)
    assert _as_saved(Report.from_json(proc.stdout)) == Report.from_json(FIXTURE.read_text())


def test_saved_report_to_file(cli: Cli) -> None:
    proc = cli("saved report -o")
    out = cli.setup.tmp / "out.json"
    assert proc.returncode == 0, explain(proc)
    assert proc.stdout.startswith("tritoninspect ") and "Advice" not in proc.stdout  # the short summary
    assert proc.stderr.strip().startswith(f"wrote {out} (JSON report: ")
    assert _as_saved(Report.from_json(out.read_text())) == Report.from_json(FIXTURE.read_text())


def _as_saved(written: Report) -> Report:
    """A re-rendered saved report, less the advice its JSON gains (the fixture was saved without it)."""
    import dataclasses

    assert written.advice  # the default view's findings are in the JSON (their paths depend on the cwd)
    return dataclasses.replace(written, advice=())


def test_strict_exits_1_on_diagnostics(cli: Cli) -> None:
    proc = cli("saved report --strict")
    count = len(Report.from_json(FIXTURE.read_text()).diagnostics)
    assert count > 0
    assert proc.returncode == ExitCode.FINDINGS, explain(proc)
    assert proc.stderr.strip() == f"--strict: {count} diagnostic(s)"
    assert proc.stdout  # the report is still printed


@pytest.mark.parametrize(("key", "file", "message"), [
    ("garbage report", "garbage.json", "not valid JSON: Expecting value: line 1 column 1 (char 0)"),
    ("garbage report --json", "garbage.json", "not valid JSON: Expecting value: line 1 column 1 (char 0)"),
    ("absent report", "absent.json", "cannot read: No such file or directory"),
    ("schema 99", "v2.json", f"schema_version: this tritoninspect reads version {SCHEMA_VERSION}, got 99"),
])
def test_unreadable_report(cli: Cli, key: str, file: str, message: str) -> None:
    assert error_line(cli(key), ExitCode.REPORT, "ReportError") == f"{cli.setup.tmp / file}: {message}"


def test_binary_report(cli: Cli) -> None:
    line = error_line(cli("binary report"), ExitCode.REPORT)
    assert line == f"{cli.setup.tmp / 'binary.json'}: not UTF-8 text (invalid start byte at byte 0)"


@pytest.mark.parametrize(("key", "message"), [
    ("meta not an object", "meta_not_object.json: meta: expected an object, got 3"),
    ("kernels not objects", "kernels_not_objects.json: kernels[0]: expected an object, got 1 (and 1 more)"),
])
def test_report_with_malformed_records(cli: Cli, key: str, message: str) -> None:
    assert error_line(cli(key), ExitCode.REPORT) == f"{cli.setup.tmp}/{message}"


def test_capture_options_with_a_saved_report(cli: Cli) -> None:
    line = error_line(cli("saved report with capture options"), ExitCode.USAGE, "UsageError")
    assert line.startswith("--inputs, --stage: ")


def test_show_a_stage_the_report_lacks(cli: Cli) -> None:
    line = error_line(cli("show missing stage"), ExitCode.USAGE)
    assert line == "this report has no code graphs; stages it has: dynamo"


# --- outputs ------------------------------------------------------------------------------------------


def test_dump_refuses_a_foreign_directory(cli: Cli) -> None:
    proc = cli("dump into foreign dir")
    assert "not empty and was not written by tritoninspect" in error_line(proc, ExitCode.USAGE)
    foreign = cli.setup.foreign
    assert listing(foreign) == sorted(FOREIGN)
    assert {name: (foreign / name).read_text() for name in FOREIGN} == FOREIGN


def test_dump_onto_a_file(cli: Cli) -> None:
    assert "is not a directory" in error_line(cli("dump onto a file"), ExitCode.USAGE)
    assert (cli.setup.tmp / "a_file").read_text() == "not a directory\n"


def test_html_output_writes_a_page(cli: Cli) -> None:
    proc = cli("html output")
    assert proc.returncode == 0, explain(proc)
    page = (cli.setup.tmp / "r.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and written_by_tritoninspect(cli.setup.tmp / "r.html")


def test_graph_writes_nothing_next_to_the_target_or_in_cwd(cli: Cli) -> None:
    proc = cli("target dir")
    assert proc.returncode == 0, explain(proc)
    after = [p for p in listing(cli.setup.target_dir) if not p.startswith("__pycache__")]
    assert after == cli.setup.target_before == ["model.py"]
    assert listing(cli.setup.target_cwd) == []


def test_graph_leaves_no_bytecode_cache_next_to_the_target(cli: Cli) -> None:
    proc = cli("target dir")
    assert proc.returncode == 0, explain(proc)
    assert listing(cli.setup.target_dir) == ["model.py"]


@pytest.mark.parametrize(("text", "ours"), [
    ("tritoninspect 0.1.0  target: samples/add_raw.py:Net\n", True),
    ("tritoninspect 0.1.0  diff\n", True),
    ("tritoninspect  trace: /runs/job1\n", True),  # the ranks view
    ("tritoninspect graph model.py:Net -o out.html   # TODO: ask Bob\nmy notes\n", False),
    ("tritoninspect is great\n", False),
])
def test_only_our_own_text_counts_as_ours(tmp_path: Path, text: str, ours: bool) -> None:
    (tmp_path / "out.txt").write_text(text)
    assert written_by_tritoninspect(tmp_path / "out.txt") is ours


def test_every_text_view_starts_with_our_mark(tmp_path: Path) -> None:
    import dataclasses

    from tritoninspect import __version__, render
    from tritoninspect.model.report import read_report

    report = read_report(REPO / "tests" / "gold" / "report.json")
    report = dataclasses.replace(report, meta=dataclasses.replace(report.meta, tool_version=__version__))
    for fmt in ("text", "detail", "breaks"):
        (tmp_path / fmt).write_text(render.render_as(report, fmt, width=100, color=False))
        assert written_by_tritoninspect(tmp_path / fmt), fmt
