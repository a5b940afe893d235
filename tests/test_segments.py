"""A trace's report joined from its segments' reports is the whole capture's (analyse/segments.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tritoninspect.cli import app

from tritoninspect.analyse import build_report
from _segments import split
from _trace_expect import generated_log, make_traces
from tritoninspect.analyse.segments import join
from tritoninspect.analyse.trace import capture_from_trace
from tritoninspect.model.records import Capture
from tritoninspect.textformats.torch_trace import ARTIFACTS_READ, TraceLog, log_rank_in_name, stream_trace

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
LOGS = sorted(FIXTURES.rglob("*.log"))


def _capture(path: Path) -> Capture:
    log = TraceLog(path, log_rank_in_name(path))
    return capture_from_trace(log, str(path), stream_trace(log, ARTIFACTS_READ))


@pytest.mark.parametrize("size", [1, 2])
@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(FIXTURES).parent))
def test_joined_report_is_the_whole_one(path: Path, size: int) -> None:
    capture = _capture(path)
    whole = build_report(capture)
    parts = [build_report(part) for part in split(capture, size)]
    assert join(parts, list(capture.kernels)).to_json() == whole.to_json()


def test_every_rule_has_its_family() -> None:
    from tritoninspect.analyse.hazards import HAZARDS, RULE_IDS, family_of

    assert {family_of(rule) for rule in RULE_IDS} <= set(HAZARDS)


def test_a_recompile_in_a_later_segment_reads_the_earlier_compile() -> None:
    """recompile_constexpr: each recompile's changed arguments come from the compile it replaced, which a
    segment of one compile does not hold; without `earlier_nodes` the changes would be empty."""
    capture = _capture(next(p for p in LOGS if p.parent.name == "recompile_constexpr"))
    parts = list(split(capture, 1))
    assert any(part.recompiles for part in parts[1:])
    changed = [r for part in parts for r in build_report(part).recompiles if r.changes]
    assert changed
    for part in parts:
        part.earlier_nodes = []
    assert not [r for part in parts for r in build_report(part).recompiles if r.changes]


def _cli(monkeypatch: pytest.MonkeyPatch, size: int, *args: str) -> str:
    monkeypatch.setenv("TRITONINSPECT_TRACE_SEGMENT", str(size))
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return f"exit {result.exit_code}\n{result.output}"


COMMANDS = [("graph",), ("graph", "--json"), ("graph", "--detail"), ("breaks",), ("breaks", "--json"), ("check",),
            ("check", "--json")]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_says_the_same_of_a_trace_read_in_segments(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                 command: tuple[str, ...]) -> None:
    """A log of 90 compiles made by the trace benchmark (the real logs repeated), read whole and in segments of
    one and of seven compiles: every command's output is the same, text and JSON."""
    log = generated_log(tmp_path, 3 << 20)
    whole = _cli(monkeypatch, 10**6, command[0], str(log), *command[1:])
    for size in (1, 7):
        assert _cli(monkeypatch, size, command[0], str(log), *command[1:]) == whole


