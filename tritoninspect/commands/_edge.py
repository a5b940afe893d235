"""The commands' one edge: how a command body runs and fails, and how it gets its report.

- `edge(json_out=..., debug=...)`: the one error path. Every command runs its body
  inside it; a `TritonInspectError`, or any other exception as an internal error, becomes
  its stderr lines (the user's own traceback apart), its documented exit code and, with
  `--json`, the error envelope on stdout. Commands only raise.
- `report_for(target, options, given=..., err=...)`: a saved report as it is (capture
  options refused), or the target captured through the pipeline, the heap frozen first
  and its progress on stderr (tritoninspect/progress.py).

Heavy imports (torch, triton, the capture layer) happen inside these functions only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from tritoninspect.errors import (
    CaptureTimeout,
    EnvironmentProblem,
    ExitCode,
    TimeoutProblem,
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
    from tritoninspect.render._safe import safe_text

    if isinstance(exc, UserCodeError) and exc.user_traceback:
        err.rule("[bold]traceback from your code[/]", style="red")
        # An exception message of the user's can hold a line "error: ..." or "hint: ...": indented,
        # so the run's own one `error:` line stays the only one (scripts grep for it).
        shown = re.sub(r"^(?=(?:error|hint):)", "  ", safe_text(exc.user_traceback.rstrip()), flags=re.M)
        err.print(shown, markup=False, highlight=False, soft_wrap=True)
        err.rule(style="red")
    err.print(f"[bold red]error:[/] {escape(one_line(exc.message))}", highlight=False, soft_wrap=True)
    if exc.hint:
        err.print(f"[dim]hint:[/] {escape(one_line(exc.hint))}", highlight=False, soft_wrap=True)
    if json_out:
        import json

        sys.stdout.write(json.dumps({"error": error_envelope(exc)}) + "\n")
    raise typer.Exit(int(exc.exit_code))


#: The `error:` line's length at most: an exception message of megabytes is cut (its traceback has it all).
MAX_LINE = 2000


def one_line(text: str) -> str:
    """`text` safe for one terminal line: control characters and escape sequences out
    (render/_safe.py), line breaks folded, so a hostile path cannot fake a second line;
    cut at `MAX_LINE` characters."""
    from tritoninspect.render._safe import safe_text

    line = " ".join(safe_text(text).split())
    return line if len(line) <= MAX_LINE else f"{line[:MAX_LINE]}... ({len(line) - MAX_LINE} more characters)"


def error_envelope(exc: TritonInspectError) -> dict[str, Any]:
    """What `--json` prints for an error, under "error" (docs/json.md: errors)."""
    return {"type": type(exc).__name__, "message": exc.message, "exit_code": int(exc.exit_code)}


def exit_if_failed(report: Report, err: Console, line: Callable[[Report], str] | None = None) -> None:
    """The report of a failed compile is out (stdout or -o): say so in one line (`line(report)`, by
    default the failure's own line), exit 4."""
    if report.failure is None:
        return
    if line is None:
        from tritoninspect.analyse.emulation import failure_follows_probe
        from tritoninspect.render._failure import failure_line

        text = failure_line(report.failure, after_probe=failure_follows_probe(report))
    else:
        text = line(report)
    err.print(f"[bold red]error:[/] {escape(one_line(text))}", highlight=False, soft_wrap=True)
    raise typer.Exit(int(ExitCode.USER_CODE))


# --- the report a command works on -------------------------------------------------------------


def report_for(target: str, options: CaptureOptions, *, given: Mapping[str, object], err: Console,
               timeout: float | None = None, progress: bool = True, debug: bool = False) -> Report:
    """A saved report, read as it is, or `target` captured with `options`.

    `given` names the capture options the user typed (see `given_options`): a saved
    report refuses them rather than silently ignoring them. While the target is
    imported, compiled and run, what it writes to stdout goes to stderr, marked
    (stdout carries only the report), and `timeout` seconds bound the whole capture.
    """
    from tritoninspect.spec import is_saved_report, parse_spec

    if is_saved_report(target):
        refuse_capture_options(given)
        from tritoninspect.report import read_report

        return read_report(target)
    from tritoninspect import traces

    if traces.is_trace(target):  # a TORCH_TRACE log or folder: read, torch not imported
        refuse_capture_options(given)
        return traces.one_report(target)
    spec = parse_spec(target)  # a typo fails here, before the heavy imports
    from tritoninspect import pipeline

    from tritoninspect.progress import ProgressDisplay
    from tritoninspect.stdout_guard import stdout_to_stderr

    # The stage and elapsed time: a live status on a terminal; piped, a line per stage unless `progress` is off.
    display = ProgressDisplay(err, f"Compiling {spec.name}", lines=progress, debug=debug)
    # The time limit outside the stdout guard: its watchdog keeps the real stdout for the JSON envelope;
    # after the guard, fd 1 stays on stderr (threads the user's code left running print there).
    with one_process(), display:
        ready_to_capture()  # its first stage: importing torch and Triton takes seconds
        with time_limit(timeout), stdout_to_stderr(for_good=True):
            # --debug lets torch's own log lines (TORCH_LOGS) through, as docs/commands/index.md promises.
            capture = pipeline.capture_target(spec, dataclasses.replace(options, torch_logs=debug))
            # What the compile left alive lives until exit too (see ready_to_capture): out of the
            # collector's sight, analysis and rendering stop rescanning it (64-layer stack: 25-35%).
            gc.freeze()
            return pipeline.analyse(capture)


@contextlib.contextmanager
def one_process() -> Iterator[None]:
    """A copy of the process the user's code made inside the block (`os.fork()` in `forward`)
    returns through the capture too: it ends quietly at the block's end, instead of printing a
    second report after the first."""
    import os

    pid = os.getpid()
    try:
        yield
    finally:
        if os.getpid() != pid:
            os._exit(0)


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise `CaptureTimeout` in the main thread after `seconds` (SIGALRM), naming where it was.

    Code stuck in native code never returns to Python to see the signal: a watchdog
    then ends the process 10 s later, with the same error line and exit code.
    """
    if seconds is None:
        yield
        return
    import os
    import signal
    import threading

    def expire(signum: int, frame: Any) -> None:
        raise CaptureTimeout(f"the capture did not finish within {seconds:g} s (it was at {_where(frame)})")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    stdout_fd = _real_stdout()
    watchdog = threading.Timer(seconds + 10, _stuck, args=(seconds, stdout_fd))
    watchdog.daemon = True
    watchdog.start()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        watchdog.cancel()
        if stdout_fd is not None:
            os.close(stdout_fd)


def _where(frame: Any) -> str:
    if frame is None:
        return "an unknown place"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


def _real_stdout() -> int | None:
    """A copy of fd 1 as it is now (before the stdout guard moves it), for the watchdog's
    JSON envelope; None without `--json` (the flag is looked up as cli.run does)."""
    import os

    return os.dup(1) if "--json" in sys.argv[1:] else None


def _stuck(seconds: float, stdout_fd: int | None = None) -> None:
    """End a capture that ignored SIGALRM: native code, or user code catching every
    exception or replacing the handler. The same line, exit code and envelope as a timeout."""
    import json
    import os

    message = f"the capture did not finish within {seconds:g} s (stuck in native code, or the alarm was caught)"
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    if stdout_fd is not None:
        envelope = {"type": TimeoutProblem.__name__, "message": message, "exit_code": int(ExitCode.TIMEOUT)}
        os.write(stdout_fd, (json.dumps({"error": envelope}) + "\n").encode())
    os._exit(int(ExitCode.TIMEOUT))


def check_outputs(*, output: Path | None, dump: Path | None, targets: Iterable[str], force: bool) -> None:
    """Refuse `-o` and `--dump` now, before any compile (see the two checks)."""
    check_dump_dir(dump)
    if output is not None and dump is not None and output.resolve() == dump.resolve():
        raise UsageError(f"-o {output}: --dump writes a directory there; give -o a file name such as report.json")
    check_output_file(output, targets, force=force)


def check_output_file(output: Path | None, targets: Iterable[str], *, force: bool) -> None:
    """Refuse an `-o` file now, before any compile: not a file this run reads, and not an
    existing file tritoninspect did not write unless `force` (render/emit.py)."""
    from tritoninspect.render.emit import check_output

    check_output(output, reads=[p for t in targets for p in source_files(t)], force=force)


def source_files(target: str) -> list[Path]:
    """The files a target names: the saved report, the trace log (every file of a trace
    folder), or the model's .py file."""
    from tritoninspect.spec import is_saved_report, parse_spec

    if is_saved_report(target):
        return [Path(target)]
    from tritoninspect.traces import is_trace

    if is_trace(target):
        path = Path(target)
        return [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
    try:
        return [parse_spec(target).path]
    except TritonInspectError:
        return []


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
    Not done by the Python API, whose caller's process goes on. Said as the first stage of the
    progress display (when one listens): the imports take seconds.
    """
    from tritoninspect.progress import IMPORTING, stage

    stage(IMPORTING)

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
