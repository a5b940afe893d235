"""Where a report is written when stdout or `-o` is not an ordinary file, and what `--kernel` keeps of
each rank (found by a hostile user: a raw traceback on a full or closed stdout, a device or FIFO replaced
by `-o --force`, a link replaced by a file, other kernels' findings kept on each rank, and the `--json`
envelope glued to a document cut by Ctrl-C)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _expect import REPO, cli_env, run_cli
from tritoninspect.analyse.ranks import summarise_ranks
from tritoninspect.model.report import read_report

LOG = REPO / "tests" / "fixtures" / "traces" / "triton_op"
RANKS = REPO / "tests" / "fixtures" / "traces" / "gpu" / "ranks"


def _tool(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tritoninspect", *args], cwd=REPO, env=cli_env(), text=True,
                          stderr=subprocess.PIPE, timeout=120, check=False, **kwargs)  # type: ignore[call-overload]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("target", [LOG, RANKS], ids=["log", "ranks"])
def test_a_full_stdout_is_one_error_line_with_json_too(target: Path) -> None:
    with open("/dev/full", "w") as full:
        done = _tool(["graph", str(target), "--json"], stdout=full)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_a_closed_stdout_is_a_usage_error(json_out: bool) -> None:
    done = _tool(["graph", str(RANKS), *(["--json"] if json_out else [])], stdout=None, preexec_fn=lambda: os.close(1))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: stdout is closed") and "Traceback" not in done.stderr


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_a_closed_pipe_taking_stderr_too_is_a_usage_error(json_out: bool) -> None:
    """`tritoninspect graph LOG 2>&1 | head -1`: the report and then the error line both met the closed pipe,
    and the error line's own BrokenPipeError made the exit 1 (or 120), not the documented 2."""
    args = [sys.executable, "-m", "tritoninspect", "graph", str(LOG), *(["--json"] if json_out else [])]
    for _ in range(3):  # the reader is gone before the first write: every run meets the closed pipe
        proc = subprocess.Popen(args, cwd=REPO, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert proc.stdout is not None
        proc.stdout.close()
        assert proc.wait(timeout=120) == 2


def test_o_refuses_a_fifo_even_with_force(tmp_path: Path) -> None:
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    done = run_cli(["graph", str(LOG), "-o", str(fifo), "--force", "-q"])
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr
    assert fifo.is_fifo()


def test_o_writes_through_a_link(tmp_path: Path) -> None:
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    assert run_cli(["graph", str(LOG), "-o", str(real), "-q"]).returncode == 0
    link.symlink_to(real)
    done = run_cli(["graph", str(LOG), "-o", str(link), "-q", "--detail"])
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and json.loads(real.read_text())["schema_version"]


def test_the_envelope_after_a_cut_document_starts_its_own_line(monkeypatch: pytest.MonkeyPatch) -> None:
    from tritoninspect.commands._edge import say_error
    from tritoninspect.render import emit

    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(emit, "_stdout_open", True)  # `{"schema_version": 5, ...` written, then Ctrl-C
    out.write('{\n  "schema_version": 5,')
    say_error("interrupted", kind="Interrupted", code=130, json_out=True)
    last = out.getvalue().splitlines()[-1]
    assert json.loads(last)["error"]["exit_code"] == 130
    monkeypatch.setattr(emit, "_stdout_open", False)
    out.truncate(0), out.seek(0)
    say_error("interrupted", kind="Interrupted", code=130, json_out=True)
    assert json.loads(out.getvalue())["error"]["type"] == "Interrupted"


def test_kernel_on_the_ranks_keeps_that_kernels_findings_only() -> None:
    report = read_report(REPO / "tests" / "fixtures" / "gpu" / "triton_op_autograd.json")
    assert len({f.kernel for f in report.findings}) > 1
    without = read_report(REPO / "tests" / "fixtures" / "gpu" / "add_raw.json")
    narrowed = summarise_ranks("x", [report, without]).narrowed("mul_kernel")
    one, other = narrowed.reports
    assert [k.name for k in one.kernels] == ["mul_kernel"]
    assert one.findings == report.narrowed("mul_kernel").findings and {f.kernel for f in one.findings} <= {"mul_kernel"}
    assert other.kernels == () and other.findings == ()


def test_kernel_on_the_ranks_keeps_that_kernels_epilogues_only() -> None:
    report = read_report(REPO / "tests" / "fixtures" / "gpu" / "triton_op_autograd.json")
    without = read_report(REPO / "tests" / "fixtures" / "gpu" / "epilogues.json")
    assert without.epilogues and without.kernel("mul_kernel") is None
    one, other = summarise_ranks("x", [report, without]).narrowed("mul_kernel").reports
    assert {e.kernel for e in one.epilogues} == {"mul_kernel"} and other.epilogues == ()


def test_kernel_on_the_ranks_says_which_rank_never_launched_it() -> None:
    import dataclasses

    from tritoninspect.render import render_as

    report = read_report(REPO / "tests" / "fixtures" / "gpu" / "triton_op_autograd.json")
    without = read_report(REPO / "tests" / "fixtures" / "gpu" / "add_raw.json")
    summary = summarise_ranks("x", [report, without])
    text = render_as(dataclasses.replace(summary.narrowed("mul_kernel"), view="detail"), "ranks")
    first, second = text.split("═ log 1 ")
    assert "mul_kernel" in first and "mul_kernel: not on this rank" in second
    assert "no user-defined Triton kernels" not in second


def test_o_on_the_ranks_prints_each_ranks_short_summary_unless_quiet(tmp_path: Path) -> None:
    """As `graph LOG -o FILE` does (docs/commands/graph.md); the ranks printed nothing."""
    done = run_cli(["graph", str(RANKS), "-o", str(tmp_path / "r.txt")])
    assert done.returncode == 0, done.stderr
    assert "Where ranks differ" in done.stdout and done.stdout.count("kernels: 1 (hop 1)") == 2
    assert "═ rank 1 " in (tmp_path / "r.txt").read_text()
    quiet = run_cli(["graph", str(RANKS), "-o", str(tmp_path / "r.txt"), "-q"])
    assert quiet.returncode == 0 and quiet.stdout == ""


def test_an_output_folder_where_no_file_can_be_made_is_refused_before_the_work(tmp_path: Path) -> None:
    # os.access answers yes to root in /sys, where creating a file fails: the probe finds it first.
    from tritoninspect.model.errors import UsageError
    from tritoninspect.render.emit import check_output

    if Path("/sys").is_dir() and os.access("/sys", os.W_OK):
        with pytest.raises(UsageError, match="cannot create a file in /sys"):
            check_output(Path("/sys/report.json"))
    check_output(tmp_path / "report.json")  # a folder that takes files: no error, and nothing left in it
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "ro").mkdir()
    os.chmod(tmp_path / "ro", 0o500)
    try:
        if os.access(tmp_path / "ro", os.W_OK):  # root: only the probe can tell, and it can write here
            check_output(tmp_path / "ro" / "report.json")
            assert list((tmp_path / "ro").iterdir()) == []
        else:
            with pytest.raises(UsageError, match="not writable"):
                check_output(tmp_path / "ro" / "report.json")
    finally:
        os.chmod(tmp_path / "ro", 0o700)


