"""TORCH_TRACE logs -> reports: the route for runs captured elsewhere (no torch import).

`tritoninspect graph DIR` (a folder of logs, one per rank) or `graph FILE.log` read the
trace's text only: `textformats.torch_trace` splits it into events, `analyse.trace` turns
them into the records a live capture makes, and the usual analyses build the report.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from tritoninspect.model.errors import ReportError, UsageError
from tritoninspect.model.report import Diagnostic, Report

if TYPE_CHECKING:
    from tritoninspect.analyse.ranks import RanksDocument, RankSummary
    from tritoninspect.source.parse import TraceLogs
    from tritoninspect.textformats.torch_trace import TraceRun

T = TypeVar("T")


def trace_reports(logs: TraceLogs, *, json_text: bool = False) -> list[Report]:
    """One report per log file (per rank, in rank order) of the trace `logs`. The ranks
    of a job are read in parallel processes (`_in_parallel`); each log is streamed.
    `json_text`: the workers also make each report's JSON text (`Report.json_text`), which
    would otherwise be made for every rank in this one process."""
    return read_ranks(logs, _with_json_text if json_text else _itself)


def ranks_summary(logs: TraceLogs, *, facts_only: bool, json_text: bool = False) -> RankSummary | RanksDocument:
    """The ranks of `logs` and where they differ (`analyse.ranks.summarise`). `facts_only`: each rank's
    `RankFacts` (all `graph DIR --json` writes), made in the workers; else the reports, with their JSON text
    made there too when `json_text`."""
    from tritoninspect.analyse.ranks import rank_facts, summarise

    per_rank = read_ranks(logs, rank_facts if facts_only else _with_json_text if json_text else _itself)
    return summarise(logs.text, per_rank)


def read_ranks(logs: TraceLogs, make: Callable[[Report], T]) -> list[T]:
    """`make(report)` for each log file's report, in rank order, made where the report was read.
    `make` is a module-level function (it is sent to the workers by name)."""
    files = list(one_run(logs).files)
    names = [_name(logs, file, len(files)) for file in files]
    done = _in_parallel(files, names, make) if len(files) > 1 else {}
    # A rank a worker could not read (an error, or no worker) is read here, so that its
    # error is raised as it would be alone, in rank order.
    return [done[i] if i in done else make(file_report(file, name)) for i, (file, name) in enumerate(zip(files, names))]


def _itself(report: Report) -> Report:
    return report


def _with_json_text(report: Report) -> Report:
    report.json_text  # noqa: B018 - made here, in parallel; pickled back with the report
    return report


def file_report(file: Path, name: str) -> Report:
    """The report of one log file, streamed: no event is kept once read. A long log is read a segment of
    compiles at a time (`segmented_report`)."""
    from itertools import chain

    from tritoninspect.textformats.torch_trace import ARTIFACTS_READ, TraceLog, log_rank_in_name, stream_trace

    rank = log_rank_in_name(file)
    plan, log = _survey(file, rank), TraceLog(file, rank)
    if plan is not None:
        _refuse_empty(file, plan[0], plan[1].compiles > 0)
        if len(plan[1].segments) > 1:
            return segmented_report(plan[0], name, plan[1])
    events = stream_trace(log, ARTIFACTS_READ)
    first = next(events, None)
    _refuse_empty(file, log, first is not None)
    return _report(log, name, chain((first,), events))


def _refuse_empty(file: Path, log: Any, any_event: bool) -> None:
    from tritoninspect.textformats.torch_trace import TORCH_LOG_PREFIX

    if not any_event and log.unreadable:
        raise ReportError(f"{file}: no readable TORCH_TRACE events ({log.unreadable} line(s) look like events "
                          f"but do not parse, the first at line {log.first_unreadable})")
    if not any_event:
        # A log torch named is a broken trace (exit 7, docs/commands/index.md); any other file was the wrong
        # file to give (a training log): a usage error.
        error = ReportError if file.name.startswith(TORCH_LOG_PREFIX) else UsageError
        raise error(f"{file}: no TORCH_TRACE events in it",
                    hint="give the folder TORCH_TRACE named, or one of the .log files torch wrote there")


def _survey(file: Path, rank: int | None) -> tuple[Any, Any] | None:
    """(the log surveyed, its survey) when it may hold more than a segment of compiles (a log of
    `_SURVEYED_BYTES` or more, or any when `TRITONINSPECT_TRACE_SEGMENT` is set); None to read it whole."""
    import os

    try:
        small = file.stat().st_size < _SURVEYED_BYTES
    except OSError:
        return None  # the whole read says why it cannot be read
    size = segment_size()  # a bad TRITONINSPECT_TRACE_SEGMENT is refused whatever the log
    if small and not os.environ.get("TRITONINSPECT_TRACE_SEGMENT"):
        return None
    from tritoninspect.textformats.torch_trace import TraceLog
    from tritoninspect.textformats.trace_survey import survey

    log = TraceLog(file, rank)
    found = survey(log, size)
    return (log, found) if found is not None else None


#: Logs smaller than this are read whole (a few hundred compiles at most: some MiB of records).
_SURVEYED_BYTES = 8 << 20


def segmented_report(log: Any, target: str, plan: Any) -> Report:
    """The report of a long log read a segment of compiles at a time (analyse/trace_segments.py), each
    segment's rows kept in a temporary file (analyse/segments.py): the report `_report` gives, byte for byte."""
    from tritoninspect.analyse import build_report
    from tritoninspect.analyse.segments import Joiner
    from tritoninspect.analyse.trace import TRACE_UNKNOWNS
    from tritoninspect.analyse.trace_segments import segments
    from tritoninspect.model.spill import chained

    stale, parts = segments(log, target, plan)
    joiner: Joiner | None = None
    cut, missing, rank = "", set(), None
    for part in parts:
        capture = part.capture
        if joiner is None:
            joiner = Joiner(list(capture.kernels))
            mappings, index_notes = joiner.spill.rows(), joiner.spill.rows()
        joiner.add(build_report(capture, advice=False))
        mappings.extend(Diagnostic("note", "kernel_idx", n) for n in part.mappings)
        index_notes.extend(Diagnostic("note", "trace", n) for n in part.index_notes)
        cut, missing, rank = cut or part.cut, missing | _without_dynamo_ids(capture.graphs), capture.meta.get("rank")
    assert joiner is not None, "a log with compiles has a segment"
    report = joiner.report()
    notes = [Diagnostic("note", "trace", n) for n in (cut, stale) if n]
    notes += [Diagnostic("note", "trace", f"unknown from a trace: {u}") for u in TRACE_UNKNOWNS]
    meta = dataclasses.replace(report.meta, rank=rank, unknown=TRACE_UNKNOWNS)
    found = cut_off(log) + restarted(log) + _without_dynamo_graph(missing, str(log.path))
    diagnostics = chained(joiner.spill, (found, report.diagnostics, mappings, index_notes, notes))
    return dataclasses.replace(report, meta=meta, diagnostics=diagnostics)


