"""The commands on TORCH_TRACE logs: several ranks, `breaks`/`check`/`diff` on traces, and
`graph --trace DIR` writing a trace that reads back as the same report (slow: it compiles)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from _trace_expect import TRACES, assert_same_kernels, breaks, recompiles
from tritoninspect.cli import app
from tritoninspect.run.traces import trace_reports
from tritoninspect.source.parse import parse_source

RANKS = TRACES / "ranks"
REPO = Path(__file__).resolve().parents[1]


def cli(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def rank_log(rank: int) -> str:
    (log,) = RANKS.glob(f"*_rank_{rank}_*.log")
    return str(log)


def test_two_rank_trace_gives_a_report_per_rank_and_where_they_differ() -> None:
    result = cli("graph", str(RANKS), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["ranks"] == ["rank 0", "rank 1"]
    assert [r["meta"]["rank"] for r in data["reports"]] == [0, 1]
    differ = {d["what"]: {g["ranks"][0]: g["value"] for g in d["groups"]} for d in data["differences"]}
    # tools/make_rank_trace.py: rank 1 also ran 100 elements, so it recompiled and rank 0 did not.
    assert differ["recompiles"]["rank 0"] == "none"
    assert "size mismatch" in differ["recompiles"]["rank 1"]
    assert differ["kernel one_block_kernel"] == {"rank 0": "hop in 0/0", "rank 1": "hop in 0/0, 0/1"}
    assert "graph breaks" not in differ


def test_two_rank_trace_text_names_the_differences_then_each_rank() -> None:
    result = cli("graph", str(RANKS))
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "Where ranks differ" in text and "recompiles" in text
    assert text.index("═ rank 0 ═") < text.index("═ rank 1 ═")


def test_diff_of_two_rank_logs() -> None:
    result = cli("diff", rank_log(0), rank_log(1), "--json")
    assert result.exit_code in (0, 1), result.output
    data = json.loads(result.stdout)
    assert (data["a"]["mode"], data["b"]["mode"]) == ("trace", "trace")
    rows = {r["name"]: (r["a"], r["b"]) for r in data["rows"] if r["section"] == "graphs"}
    assert rows["recompiles"] == (0, 1)


def test_breaks_and_check_read_a_trace() -> None:
    trace = str(TRACES / "graph_break")
    shown = cli("breaks", trace)
    assert shown.exit_code == 0, shown.output
    assert "Skip calling `torch.compiler.disable()`d function" in shown.stdout
    checked = cli("check", trace, "--no-breaks", "--entry", "add_kernel=hop")
    assert checked.exit_code == 1
    failures = [line for line in checked.stdout.splitlines() if line.startswith("FAIL")]
    assert len(failures) == 1 and failures[0].startswith("FAIL --no-breaks: 2 graph breaks")


def test_capture_options_are_refused_for_a_trace() -> None:
    result = cli("graph", str(RANKS), "--device", "cpu")
    assert result.exit_code == 2
    assert "--device" in result.output


def test_a_folder_of_logs_with_one_log_is_one_report() -> None:
    result = cli("graph", str(TRACES / "add_raw"), "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["meta"]["mode"] == "trace"


def test_a_folder_of_unrelated_runs_is_a_usage_error_listing_them() -> None:
    """tests/fixtures/traces holds one run per subfolder (no log names a rank, except the two
    of ranks/): they are not the ranks of one job."""
    result = cli("graph", str(TRACES))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "rank 2" not in result.output
    runs = sorted(p for p in TRACES.iterdir() if p.is_dir() and any(p.glob("*.log")))
    assert f"holds {len(runs)} separate runs, not the ranks of one job" in " ".join(result.output.split())
    assert "ranks/ (2 ranks: 0, 1)" in " ".join(result.output.split())


def copy_log(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text(src.read_text())
    return dst


def test_logs_are_ranks_of_one_job_only_when_each_names_a_different_rank(tmp_path: Path) -> None:
    from tritoninspect.textformats.torch_trace import trace_runs

    (one,) = (TRACES / "add_raw").glob("*.log")
    (two,) = (TRACES / "triton_op").glob("*.log")
    # A TORCH_TRACE folder two single-process jobs wrote into: two runs, not two ranks.
    shared = tmp_path / "shared"
    copy_log(one, shared / one.name), copy_log(two, shared / two.name)
    assert [len(r.files) for r in trace_runs(shared)] == [1, 1]
    assert cli("graph", str(shared)).exit_code == 2
    # Per-rank folders of one job (the rank in each log's events): one run of two ranks.
    job = tmp_path / "job"
    for rank in (0, 1):
        copy_log(Path(rank_log(rank)), job / f"node{rank}" / f"trace_{rank}.log")
    (run,) = trace_runs(job)
    assert run.ranks == (0, 1)
    result = cli("graph", str(job), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ranks"] == ["rank 0", "rank 1"]
    # The same rank twice (two jobs' rank 0): not one job.
    twice = tmp_path / "twice"
    copy_log(Path(rank_log(0)), twice / "a" / "x.log"), copy_log(Path(rank_log(0)), twice / "b" / "y.log")
    assert len(trace_runs(twice)) == 2


def test_a_folder_others_write_to_is_read_as_far_as_it_lasts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`breaks /tmp` was an internal error (FileNotFoundError): a subfolder another process removed between its
    listing and its scan; and `-o`'s check of what is read walked every file under the folder (whole virtual
    environments in /tmp). A vanished subfolder holds no logs; what is read is the runs' logs."""
    import os

    from tritoninspect.textformats.torch_trace import trace_runs

    job = tmp_path / "job"
    for rank in (0, 1):
        copy_log(Path(rank_log(rank)), job / f"node{rank}" / f"trace_{rank}.log")
    (job / "gone").mkdir()
    (job / "venv" / "lib" / "deep").mkdir(parents=True)
    (job / "venv" / "lib" / "deep" / "module.py").write_text("x = 1\n")
    (job / "notes.txt").write_text("not a log\n")
    scandir = os.scandir

    def vanishing(path: object = ".") -> object:
        if Path(os.fsdecode(path)).name == "gone":  # type: ignore[arg-type]
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", vanishing)
    (run,) = trace_runs(job)
    assert run.ranks == (0, 1)
    source = parse_source(str(job))
    assert sorted(source.files) == sorted(run.files)  # type: ignore[union-attr]