def test_an_html_page_of_a_trace_read_in_segments_is_the_same(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    log = generated_log(tmp_path, 1 << 20)
    pages = []
    for size in (10**6, 3):
        out = tmp_path / f"{size}.html"
        _cli(monkeypatch, size, "graph", str(log), "-o", str(out), "-q")
        pages.append(out.read_text())
    assert pages[0] == pages[1]


def test_rows_in_a_spill_file_read_back_as_the_sequence_they_were() -> None:
    import pickle

    from tritoninspect.model import spill as spill_module
    from tritoninspect.model.spill import Spill

    spill = Spill()
    values = [(i, f"row {i}") for i in range(spill_module.CHUNK * 2 + 7)]
    first, second = spill.rows(values[:300]), spill.rows()
    second.extend(values[300:])
    both = first.joined(second)
    assert list(both) == values and len(both) == len(values)
    assert both[0] == values[0] and both[-1] == values[-1] and both[300] == values[300]
    assert both[5:300:7] == tuple(values[5:300:7])
    assert both == tuple(values) and both != tuple(values[:-1])
    assert both + ((0, ""),) == (*values, (0, ""))
    assert pickle.loads(pickle.dumps(both)) == tuple(values)  # another process gets the rows themselves
    with pytest.raises(IndexError):
        both[len(values)]


def test_a_report_of_spilled_rows_gives_the_same_dict(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`Report.to_dict` (`to_json(indent=None)`, a report sent to a side process) reads spilled rows back."""
    from tritoninspect.model.spill import Rows
    from tritoninspect.run.traces import file_report

    log = generated_log(tmp_path, 1 << 20)
    monkeypatch.setenv("TRITONINSPECT_TRACE_SEGMENT", "3")
    spilled = file_report(log, str(log))
    assert isinstance(spilled.graphs, Rows) and isinstance(spilled.kernels[0].occurrences, Rows)
    monkeypatch.setenv("TRITONINSPECT_TRACE_SEGMENT", str(10**6))
    whole = file_report(log, str(log))
    assert spilled.to_dict() == whole.to_dict()
    assert spilled.to_json(indent=None) == whole.to_json(indent=None)


# --- the reader: a log read a segment of compiles at a time (analyse/trace_segments.py) ---------------------

SEVERAL = [p for p in LOGS if len({g.compile_id for g in _capture(p).graphs}) > 1]


def _json(monkeypatch: pytest.MonkeyPatch, log: Path, size: int | None) -> str:
    from tritoninspect.run.traces import file_report

    if size is None:
        monkeypatch.delenv("TRITONINSPECT_TRACE_SEGMENT", raising=False)
    else:
        monkeypatch.setenv("TRITONINSPECT_TRACE_SEGMENT", str(size))
    return file_report(log, "log").to_json()


@pytest.mark.parametrize("path", SEVERAL, ids=lambda p: str(p.relative_to(FIXTURES).parent))
def test_a_log_read_in_segments_gives_the_whole_report(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    whole = _json(monkeypatch, path, None)
    assert _json(monkeypatch, path, 1) == whole
    assert _json(monkeypatch, path, 2) == whole


def _interleaved(tmp_path: Path) -> Path:
    """Two real training logs as one process writes them when both frames run forward before either runs
    backward: AOTAutograd compiles each backward at its first backward call, so each compile's backward
    events come after the other compile's forward (`bwd_compilation_metrics` last)."""
    renumber, halves = make_traces()._Renumber(), []
    for name in ("triton_op_autograd", "autograd_function"):
        (log,) = (FIXTURES / "gpu" / name).glob("*.log")
        lines = renumber.copy(log.read_text().splitlines(keepends=True))
        cut = next(i for i, line in enumerate(lines) if '{"compilation_metrics"' in line) + 1
        while cut < len(lines) and lines[cut].startswith("\t"):
            cut += 1
        halves.append((lines[:cut], lines[cut:]))
    out = tmp_path / "dedicated_log_torch_trace_interleaved.log"
    out.write_text("".join(halves[0][0] + halves[1][0] + halves[0][1] + halves[1][1]))
    return out


def test_a_compile_whose_backward_comes_after_another_compile_is_read_whole(monkeypatch: pytest.MonkeyPatch,
                                                                            tmp_path: Path) -> None:
    from tritoninspect.textformats.torch_trace import TraceLog
    from tritoninspect.textformats.trace_survey import survey

    log = _interleaved(tmp_path)
    plan = survey(TraceLog(log, None), 1)
    assert plan is not None and plan.compiles == 2
    assert [len(plan.runs(s)) for s in (0, 1)] == [2, 2]  # two runs each: forward, then backward
    assert len(survey(TraceLog(log, None), 2).runs(0)) == 1  # one segment of both: the whole log, one run
    whole = json.loads(_json(monkeypatch, log, None))
    assert {o["stage"] for k in whole["kernels"] for o in k["occurrences"]} >= {"aot_backward"}
    assert _json(monkeypatch, log, 1) == json.dumps(whole, indent=2)


def test_a_gz_log_is_read_whole_whatever_the_segments(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import gzip

    (log,) = (FIXTURES / "recompile_constexpr").glob("*.log")
    packed = tmp_path / (log.name + ".gz")
    packed.write_bytes(gzip.compress(log.read_bytes()))
    assert _json(monkeypatch, packed, 1) == _json(monkeypatch, packed, None)


# --- a log that changes while it is read, and what the segmented read needs of the machine -------------------


def _with_survey_then(monkeypatch: pytest.MonkeyPatch, change) -> None:
    """`change(path)` run right after the survey (as another process would, between its reads)."""
    from tritoninspect.textformats import trace_survey

    survey = trace_survey.survey

    def surveyed_then_changed(log, size):
        found = survey(log, size)
        change(log.path)
        return found

    monkeypatch.setattr(trace_survey, "survey", surveyed_then_changed)


@pytest.mark.parametrize("change", ["cut short", "emptied", "replaced"])
def test_a_log_changed_after_its_survey_is_refused_not_misread(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                               change: str) -> None:
    """Found by a hostile user: a log cut short or replaced between the survey and the segments' reads gave
    exit 0 and a report of neither log (320 graphs where the log had 376 and its cut copy 180)."""
    import os

    from tritoninspect.model.errors import ReportError
    from tritoninspect.run.traces import file_report

    log = generated_log(tmp_path, 1 << 20)

    def cut(path: Path) -> None:
        if change == "replaced":
            other = tmp_path / "other.log"
            other.write_bytes(path.read_bytes()[::-1])
            os.replace(other, path)
        else:
            os.truncate(path, path.stat().st_size // 2 if change == "cut short" else 0)

    _with_survey_then(monkeypatch, cut)
    monkeypatch.setenv("TRITONINSPECT_TRACE_SEGMENT", "3")
    with pytest.raises(ReportError, match="the log changed while tritoninspect was reading it"):
        file_report(log, str(log))


def test_what_a_job_appends_after_the_survey_is_left_for_the_next_read(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    """A job may go on writing its log: the report is of what the survey read, not of half an event."""
    from tritoninspect.run.traces import file_report

    log = generated_log(tmp_path, 1 << 20)
    monkeypatch.setenv("TRITONINSPECT_TRACE_SEGMENT", "3")
    before = file_report(log, str(log)).to_json()
    tail = log.read_bytes()[-5000:]
    _with_survey_then(monkeypatch, lambda path: path.open("ab").write(tail))
    assert file_report(log, str(log)).to_json() == before


def test_no_room_for_the_spill_file_is_one_line_exit_5(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Found by a hostile user: a full disk or no usable temp folder was an internal error (exit 6) where a
    whole read of the same log worked."""
    import tempfile

    def no_room(*args, **kwargs):
        raise OSError(28, "No space left on device")

    log = generated_log(tmp_path, 1 << 20)
    monkeypatch.setattr(tempfile, "TemporaryFile", no_room)
    out = _cli(monkeypatch, 3, "graph", str(log))
    assert out.startswith("exit 5\n") and "No space left on device" in out and "TMPDIR" in out
    assert "Traceback" not in out and "internal error" not in out


@pytest.mark.parametrize("value", ["0", "-5", "abc", "1e3"])
def test_a_bad_segment_size_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("TRITONINSPECT_TRACE_SEGMENT", value)
    (log,) = (FIXTURES / "triton_op").glob("*.log")
    result = CliRunner().invoke(app, ["graph", str(log)])
    assert result.exit_code == 2 and f"TRITONINSPECT_TRACE_SEGMENT={value}" in result.output
