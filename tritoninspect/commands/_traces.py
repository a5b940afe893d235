"""What the commands do with TORCH_TRACE logs: several ranks at once, and `--trace DIR`'s files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from tritoninspect.model.errors import UsageError
from tritoninspect.render._safe import safe_text

if TYPE_CHECKING:
    from tritoninspect.source.parse import TraceLogs


def emit_ranks(logs: TraceLogs, *, json_out: bool, output: Path | None, view: str = "text",
               kernel: str | None = None, dump: Path | None = None, strict: bool = False,
               err: Console | None = None) -> None:
    """A report per rank and where the ranks differ, as text or (`--json`) one document.

    `view` is how the text shows each rank ("text", "detail", "show:code"...); `kernel`
    narrows the printed ranks to that kernel (an error when no rank has it); `strict`
    exits 1 when any rank's report has warnings or errors. `--dump` writes one report's
    files: refused here (name one rank's log)."""
    import dataclasses

    import typer

    from tritoninspect.analyse.ranks import summarise_ranks
    from tritoninspect.model.errors import ExitCode
    from tritoninspect.render.emit import emit
    from tritoninspect.run.traces import trace_reports

    if dump is not None:
        raise UsageError(f"--dump {dump}: a dump holds one report's files, and {logs.text} holds several ranks",
                         hint="name one rank's log: tritoninspect graph LOG --dump DIR")
    reports = trace_reports(logs)
    summary = summarise_ranks(logs.text, reports)
    shown = dataclasses.replace(summary if kernel is None else summary.narrowed(kernel), view=view)
    # As for one report: -o gets the whole document, stdout the view asked for.
    emit(dataclasses.replace(summary, view="detail" if view == "detail" else "text"), None, output, text="ranks")
    if json_out or not output or view.startswith("show:"):
        emit(summary if json_out else shown, "json" if json_out else "ranks")
    problems = [(name, d) for name, r in zip(summary.ranks, summary.reports) for d in r.diagnostics
                if d.severity != "note"]
    if strict and problems:
        where = ", ".join(dict.fromkeys(name for name, _ in problems))
        if err is not None:
            err.print(f"[yellow]--strict: {len(problems)} diagnostic(s) ({escape(safe_text(where))})[/]")
        raise typer.Exit(ExitCode.FINDINGS)


def check_trace_dir(directory: Path | None, *, output: Path | None = None, dump: Path | None = None) -> None:
    """Refuse a `--trace` folder now, before a long compile (UsageError, exit 2): it must be a
    folder, or a name whose parent folder exists, and writable, and not where `-o` or `--dump` write."""
    if directory is None:
        return
    for flag, path in (("-o", output), ("--dump", dump)):
        if path is not None and path.resolve() == directory.resolve():
            raise UsageError(f"--trace {directory}: {flag} writes there too; give each its own path")
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
        err.print(f"[yellow]--trace {escape(safe_text(str(directory)))}: no trace was written (nothing compiled?)[/]")
        return
    for log in new:
        shown, folder = escape(safe_text(str(log))), escape(safe_text(str(directory)))  # user paths: no escapes
        err.print(f"wrote {shown}  (open it with: tlparse {shown}; tritoninspect graph {folder})", highlight=False,
                  soft_wrap=True)
