"""What the commands do with TORCH_TRACE logs: several ranks at once, and `--trace DIR`'s files."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from tritoninspect.errors import UsageError


def is_trace_of_ranks(target: str) -> bool:
    """Is `target` a trace of several logs (ranks)?"""
    from tritoninspect.traces import is_trace

    if not is_trace(target):
        return False
    from tritoninspect.textformats.torch_trace import trace_runs

    runs = trace_runs(Path(target))
    # Several runs: the ranks route says so (a usage error listing them).
    return len(runs) > 1 or (len(runs) == 1 and len(runs[0].files) > 1)


def emit_ranks(target: str, *, json_out: bool, output: Path | None) -> None:
    """A report per rank and where the ranks differ, as text or (`--json`) one document."""
    from tritoninspect.analyse.ranks import summarise_ranks
    from tritoninspect.render.emit import emit
    from tritoninspect.traces import trace_reports

    summary = summarise_ranks(target, trace_reports(target))
    emit(summary, "json" if json_out else None if output else "ranks", output, text="ranks")


def check_trace_dir(directory: Path | None) -> None:
    """Refuse a `--trace` folder now, before a long compile (UsageError, exit 2): it must be a
    folder, or a name whose parent folder exists, and writable."""
    if directory is None:
        return
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--trace {directory}: exists and is not a folder; give a folder for the trace log")
    parent = directory if directory.exists() else directory.parent
    if not parent.is_dir():
        raise UsageError(f"--trace {directory}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--trace {directory}: {parent} is not writable")


def logs_in(directory: Path | None) -> set[Path]:
    """The `.log` files in `directory` now (to tell which ones a run adds)."""
    if directory is None or not directory.is_dir():
        return set()
    return set(directory.glob("*.log"))


def say_trace_written(err: Console, directory: Path | None, before: set[Path]) -> None:
    """Name the log `--trace` wrote, and how tlparse and tritoninspect read it back."""
    if directory is None:
        return
    new = sorted(logs_in(directory) - before)
    if not new:
        err.print(f"[yellow]--trace {escape(str(directory))}: no trace was written (nothing compiled?)[/]")
        return
    for log in new:
        err.print(f"wrote {escape(str(log))}  (open it with: tlparse {escape(str(log))}; "
                  f"tritoninspect graph {escape(str(directory))})", highlight=False, soft_wrap=True)
