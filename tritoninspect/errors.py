"""Exception hierarchy and the documented exit codes.

Code below the CLI raises these; only `cli.py` turns them into one line on
stderr and an exit code. Keep the numbers stable: they are documented in the
README and scripts depend on them.
"""

from __future__ import annotations

from enum import IntEnum


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


class ReportError(TritonInspectError):
    """A saved report cannot be read (bad JSON or an unknown schema version)."""

    exit_code = ExitCode.REPORT
