"""A project's checks (`tritoninspect check` without a TARGET): each entry captured in its own process.

Every entry's target is captured by a fresh `side_child` process run in the pyproject's
directory (so `package.module:Net` imports from there and the compiles share no state),
`jobs` at a time; a saved report is read here. Its conditions are then checked here. An entry
whose capture ends in an error (its import raised, `--timeout`) is a result too: the others
go on.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritoninspect.analyse.check_suite import EntryResult, SuiteResult
from tritoninspect.model.errors import TritonInspectError
from tritoninspect.source.parse import Source, TargetSpec

if TYPE_CHECKING:
    from tritoninspect.run.pipeline import CaptureOptions

#: Hears each stage an entry's capture starts: (entry name, stage).
EntryProgress = Callable[[str, str], None]


@dataclass(frozen=True)
class Job:
    """One entry to check: what to capture, how, and the conditions (display -> `check_report` keywords)."""

    name: str
    target: str
    source: Source
    options: CaptureOptions
    conditions: Mapping[str, Mapping[str, Any]]
    #: Where it is declared, for annotations and JUnit.
    file: str
    line: int


def check_all(jobs: Sequence[Job], *, pyproject: str, cwd: Path, parallel: int, timeout: float | None = None,
              debug: bool = False, progress: EntryProgress | None = None) -> SuiteResult:
    """Every job checked, `parallel` captures at a time, in a child process each run in `cwd`."""
    from tritoninspect.children.side import in_parallel

    calls = [functools.partial(check_one, job, cwd=cwd, timeout=timeout, debug=debug, progress=progress)
             for job in jobs]
    started = time.monotonic()
    entries = tuple(in_parallel(calls, jobs=parallel))
    return SuiteResult(pyproject, entries, seconds=time.monotonic() - started)


def check_one(job: Job, *, cwd: Path, timeout: float | None, debug: bool,
              progress: EntryProgress | None) -> EntryResult:
    """One job's result: its conditions checked on its report, or the error its capture ended with."""
    from tritoninspect.analyse.checks import run_checks
    from tritoninspect.children.side import capture_side
    from tritoninspect.run.acquire import acquire

    started = time.monotonic()
    try:
        if isinstance(job.source, TargetSpec):
            on_stage = None if progress is None else functools.partial(progress, job.name)
            report = capture_side(job.name, job.source.text, options=job.options, debug=debug, timeout=timeout,
                                  on_stage=on_stage, cwd=cwd).report
        else:
            report = acquire(job.source, job.options)
    except TritonInspectError as exc:
        # The entry's line names it already: not again as the side the child's error names.
        message = exc.message
        for prefix in (f"{job.name} ({getattr(job.source, 'text', job.target)}): ", f"{job.name}: "):
            message = message.removeprefix(prefix)
        error = message + (f" ({exc.hint})" if exc.hint else "")
        return EntryResult(job.name, job.target, job.file, job.line, None, error=error,
                           error_kind=type(exc).__name__, seconds=time.monotonic() - started)
    # The files a failure names, relative to the folder the user ran `check` in (the entry's `file` is too).
    result = run_checks(report, job.conditions, target=job.target, cwd=Path.cwd())
    return EntryResult(job.name, job.target, job.file, job.line, result, seconds=time.monotonic() - started)
