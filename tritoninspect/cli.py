"""The `tritoninspect` command line: builds the Typer app and registers the commands.

Each command is one module of `tritoninspect/commands/`; they share option aliases
(`commands/_options.py`), one error path (`commands/_edge.py`), one way to their report
(`commands/_capture.py`) and one way out (`render/emit.py`). Heavy imports (torch, triton,
the capture layer) happen inside commands, so `tritoninspect --help` starts fast.

No `from __future__ import annotations` here nor in the command modules (graph, diff, breaks, check,
export): typer reads each command's parameters from their annotations at every start, `--help` too, and
string annotations cost it an `eval` each (374 of them: building the commands took 12 ms, 4 ms without);
names imported only for type checking are quoted instead (tests/test_help.py).
"""

import contextlib
import os
import signal
import sys
from typing import Annotated, Any, Optional

import typer

from tritoninspect import __version__
from tritoninspect.model.errors import ExitCode, Terminated
from tritoninspect.commands import breaks, check, diff, export, graph
from tritoninspect.commands._edge import say_error
from tritoninspect.commands._help import EXAMPLES, HelpCommand, HelpGroup, import_help_formatter, wants_help

EXIT_CODES = (
    "Exit codes: 0 ok · 1 findings (--strict, check) · 2 usage · 3 target or inputs · "
    "4 your code raised · 5 environment (no GPU, no Triton) · 6 internal error · 7 unreadable saved report · "
    "8 --timeout reached · 130 interrupted (Ctrl-C)."
)

app = typer.Typer(
    name="tritoninspect",
    cls=HelpGroup,
    help="See what torch.compile did with your user-defined Triton kernels.",
    epilog=EXIT_CODES,
    rich_markup_mode="rich",
    no_args_is_help=True,
    # No shell-completion options: detecting the shell costs start-up time on every call.
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tritoninspect {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        Optional[bool], typer.Option("--version", callback=_version, is_eager=True, metavar="",
                                     help="Show the version and exit.")
    ] = None,
) -> None:
    """See what torch.compile did with your user-defined Triton kernels."""


for _command in (graph.graph, diff.diff, breaks.breaks, check.check, export.export):
    app.command(cls=HelpCommand, epilog=EXAMPLES[_command.__name__])(_command)


def main(interrupted: bool = False) -> None:
    """Run the command in sys.argv and exit with the documented code (`tritoninspect/__main__.py` calls it).
    `interrupted`: Ctrl-C came while this module was being imported; the run stops there, saying so."""
    # SIGTERM (a job scheduler, `timeout`) unwinds like Ctrl-C does, so capture children are killed and
    # temporary folders removed, instead of the default of dying at once and orphaning them.
    signal.signal(signal.SIGTERM, _terminated)
    if interrupted:
        code = _interrupted(json_out="--json" in sys.argv[1:])
    else:
        code = run(sys.argv[1:])
    _close_stdout()
    if code == ExitCode.INTERRUPTED:
        # Interrupted mid-import (of torch, of the user's module), half-initialised extension
        # modules can fail during interpreter shutdown, and a run that printed `error: interrupted`
        # was seen to die by SIGINT instead of exiting 130. Everything of ours is cleaned up by now.
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _terminated(signum: int, frame: object) -> None:
    raise Terminated(128 + signum)


def _close_stdout() -> None:
    """The report is out: what runs after it (the user's module's `atexit` handlers, interpreter
    shutdown) writes to stderr, so stdout carries only the report (`--json` stays one document)."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        os.dup2(2, 1)
        sys.stdout = sys.stderr


def run(args: list[str]) -> int:
    """Run the app on `args`; usage errors and Ctrl-C become one line and their exit codes.

    Typer's own handling (standalone mode) prints usage errors in a box and nothing on
    stdout with `--json`; here they go through the same contract as every other error.
    """
    # Each command gets `--json` from Typer, but a usage error comes out of Typer's parsing itself,
    # and Ctrl-C or SIGTERM can come before a command runs (while torch imports): for those alone
    # the flag is read from the arguments, here.
    json_out = "--json" in args
    if wants_help(args):
        import_help_formatter()  # without the Rich modules help never uses: commands/_help.py
    try:
        result = app(args=args, standalone_mode=False, prog_name=_prog_name())
    except KeyboardInterrupt:
        return _interrupted(json_out=json_out)
    except Terminated as exc:  # SIGTERM: the same line and envelope as Ctrl-C, exit 143
        return _stop("terminated", "Terminated", int(exc.code or 143), json_out=json_out)
    except Exception as exc:  # noqa: BLE001 - only Click's usage errors are handled here
        if type(exc).__name__ == "Abort":  # Click turns Ctrl-C into Abort
            return _interrupted(json_out=json_out)
        if not _is_usage_error(exc):
            raise
        return _usage_error(exc, json_out=json_out)
    if result == ExitCode.INTERRUPTED:  # typer 0.29+ turns Ctrl-C into a silent Exit(130)
        return _interrupted(json_out=json_out)
    return result if isinstance(result, int) else 0


def _is_usage_error(exc: BaseException) -> bool:
    """Click's UsageError (typer vendors Click from 0.29 on, so match by class name)."""
    return any(cls.__name__ == "UsageError" for cls in type(exc).__mro__)


def _usage_error(exc: Any, *, json_out: bool) -> int:
    if type(exc).__name__ == "NoArgsIsHelpError":  # `tritoninspect` alone: the help, as before
        exc.show()
        return int(ExitCode.USAGE)
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    ctx = getattr(exc, "ctx", None)
    usage = ctx.get_usage().replace("Usage: ", "", 1) if ctx is not None else ""
    return _stop(message, "UsageError", ExitCode.USAGE, json_out=json_out, usage=usage)


def _interrupted(*, json_out: bool) -> int:
    return _stop("interrupted", "Interrupted", ExitCode.INTERRUPTED, json_out=json_out)


def _stop(message: str, kind: str, code: int, *, json_out: bool, usage: str | None = None) -> int:
    """One `error:` line (and the usage line) on stderr; the JSON envelope with --json."""
    say_error(message, kind=kind, code=code, json_out=json_out, usage=usage)
    return int(code)


def _prog_name() -> str:
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "tritoninspect"
    return "python -m tritoninspect" if name in ("__main__.py", "-m", "-c") else name
