"""TORCH_TRACE logs -> reports: the route for runs captured elsewhere (no torch import).

`tritoninspect graph DIR` (a folder of logs, one per rank) or `graph FILE.log` read the
trace's text only: `textformats.torch_trace` splits it into events, `analyse.trace` turns
them into the records a live capture makes, and the usual analyses build the report.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from tritoninspect.errors import UsageError
from tritoninspect.report import Diagnostic, Report

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
    return dataclasses.replace(report, meta=meta, diagnostics=report.diagnostics + notes)


def one_report(target: str) -> Report:
    """The report of a single-rank trace; a usage error naming the ranks otherwise
    (the commands that compare or check take one report per side)."""
    reports = trace_reports(target)
    if len(reports) > 1:
        ranks = ", ".join(r.meta.target for r in reports)
        raise UsageError(f"{target} holds {len(reports)} logs ({ranks}): name one log file")
    return reports[0]
