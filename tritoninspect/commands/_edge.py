"""The commands' one edge: how a command body runs and fails, and how it gets its report.

- `edge(json_out=..., debug=...)`: the one error path. Every command runs its body
  inside it; a `TritonInspectError`, or any other exception as an internal error, becomes
  its stderr lines (the user's own traceback apart), its documented exit code and, with
  `--json`, the error envelope on stdout. Commands only raise.
- `report_for(target, options, given=..., err=...)`: a saved report as it is (capture
  options refused), or the target captured through the pipeline, the heap frozen first
  and a spinner on stderr.

Heavy imports (torch, triton, the capture layer) happen inside these functions only.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from tritoninspect.errors import (
    EnvironmentProblem,
    ExitCode,
    TritonInspectError,
    UsageError,
    UserCodeError,
    internal_error,
    usage_errors,
)

if TYPE_CHECKING:
    from tritoninspect.pipeline import CaptureOptions
    from tritoninspect.report import Report


@contextlib.contextmanager
def edge(*, json_out: bool = False, debug: bool = False) -> Iterator[Console]:
    """Run a command body; map every error it raises to stderr, an exit code and the JSON envelope.

    Yields the stderr console. A `typer.Exit` raised by the body (its own exit code,
    e.g. findings) passes through unchanged.
    """
    err = Console(stderr=True, highlight=False)
    try:
        yield err
    except typer.Exit:
        raise
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
        err.print(exc.user_traceback.rstrip(), markup=False, highlight=False, soft_wrap=True)
        err.rule(style="red")
    err.print(f"[bold red]error:[/] {escape(exc.message)}", highlight=False, soft_wrap=True)
    if exc.hint:
        err.print(f"[dim]hint:[/] {escape(exc.hint)}", highlight=False, soft_wrap=True)
    if json_out:
        import json

        sys.stdout.write(json.dumps({"error": error_envelope(exc)}) + "\n")
    raise typer.Exit(int(exc.exit_code))


def error_envelope(exc: TritonInspectError) -> dict[str, Any]:
    """What `--json` prints for an error, under "error" (README: JSON contract)."""
    return {"type": type(exc).__name__, "message": exc.message, "exit_code": int(exc.exit_code)}


def exit_if_failed(report: Report, err: Console) -> None:
    """The report of a failed compile is out (stdout or -o): say so in one line, exit 4."""
    if report.failure is None:
        return
    from tritoninspect.render._failure import failure_line

    err.print(f"[bold red]error:[/] {escape(failure_line(report.failure))}", highlight=False, soft_wrap=True)
    raise typer.Exit(int(ExitCode.USER_CODE))


# --- the report a command works on -------------------------------------------------------------


def report_for(target: str, options: CaptureOptions, *, given: Mapping[str, object], err: Console) -> Report:
    """A saved report, read as it is, or `target` captured with `options`.

    `given` names the capture options the user typed (see `given_options`): a saved
    report refuses them rather than silently ignoring them.
    """
    from tritoninspect.spec import is_saved_report, parse_spec

    if is_saved_report(target):
        refuse_capture_options(given)
        from tritoninspect.report import read_report

        return read_report(target)
    spec = parse_spec(target)  # a typo fails here, before the heavy imports
    ready_to_capture()
    from tritoninspect import pipeline

    with spinner(err, f"Compiling {spec.display_name}:{spec.attr}"):
        return pipeline.run(spec, options)


def given_options(options: CaptureOptions, *, stage: bool, **more: object) -> dict[str, object]:
    """The shared capture options as typed, by flag name (truthy: given), then `more`."""
    return {"inputs": options.inputs, "device": options.device != "auto", "dynamic": options.dynamic,
            "backward": options.backward is not None, "stage": stage, **more}


def refuse_capture_options(given: Mapping[str, object]) -> None:
    """A saved report is re-rendered as it is: options that change a capture
    would be silently ignored, so refuse them."""
    used = [f"--{name.replace('_', '-')}" for name, value in given.items() if value]
    if used:
        raise UsageError(f"{', '.join(used)}: meant for compiling a target, not for re-rendering a saved report")


def check_dump_dir(dump: Path | None) -> None:
    """Refuse a `--dump` directory now, before a long compile, rather than after it."""
    if dump is None:
        return
    from tritoninspect.render.dump import check_dump_dir as check

    with usage_errors():
        check(dump)


def ready_to_capture() -> None:
    """Import what a capture needs (torch, triton, the capture layer), then take it out of
    the garbage collector's sight.

    The CLI captures once and exits, so everything alive now (torch, triton, typer: about
    300,000 objects) lives until then. `gc.freeze()` keeps each full collection during the
    imports and the compile that follow from scanning all of it again: `breaks` against
    `torch._dynamo.explain` went from 1.12 to 0.90 on a 2-core CPU (benchmarks/bench_breaks.py).
    Not done by the Python API, whose caller's process goes on.
    """
    import gc

    for name in ("torch", "triton"):
        try:
            __import__(name)
        except ImportError as exc:
            raise EnvironmentProblem(
                f"{name} is not importable ({exc})", hint=f"pip install '{name}' (see the README for versions)"
            ) from exc
    import tritoninspect.analyse  # noqa: F401
    import tritoninspect.capture.session  # noqa: F401

    gc.freeze()


def spinner(err: Console, message: str) -> contextlib.AbstractContextManager[Any]:
    """A spinner on stderr while a long step runs, only when stderr is a terminal."""
    if not err.is_terminal:
        return contextlib.nullcontext()
    return err.status(message, spinner="dots")