def _in_parallel(files: list[Path], names: list[str], make: Callable[[Report], T]) -> dict[int, T]:
    """Index -> report of the files read by worker processes (forked: nothing to import
    again), as many at once as there are CPUs; a file whose worker failed is left out."""
    import multiprocessing
    import os

    if "fork" not in multiprocessing.get_all_start_methods():
        return {}
    workers = min(len(files), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    if workers < 2:
        return {}
    try:
        with multiprocessing.get_context("fork").Pool(workers, initializer=_worker_signals) as pool:
            results = _without_gc(pool.starmap, _worker_report, [(f, n, make) for f, n in zip(files, names)],
                                  chunksize=1)
    except (OSError, RuntimeError):  # no processes to be had: read them here, one at a time
        return {}
    return {i: r for i, r in enumerate(results) if r is not None}


def _without_gc(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`call(...)` with the cyclic garbage collector off: the reports that come back are acyclic data
    (64 ranks are a million objects), and each full collection while they arrive walked all of them
    (a third of a second of this process's CPU for 64 ranks of 1.4 MiB)."""
    import gc

    collecting = gc.isenabled()
    gc.disable()
    try:
        return call(*args, **kwargs)
    finally:
        if collecting:
            gc.enable()


def _worker_signals() -> None:
    """Workers die quietly when the pool ends them, and leave Ctrl-C to the parent; they collect garbage
    (a worker forked while the parent had the collector off would not)."""
    import gc
    import signal

    gc.enable()

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _worker_report(file: Path, name: str, make: Callable[[Report], T]) -> T | None:
    try:
        return make(file_report(file, name))
    except Exception:  # noqa: BLE001 - read again in the parent, which raises it as a lone read would
        return None


def one_run(logs: TraceLogs) -> TraceRun:
    """The logs of the one job of `logs`; a usage error listing the runs when the folder
    holds several (unrelated traces, or logs that are not ranks of one job)."""
    runs, target = logs.runs, logs.text
    if not runs:
        raise UsageError(f"{target}: no TORCH_TRACE logs here (files named *.log holding trace events)")
    if len(runs) > 1:
        shown = ", ".join(_run_label(logs.path, r) for r in runs[:_RUNS_SHOWN])
        more = f", and {len(runs) - _RUNS_SHOWN} more" if len(runs) > _RUNS_SHOWN else ""
        raise UsageError(
            f"{target} holds {len(runs)} separate runs, not the ranks of one job: {shown}{more}",
            hint=f"name one of them, e.g. tritoninspect graph {runs[0].where}; logs are read as ranks "
                 "of one job only when each names a different rank (_rank_<r>_ in its name, or its rank field)")
    return runs[0]


_RUNS_SHOWN = 12


def _run_label(top: Path, run: TraceRun) -> str:
    where = run.where.relative_to(top) if run.where != top else Path(".")
    label = f"{where}/" if run.where.is_dir() else str(where)
    if len(run.files) > 1:
        label += f" ({len(run.files)} ranks: {', '.join(str(r) for r in run.ranks)})"
    return label


def _name(logs: TraceLogs, file: Path, count: int) -> str:
    return logs.text if count == 1 and logs.path.is_file() else str(file)


def _report(log: object, target: str, events: Iterable[object] | None = None) -> Report:
    from tritoninspect.analyse import build_report
    from tritoninspect.analyse.trace import TRACE_UNKNOWNS, capture_from_trace

    capture = capture_from_trace(log, target, events)  # type: ignore[arg-type]
    report = build_report(capture)
    notes = tuple(Diagnostic("note", source, text) for source, text in capture.meta.get("notes", ()))
    notes += tuple(Diagnostic("note", "trace", f"unknown from a trace: {u}") for u in TRACE_UNKNOWNS)
    meta = dataclasses.replace(report.meta, rank=capture.meta.get("rank"), unknown=TRACE_UNKNOWNS)
    missing = _without_dynamo_ids(capture.graphs)
    found = cut_off(log) + restarted(log) + _without_dynamo_graph(missing, str(log.path))  # type: ignore[attr-defined]
    return dataclasses.replace(report, meta=meta, diagnostics=found + report.diagnostics + notes)


def segment_size() -> int:
    """Compiles a segment of a long trace holds: `TRITONINSPECT_TRACE_SEGMENT` (set, it also reads a log under
    `_SURVEYED_BYTES` in segments: the tests read every trace in segments of one or two), else 64: a few MiB of
    records each."""
    import os

    text = os.environ.get("TRITONINSPECT_TRACE_SEGMENT", "")
    if not text:
        return _SEGMENT
    if not (text.isdigit() and int(text) > 0):
        raise UsageError(f"TRITONINSPECT_TRACE_SEGMENT={text}: the compiles a segment of a long TORCH_TRACE log "
                         "holds, a whole number of 1 or more", hint="unset it to read logs under 8 MiB whole and "
                         "longer ones in segments of 64 compiles")
    return int(text)


_SEGMENT = 64


def _without_dynamo_ids(graphs: Iterable[Any]) -> set[str]:
    """The compiles of which `graphs` hold later stages' graphs but not the Dynamo graph."""
    graphs = list(graphs)
    traced = {g.compile_id for g in graphs if g.stage == "dynamo"}
    return {g.compile_id for g in graphs if g.compile_id not in traced}


def _without_dynamo_graph(missing: set[str], name: str) -> tuple[Diagnostic, ...]:
    """A warning per compile whose later graphs the log holds but not its Dynamo graph (a damaged line, or
    a torch that names the event differently): how its kernels entered is then read from AOTAutograd's
    graphs alone, where a raw launch looks like a triton_op's (analyse/trace_kernels.py)."""
    from tritoninspect.analyse.checks import INCOMPLETE_LOG

    return tuple(Diagnostic(
        "warning", INCOMPLETE_LOG,
        f"{name} holds no Dynamo graph for compile {cid}, only later stages' (a damaged line, or a torch whose "
        "event this reader does not know): whether its kernels were raw launches or triton_ops is a guess")
        for cid in sorted(missing, key=str))


def cut_off(log: object) -> tuple[Diagnostic, ...]:
    """Warnings for a log that is incomplete: lines that do not parse (a log cut in the middle
    of a line), lines torch's trace logger never writes (a damaged log), and compiles that started but never ended (torch logs `compilation_metrics`
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
    stray, first = log.stray, log.first_stray  # type: ignore[attr-defined]
    if stray:
        found.append(Diagnostic(
            "warning", INCOMPLETE_LOG,
            f"{stray} line{'s' if stray > 1 else ''} of {name} {'are' if stray > 1 else 'is'} not TORCH_TRACE output "
            f"(first: line {first}; the log is damaged, or another program wrote into it); what they held is missing"))
    damaged, first = log.not_utf8.lines, log.not_utf8.first  # type: ignore[attr-defined]
    if damaged:
        found.append(Diagnostic(
            "warning", INCOMPLETE_LOG,
            f"{damaged} line{'s' if damaged > 1 else ''} of {name} hold{'' if damaged > 1 else 's'} bytes that are "
            f"not UTF-8 (first: line {first}; the log is damaged), read as \ufffd: a kernel or file name in them "
            "may not match the rest of the log"))
    ended = log.ended  # type: ignore[attr-defined]
    for cid, line in log.started:  # type: ignore[attr-defined]
        if cid in ended:
            continue
        found.append(Diagnostic(
            "warning", INCOMPLETE_LOG,
            f"{name} ends in the middle of compile {cid} (started at line {line}, never "
            "finished: the job crashed or is still running); its graphs, kernels and recompiles may be missing"))
    return tuple(found)


def restarted(log: object) -> tuple[Diagnostic, ...]:
    """A warning when the log's compile ids start again (`TraceLog.restarted`): `torch._dynamo.reset()` in the
    traced process resets Dynamo's compile counters and the kernel side table, so the compiles after it reuse
    the ids (and kernel_idx) of those before, and a report keyed by them mixes the two runs."""
    from tritoninspect.analyse.checks import MIXED_LOG

    again = log.restarted  # type: ignore[attr-defined]
    if not again:
        return ()
    (cid, line), name = again[0], str(log.path)  # type: ignore[attr-defined]
    more = f" ({len(again)} compile ids repeat)" if len(again) > 1 else ""
    return (Diagnostic(
        "warning", MIXED_LOG,
        f"{name} starts compile {cid} again at line {line}{more}: the traced process numbered its compiles anew "
        "(torch._dynamo.reset()), so the compiles before and after share ids and kernel_idx, and this report mixes "
        f"their graphs, kernels and recompiles; read each part alone: head -n {line - 1} LOG > first.log; tail -n "
        f"+{line} LOG > second.log"),)


def one_report(logs: TraceLogs) -> Report:
    """The report of a single-rank trace; a usage error naming the ranks otherwise
    (the commands that compare or check take one report per side)."""
    reports = trace_reports(logs)
    if len(reports) > 1:
        ranks = ", ".join(r.meta.target for r in reports)
        raise UsageError(f"{logs.text} holds {len(reports)} logs ({ranks}): name one log file")
    return reports[0]
