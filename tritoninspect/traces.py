"""TORCH_TRACE logs -> reports: the route for runs captured elsewhere (no torch import).

`tritoninspect graph DIR` (a folder of logs, one per rank) or `graph FILE.log` read the
trace's text only: `textformats.torch_trace` splits it into events, `analyse.trace` turns
them into the records a live capture makes, and the usual analyses build the report.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from tritoninspect.model.errors import ReportError, TargetError, UsageError
from tritoninspect.model.report import Diagnostic, Report

if TYPE_CHECKING:
    from tritoninspect.textformats.torch_trace import TraceRun


def is_trace(target: str) -> bool:
    """Does `target` name a TORCH_TRACE log or a folder of them?"""
    from tritoninspect.textformats.torch_trace import is_trace_path

    return is_trace_path(target)


def trace_reports(target: str) -> list[Report]:
    """One report per log file (per rank, in rank order) of the trace at `target`."""
    from tritoninspect.textformats.torch_trace import read_trace

    files = list(one_run(target).files)
    reports = []
    for file in files:
        log = read_trace(file)
        if not log.events and log.unreadable:
            raise ReportError(f"{file}: no readable TORCH_TRACE events ({log.unreadable} line(s) look like events "
                              f"but do not parse, the first at line {log.first_unreadable})")
        if not log.events:
            raise UsageError(f"{file}: no TORCH_TRACE events in it",
                             hint="give the folder TORCH_TRACE named, or one of the .log files torch wrote there")
        reports.append(_report(log, _name(target, file, len(files))))
    return reports


def one_run(target: str) -> TraceRun:
    """The logs of the one job at `target`; a usage error listing the runs when the folder
    holds several (unrelated traces, or logs that are not ranks of one job)."""
    from tritoninspect.textformats.torch_trace import trace_runs

    runs = trace_runs(Path(target))
    if not runs:
        raise UsageError(f"{target}: no TORCH_TRACE logs here (files named *.log holding trace events)")
    if len(runs) > 1:
        shown = ", ".join(_run_label(target, r) for r in runs[:_RUNS_SHOWN])
        more = f", and {len(runs) - _RUNS_SHOWN} more" if len(runs) > _RUNS_SHOWN else ""
        raise UsageError(
            f"{target} holds {len(runs)} separate runs, not the ranks of one job: {shown}{more}",
            hint=f"name one of them, e.g. tritoninspect graph {runs[0].where}; logs are read as ranks "
                 "of one job only when each names a different rank (_rank_<r>_ in its name, or its rank field)")
    return runs[0]


_RUNS_SHOWN = 12


def _run_label(target: str, run: TraceRun) -> str:
    where = run.where.relative_to(target) if run.where != Path(target) else Path(".")
    label = f"{where}/" if run.where.is_dir() else str(where)
    if len(run.files) > 1:
        label += f" ({len(run.files)} ranks: {', '.join(str(r) for r in run.ranks)})"
    return label


def _name(target: str, file: Path, count: int) -> str:
    return target if count == 1 and Path(target).is_file() else str(file)


def _report(log: object, target: str) -> Report:
    from tritoninspect.analyse import build_report
    from tritoninspect.analyse.trace import TRACE_UNKNOWNS, capture_from_trace

    capture = capture_from_trace(log, target)  # type: ignore[arg-type]
    report = build_report(capture)
    notes = tuple(Diagnostic("note", source, text) for source, text in capture.meta.get("notes", ()))
    notes += tuple(Diagnostic("note", "trace", f"unknown from a trace: {u}") for u in TRACE_UNKNOWNS)
    meta = dataclasses.replace(report.meta, rank=capture.meta.get("rank"), unknown=TRACE_UNKNOWNS)
    return dataclasses.replace(report, meta=meta, diagnostics=cut_off(log) + report.diagnostics + notes)


def cut_off(log: object) -> tuple[Diagnostic, ...]:
    """Warnings for a log that is incomplete: lines that do not parse (a log cut in the middle
    of a line), and compiles that started but never ended (torch logs `compilation_metrics`
    at the end of every compile, failed ones too: torch/_dynamo/convert_frame.py), so a
    report read from it is missing what came after: recompiles, graphs, kernels."""
    from tritoninspect.analyse.checks import INCOMPLETE_LOG

    name, found = str(log.path), []  # type: ignore[attr-defined]
    unreadable, first = log.unreadable, log.first_unreadable  # type: ignore[attr-defined]
    if unreadable:
        found.append(Diagnostic(
            "warning", INCOMPLETE_LOG,
            f"{unreadable} line{'s' if unreadable > 1 else ''} of {name} could not be read (first: line {first}; "
            "the log may be cut off: the job crashed or is still running); what follows from them is missing"))
    events = log.events  # type: ignore[attr-defined]
    ended = {e.compile_id for e in events if e.name == "compilation_metrics"}
    started = [e for e in events if e.name == "dynamo_start" and e.compile_id not in ended]
    for event in started:
        found.append(Diagnostic(
            "warning", INCOMPLETE_LOG,
            f"{name} ends in the middle of compile {event.compile_id} (started at line {event.line}, never "
            "finished: the job crashed or is still running); its graphs, kernels and recompiles may be missing"))
    return tuple(found)


def one_report(target: str) -> Report:
    """The report of a single-rank trace; a usage error naming the ranks otherwise
    (the commands that compare or check take one report per side)."""
    reports = trace_reports(target)
    if len(reports) > 1:
        ranks = ", ".join(r.meta.target for r in reports)
        raise UsageError(f"{target} holds {len(reports)} logs ({ranks}): name one log file")
    return reports[0]


_FORMS = "a model (path/to/model.py:Net), a saved report (.json), or a TORCH_TRACE log or folder"


def not_a_target(text: str) -> TargetError | None:
    """What `text` is when it is no target spec but names something else (a folder without trace logs, a log that does not exist): a clearer error than the spec's."""
    path = Path(text)
    if text.endswith((".log", ".log.gz")) and not path.exists():
        return TargetError(f"{text}: no such file")
    if not path.is_dir() or (path / "__init__.py").is_file():
        return None
    logs = [p for p in path.iterdir() if p.name.endswith((".log", ".log.gz"))]
    reports = sorted(p.name for p in path.iterdir() if p.name.endswith(".json"))
    if logs:
        what = (f"found {len(logs)} .log files that are not torch traces" if len(logs) > 1 else
                f"found 1 .log file that is not a torch trace: {logs[0].name}")
    elif reports:
        what = f"it holds {', '.join(reports[:3])}: name a saved report, e.g. {path / reports[0]}"
    elif not any(path.iterdir()):
        what = "the folder is empty"
    else:
        what = "no .log files, and not a Python package"
    return TargetError(f"no TORCH_TRACE logs in {text} ({what})", hint=f"give {_FORMS}")


def refuse_trace(target: str, command: str) -> None:
    """`export` and the like need a model: a trace holds no program to run again."""
    if is_trace(target):
        raise TargetError(f"{command} needs a model target (path/to/model.py:Net), not a TORCH_TRACE trace: "
                          f"{target} holds logs of a past run, nothing to {command}")