def test_a_log_without_trace_events_is_one_error_line(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("epoch 1 loss 0.3\n")
    result = cli("graph", str(log))
    assert result.exit_code == 2
    assert "no TORCH_TRACE events" in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_graph_trace_writes_a_trace_that_reads_back_as_the_same_report(tmp_path: Path) -> None:
    trace_dir = tmp_path / "trace"
    command = [sys.executable, "-m", "tritoninspect", "graph", "samples/triton_op.py:Net", "--device", "cpu",
               "--trace", str(trace_dir), "-o", str(tmp_path / "live.json")]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (log,) = trace_dir.glob("*.log")
    assert f"wrote {log}" in done.stderr
    from tritoninspect.model.report import read_report

    live = read_report(tmp_path / "live.json")
    (trace,) = trace_reports(parse_source(str(trace_dir)))
    assert_same_kernels(trace, live)
    assert breaks(trace) == breaks(live) and recompiles(trace) == recompiles(live)
    # Provenance was on for the run: the kernel was named from it.
    assert any("provenance" in d.message for d in trace.diagnostics if d.source == "kernel_idx")
    # One trace, not two: the recorder's handler only reads.
    assert sum(1 for line in log.read_text().splitlines() if '"inductor_output_code"' in line) == 1


def test_a_trace_of_a_failed_compile_reports_the_failure_and_exits_4() -> None:
    """tests/fixtures/traces/shape_mismatch: tests/assets/failures/shape_mismatch.py under plain
    torch.compile, which fails while Dynamo traces (the trace's compilation_metrics say why)."""
    (report,) = trace_reports(parse_source(str(TRACES / "shape_mismatch")))
    failure = report.failure
    assert (failure.stage, failure.compile_id, failure.exc_type) == ("dynamo", "0/0", "RuntimeError")
    assert failure.message == "matmul: a and b must have same reduction dim, but got [2, 4] X [5, 3]."
    assert failure.user_frame == "tests/assets/failures/shape_mismatch.py:14"
    result = cli("graph", str(TRACES / "shape_mismatch"))
    assert result.exit_code == 4


@pytest.mark.parametrize("command", ["graph", "breaks"])
def test_o_never_replaces_a_log_of_the_trace_folder_it_reads(tmp_path: Path, command: str) -> None:
    import shutil

    folder = tmp_path / "run"
    shutil.copytree(RANKS, folder)
    log = sorted(folder.rglob("*.log"))[-1]
    before = log.read_bytes()
    target = str(folder) if command == "graph" else str(log)
    result = cli(command, target, "-o", str(log), "--force")
    assert result.exit_code == 2 and "this run reads that file" in result.stderr
    assert log.read_bytes() == before


def test_capture_options_on_a_trace_say_it_is_a_trace() -> None:
    """Found by a hostile user: `graph DIR --cudagraphs` spoke of "re-rendering a saved report"."""
    for target, words in ((TRACES / "ranks", "reading a TORCH_TRACE folder"),
                          (next((TRACES / "ranks").glob("*.log")), "reading a TORCH_TRACE log")):
        result = cli("graph", str(target), "--cudagraphs")
        assert result.exit_code == 2 and f"--cudagraphs: meant for compiling a target, not for {words}" in result.output