def test_an_output_name_ending_in_a_slash_is_a_folder_not_a_file(tmp_path: Path) -> None:
    # `Path("out/")` is `out`: the slash was dropped and a file named `out` written.
    done = _tool(["graph", str(LOG), "-o", f"{tmp_path}/out/"], stdout=subprocess.PIPE)
    assert done.returncode == 2 and "names a folder" in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_output_through_a_link_is_probed_where_the_link_points(tmp_path: Path) -> None:
    from tritoninspect.model.errors import UsageError
    from tritoninspect.render.emit import check_output

    if not (Path("/sys/kernel").is_dir() and os.access("/sys/kernel", os.W_OK)):
        pytest.skip("needs a /sys/kernel that os.access calls writable (root on Linux)")
    (tmp_path / "x.json").symlink_to("/sys/kernel/report.json")
    with pytest.raises(UsageError, match="cannot create a file in /sys/kernel"):
        check_output(tmp_path / "x.json")


def test_a_name_near_the_length_limit_is_written(tmp_path: Path) -> None:
    # The temporary file beside it has a short name of its own (it was the output's name plus 25 bytes).
    name = "r" * 245 + ".json"
    done = _tool(["graph", str(LOG), "-o", str(tmp_path / name), "-q"], stdout=subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_a_probe_left_by_an_earlier_run_does_not_block_the_next(tmp_path: Path) -> None:
    from tritoninspect.render import emit

    first = emit._new_temp(tmp_path, ".probe")  # left behind, as by a killed run of the same pid
    emit.check_output(tmp_path / "report.json")
    assert list(tmp_path.iterdir()) == [first]


REPORT = REPO / "tests" / "fixtures" / "report_small.json"


@pytest.mark.parametrize("args", [
    ["graph", str(REPORT)], ["graph", str(REPORT), "--kernel", "add_kernel"], ["graph", str(RANKS)],
    ["graph", str(REPORT), "--json"], ["breaks", str(REPORT)], ["diff", str(REPORT), str(REPORT)],
], ids=["graph", "graph-kernel", "ranks", "graph-json", "breaks", "diff"])
def test_o_dash_is_stdout_as_without_o(tmp_path: Path, args: list[str]) -> None:
    """`-o -` wrote a file named `-` in the current folder (hostile user): it is stdout, as for Unix tools,
    and prints what the command prints without `-o` (docs/commands/index.md); `./-` names that file."""
    plain = run_cli(args, cwd=tmp_path)
    dashed = run_cli([*args, "-o", "-"], cwd=tmp_path)
    assert dashed.returncode == plain.returncode == 0, dashed.stderr
    assert dashed.stdout == plain.stdout and dashed.stdout and "wrote" not in dashed.stderr
    assert list(tmp_path.iterdir()) == []
    named = run_cli([*args, "-o", "./-", "-q"], cwd=tmp_path)
    assert named.returncode == 0 and [p.name for p in tmp_path.iterdir()] == ["-"], named.stderr


@pytest.mark.parametrize("args", [
    ["graph", str(REPORT), "--dump", "-"], ["graph", str(REPORT), "--trace", "-"], ["export", str(REPORT), "--dump", "-"],
    ["breaks", str(REPORT), "--dump", "-"], ["diff", str(REPORT), str(REPORT), "--save", "-"],
    ["check", str(REPORT), "--junit-xml", "-"],
], ids=["graph-dump", "graph-trace", "export-dump", "breaks-dump", "diff-save", "check-junit"])
def test_dash_for_a_folder_or_junit_is_refused_in_one_line(tmp_path: Path, args: list[str]) -> None:
    """`--dump -` made a folder named `-`, `check --junit-xml -` a file named `-` (hostile user): stdout cannot
    take a folder, and carries check's own results; exit 2 before any work, `./-` for that name."""
    done = run_cli(args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[0].startswith("error: Invalid value for '--") and "./-" in done.stderr
    assert "Traceback" not in done.stderr and list(tmp_path.iterdir()) == []
