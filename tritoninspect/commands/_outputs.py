"""What a run writes, checked before it starts: `-o`, `--dump` and `--trace` refused now rather than
after a long compile (a UsageError, exit 2), and the log `--trace` wrote named afterwards."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from tritoninspect.model.errors import UsageError, usage_errors
from tritoninspect.render._safe import safe_text

if TYPE_CHECKING:
    from tritoninspect.source.parse import Source


def check_outputs(*, output: Path | None, dump: Path | None, sources: Iterable[Source], force: bool,
                  trace: Path | None = None) -> None:
    """Refuse `-o`, `--dump` and `--trace` now, before any compile (see the checks below)."""
    check_dump_dir(dump)
    if output is not None and dump is not None and output.resolve() == dump.resolve():
        raise UsageError(f"-o {output}: --dump writes a directory there; give -o a file name such as report.json")
    check_output_file(output, sources, force=force)
    check_trace_dir(trace, output=output, dump=dump)


def check_output_file(output: Path | None, sources: Iterable[Source], *, force: bool) -> None:
    """Refuse an `-o` file now, before any compile: not a file this run reads (a saved report,
    every file of a trace, the model's .py file), and not an existing file tritoninspect did not
    write unless `force` (render/emit.py)."""
    from tritoninspect.render.emit import check_output

    check_output(output, reads=[path for source in sources for path in source.files], force=force)


def check_dump_dir(dump: Path | None) -> None:
    """Refuse a `--dump` directory now, before a long compile, rather than after it."""
    if dump is None:
        return
    from tritoninspect.render.dump import check_dump_dir as check

    with usage_errors():
        check(dump)


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
