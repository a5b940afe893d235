"""Exception hierarchy, the documented exit codes, and an error's JSON form.

Code below the CLI raises these; only the command edge (`commands/_edge.py`)
turns them into one line on stderr, an exit code and, with `--json`, the envelope
(`envelope`). Keep the numbers stable: they are documented in docs/commands/index.md
(exit codes) and scripts depend on them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from enum import IntEnum
from typing import Any


class ExitCode(IntEnum):
    """Process exit codes of the `tritoninspect` command."""

    OK = 0
    #: A `--strict` run found diagnostics, or a `check` condition failed.
    FINDINGS = 1
    #: Command-line usage error (Typer/Click use 2 as well).
    USAGE = 2
    #: The target spec, file, attribute or example inputs are wrong.
    TARGET = 3
    #: The user's own code raised (at import, construction or while running).
    USER_CODE = 4
    #: The environment cannot do what was asked (no GPU, Triton missing, ...).
    ENVIRONMENT = 5
    #: tritoninspect itself failed; please report it.
    INTERNAL = 6
    #: A saved report could not be read.
    REPORT = 7
    #: The capture did not finish within `--timeout` seconds.
    TIMEOUT = 8
    #: Interrupted (Ctrl-C, SIGINT), as shells report it (128 + 2).
    INTERRUPTED = 130


class TritonInspectError(Exception):
    """Base class: an error with a one-line message and an exit code."""

    exit_code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(TritonInspectError):
    """Options that cannot work together or an output that cannot be written."""

    exit_code = ExitCode.USAGE


class TargetError(TritonInspectError):
    """The target spec cannot be resolved to a module and inputs."""

    exit_code = ExitCode.TARGET


class InputsError(TargetError):
    """Example inputs are missing, malformed or do not fit `forward`."""


class UserCodeError(TritonInspectError):
    """An exception raised inside the user's own code.

    `user_traceback` is the formatted traceback of the user's code, shown
    separately from tool errors (as coverage.py separates "your program
    crashed" from "coverage failed").
    """

    exit_code = ExitCode.USER_CODE

    def __init__(self, message: str, *, user_traceback: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.user_traceback = user_traceback


class EnvironmentProblem(TritonInspectError):
    """The machine or the installed packages cannot do what was asked."""

    exit_code = ExitCode.ENVIRONMENT


class CaptureError(TritonInspectError):
    """tritoninspect failed while capturing (a bug or an unsupported torch layout)."""

    exit_code = ExitCode.INTERNAL


class TimeoutProblem(TritonInspectError):
    """The capture did not finish within `--timeout` seconds."""

    exit_code = ExitCode.TIMEOUT


class CaptureTimeout(BaseException):
    """Raised inside a capture when `--timeout` runs out.

    A BaseException, like KeyboardInterrupt, so that no `except Exception` on the way
    (the user's, Dynamo's, or the capture's own failure recording) swallows it; the
    command edge turns it into a `TimeoutProblem`.
    """


class Terminated(SystemExit):
    """SIGTERM, raised by the CLI's handler (cli.py) so the run unwinds as for Ctrl-C.

    Its own class so the places that catch the user's `sys.exit()` (at import, in
    `forward`) can tell it apart and let it through: the run then exits 143, not 4.
    """


class ProcessExit(SystemExit):
    """`os._exit(code)` called by the user's code in the capturing thread, raised instead of ending the
    process (commands/_capture.py, `exits_raised`): it is the user's code failing, as `sys.exit()` is,
    where the real call ended the run with the user's code, no error line and no report."""

    def __str__(self) -> str:
        return f"os._exit({self.code}) called"


def ends_the_run(exc: BaseException) -> bool:
    """Ctrl-C, SIGTERM and `--timeout` end the run whatever code they interrupt. Any other
    exception out of the user's code, `sys.exit()` and their own BaseException subclasses
    included, is the user's code failing (exit 4), never a traceback of ours."""
    return isinstance(exc, (KeyboardInterrupt, Terminated, CaptureTimeout))


class ReportError(TritonInspectError):
    """A saved report cannot be read (bad JSON or an unknown schema version)."""

    exit_code = ExitCode.REPORT


def internal_error(exc: BaseException) -> TritonInspectError:
    """An exception no code of ours expected, as a tool error: one line, exit 6."""
    return CaptureError(
        f"internal error: {type(exc).__name__}: {exc}", hint="rerun with --debug and report it with the traceback"
    )


@contextlib.contextmanager
def usage_errors() -> Iterator[None]:
    """Turn a ValueError or OSError raised inside into a UsageError (exit 2): for a
    path or option the user gave that cannot be used (an output that cannot be written)."""
    try:
        yield
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:
        where = f"cannot write {exc.filename}: {exc.strerror}" if exc.filename and exc.strerror else str(exc)
        raise UsageError(where) from exc


def envelope(kind: str, message: str, exit_code: int) -> dict[str, Any]:
    """An error's JSON form: what `--json` prints under "error" instead of a report (docs/json.md:
    errors), for an exception (its class name as `kind`) or an interruption ("Interrupted")."""
    return {"type": kind, "message": message, "exit_code": int(exit_code)}


def error_to_dict(exc: TritonInspectError) -> dict[str, Any]:
    """Everything needed to rebuild `exc` in another process (see `error_from_dict`): its
    envelope, its hint and the user's traceback."""
    return {
        **envelope(type(exc).__name__, exc.message, exc.exit_code),
        "hint": exc.hint,
        "user_traceback": getattr(exc, "user_traceback", None),
    }


def error_from_dict(data: dict[str, Any], *, prefix: str = "") -> TritonInspectError:
    """The typed error `error_to_dict` described, its message prefixed; an unknown type is internal."""
    message = prefix + str(data.get("message", "capture failed"))
    hint = data.get("hint")
    cls = _ERRORS.get(str(data.get("type")), CaptureError)
    if issubclass(cls, UserCodeError):
        return UserCodeError(message, user_traceback=data.get("user_traceback") or "", hint=hint)
    return cls(message, hint=hint)


#: Error types by class name, for `error_from_dict`.
_ERRORS: dict[str, type[TritonInspectError]] = {
    cls.__name__: cls
    for cls in (TritonInspectError, UsageError, TargetError, InputsError, UserCodeError, EnvironmentProblem,
                CaptureError, ReportError)
}
