"""The CLI's one error path: every error becomes one `error:` line, an exit code and, with `--json`, the envelope.

- `edge(json_out=..., debug=...)`: every command runs its body inside it; a
  `TritonInspectError`, or any other exception as an internal error, becomes its stderr
  lines (the user's own traceback apart), its documented exit code and, with `--json`,
  the error envelope on stdout. Commands only raise.
- `say_error(...)`: the one writer of the `error:` line (with `hint:` and `usage:`) and of
  the envelope (`model.errors.envelope`); `cli.run` (usage errors, Ctrl-C), `fail`,
  `exit_if_failed`, the capture's watchdog and `diff`'s failed sides all say theirs through it.
- `exit_if_failed(report, ...)`: a report of a failed compile is out; say so, exit 4.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from tritoninspect.model.errors import (
    CaptureTimeout,
    ExitCode,
    TimeoutProblem,
    TritonInspectError,
    UserCodeError,
    envelope,
    internal_error,
)
from tritoninspect.render._safe import safe_text

if TYPE_CHECKING:
    from tritoninspect.model.report import Report


class _StderrConsole(Console):
    """stderr's console. Rich's answer to a closed pipe is SystemExit(1) (`Console.on_broken_pipe`, which
    Rich's docs leave to subclasses); here stderr is quieted and the run keeps the exit code of what went
    wrong: `tritoninspect graph LOG 2>&1 | head -1` exited 1 instead of the documented 2."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        _quiet_stderr()


@contextlib.contextmanager
def edge(*, json_out: bool = False, debug: bool = False) -> Iterator[Console]:
    """Run a command body; map every error it raises to stderr, an exit code and the JSON envelope.

    Yields the stderr console. A `typer.Exit` raised by the body (its own exit code,
    e.g. findings) passes through unchanged.
    """
    err = _StderrConsole(stderr=True, highlight=False)
    try:
        yield err
    except typer.Exit:
        raise
    except CaptureTimeout as exc:
        fail(TimeoutProblem(str(exc), hint="a hang in an import or a compile: rerun with --debug to see where"),
             err, json_out=json_out, debug=debug)
    except TritonInspectError as exc:
        fail(exc, err, json_out=json_out, debug=debug)
    except Exception as exc:  # noqa: BLE001 - a bug of ours: one line, exit 6, traceback with --debug
        fail(internal_error(exc), err, json_out=json_out, debug=debug)


def fail(exc: TritonInspectError, err: Console, *, json_out: bool, debug: bool) -> NoReturn:
    """Print `exc` (call it while handling the exception) and exit with its code."""
    if debug:
        err.print_exception(show_locals=False)
    if isinstance(exc, UserCodeError) and exc.user_traceback:
        err.rule("[bold]traceback from your code[/]", style="red")
        # An exception message of the user's can hold a line "error: ..." or "hint: ...": indented,
        # so the run's own one `error:` line stays the only one (scripts grep for it).
        shown = re.sub(r"^(?=(?:error|hint):)", "  ", safe_text(exc.user_traceback.rstrip()), flags=re.M)
        err.print(shown, markup=False, highlight=False, soft_wrap=True)
        err.rule(style="red")
    say_error(exc.message, kind=type(exc).__name__, code=exc.exit_code, json_out=json_out, hint=exc.hint, err=err)
    raise typer.Exit(int(exc.exit_code))


def say_error(message: str, *, kind: str = "", code: int = 0, json_out: bool = False, hint: str | None = None,
              usage: str | None = None, err: Console | None = None, stdout_fd: int | None = None) -> None:
    """Say an error: its `error:` line on stderr, then a `hint:` and a `usage:` line when given,
    each one line however long or hostile (`one_line`), through `err` (the label coloured on a
    terminal) or written plainly; with `json_out`, the envelope of `kind` and exit `code` on
    stdout, or on `stdout_fd` (a copy of stdout kept while the stdout guard moves fd 1)."""
    lines = [("error", message), ("hint", hint), ("usage", usage)]
    said = [(label, one_line(text)) for label, text in lines if text]
    try:
        if err is not None:
            for label, text in said:
                style = "bold red" if label == "error" else "dim"
                err.print(f"[{style}]{label}:[/] {escape(text)}", highlight=False, soft_wrap=True)
        else:
            sys.stderr.write("".join(f"{label}: {text}\n" for label, text in said))
            sys.stderr.flush()
    except (OSError, ValueError):  # stderr is a closed pipe too (`2>&1 | head -1`): the exit code says it
        _quiet_stderr()
    if json_out:
        _say_envelope(json.dumps({"error": envelope(kind, message, code)}) + "\n", stdout_fd)


def _quiet_stderr() -> None:
    """stderr cannot be written: point it at /dev/null, so that nothing written later (Python's flush at exit
    included, which would make the exit 120) fails again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115 - fd 2 stays open for the interpreter


def _say_envelope(document: str, stdout_fd: int | None) -> None:
    """The envelope on stdout: on a line of its own after part of a document (`--json` is written in
    pieces, and an error or Ctrl-C can cut it); nothing when stdout is closed or cannot be written
    (full, a closed pipe): the `error:` line on stderr says it all."""
    from tritoninspect.render.emit import stdout_mid_document

    if stdout_mid_document():
        document = "\n" + document
    try:
        if stdout_fd is not None:
            os.write(stdout_fd, document.encode())
        elif sys.stdout is not None:
            sys.stdout.write(document)
            sys.stdout.flush()
    except (OSError, ValueError):  # ValueError: stdout closed by the program
        pass


#: The `error:` line's length at most: an exception message of megabytes is cut (its traceback has it all).
MAX_LINE = 2000


def one_line(text: str) -> str:
    """`text` safe for one terminal line: control characters and escape sequences out
    (render/_safe.py), line breaks folded, so a hostile path cannot fake a second line;
    cut at `MAX_LINE` characters."""
    line = " ".join(safe_text(text).split())
    return line if len(line) <= MAX_LINE else f"{line[:MAX_LINE]}... ({len(line) - MAX_LINE} more characters)"


def exit_if_failed(report: Report, err: Console, line: Callable[[Report], str] | None = None) -> None:
    """The report of a failed compile is out (stdout or -o): say so in one line (`line(report)`, by
    default the failure's own line), exit 4."""
    if report.failure is None:
        return
    if line is None:
        from tritoninspect.analyse.emulation import failure_caveat
        from tritoninspect.render._failure import failure_line

        text = failure_line(report.failure, caveat=failure_caveat(report))
    else:
        text = line(report)
    say_error(text, err=err)
    raise typer.Exit(int(ExitCode.USER_CODE))
