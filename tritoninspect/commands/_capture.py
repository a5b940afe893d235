"""The report a command works on: read as it is, or the model captured in this process, the CLI's way.

`report_for(source, options, ...)` gets it through `run.acquire`: a saved report or a trace's
as it is (the capture options the user typed refused), or the model captured by
`capture_here`: its progress on stderr, `--timeout` bounding it (`time_limit`, with a
watchdog for code stuck in native code), what the user's code prints moved off stdout, the
heap frozen once torch is imported (`ready_to_capture`). Heavy imports (torch, triton, the
capture layer) happen inside these functions only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import os
import signal
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Console

from tritoninspect.commands._edge import say_error
from tritoninspect.model.errors import CaptureTimeout, EnvironmentProblem, ExitCode, TimeoutProblem, UsageError

if TYPE_CHECKING:
    from tritoninspect.model.report import Report
    from tritoninspect.run.acquire import Options
    from tritoninspect.run.pipeline import CaptureOptions
    from tritoninspect.source.parse import Source, TargetSpec


def report_for(source: Source, options: Options, *, given: Mapping[str, object], err: Console,
               timeout: float | None = None, progress: bool = True, json_out: bool = False,
               debug: bool = False, quiet: bool = False) -> Report:
    """A saved report or a trace's, read as it is, or the model captured here with `options`.

    `given` names the capture options the user typed (see `given_options`): a saved report or
    a trace refuses them rather than silently ignoring them. While the model is imported,
    compiled (or exported) and run, its progress goes to stderr (`progress`: a line per stage
    when piped; `quiet`: not even the live status on a terminal), what it writes to stdout goes
    to stderr, marked (stdout carries only the report), and `timeout` seconds bound the whole
    capture (`json_out`: its envelope too).
    """
    from tritoninspect.run.acquire import acquire
    from tritoninspect.source.parse import TargetSpec

    if not isinstance(source, TargetSpec):
        refuse_capture_options(given, what=_reading(source))
    return acquire(source, options, route=functools.partial(
        capture_here, err=err, timeout=timeout, progress=progress, json_out=json_out, debug=debug, quiet=quiet))


@contextlib.contextmanager
def _cwd_kept() -> Iterator[None]:
    """The working directory as the user ran the command, again after the model ran: a model that
    `os.chdir`s must not move where `--dump`, `--junit-xml` and `-o` write (a hostile user's find)."""
    cwd = os.getcwd()
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.chdir(cwd)


def capture_here(spec: TargetSpec, options: Options, *, err: Console, timeout: float | None, progress: bool,
                 json_out: bool, debug: bool, quiet: bool = False) -> Report:
    """`spec` compiled (`CaptureOptions`) or exported (`ExportOptions`) in this process, the heap
    frozen first and its progress on stderr."""
    from tritoninspect.commands._progress import ProgressDisplay
    from tritoninspect.run import pipeline
    from tritoninspect.run.exits import exits_raised
    from tritoninspect.run.pipeline_export import ExportOptions, run_export
    from tritoninspect.run.stdout_guard import stdout_to_stderr

    verb = "Exporting" if isinstance(options, ExportOptions) else "Compiling"
    # The stage and elapsed time: a live status on a terminal; piped, a line per stage unless `progress` is off.
    display = ProgressDisplay(err, f"{verb} {spec.name}", lines=progress, live=not quiet, debug=debug)
    # The time limit outside the stdout guard: its watchdog keeps the real stdout for the JSON envelope;
    # after the guard, fd 1 stays on stderr (threads the user's code left running print there).
    with one_process(), exits_raised(), display, _cwd_kept():
        ready_to_capture()  # its first stage: importing torch and Triton takes seconds
        with time_limit(timeout, json_out=json_out), stdout_to_stderr(for_good=True):
            # --debug lets torch's own log lines (TORCH_LOGS) through, as docs/commands/index.md promises.
            options = dataclasses.replace(options, torch_logs=debug)
            if isinstance(options, ExportOptions):
                return run_export(spec, options)
            capture = pipeline.capture_target(spec, options)
            # What the compile left alive lives until exit too (see ready_to_capture): out of the
            # collector's sight, analysis and rendering stop rescanning it (64-layer stack: 25-35%).
            gc.freeze()
            return pipeline.analyse(capture)


def given_options(options: CaptureOptions, *, stage: bool, **more: object) -> dict[str, object]:
    """The shared capture options as typed, by flag name (truthy: given), then `more`."""
    return {"inputs": options.inputs, "device": options.device != "auto", "dynamic": options.dynamic,
            "backward": options.backward is not None, "stage": stage, **more}


#: Flags whose spelling is not `--NAME` alone: either form given reads as the option (`given_options`).
_FLAGS = {"backward": "--backward/--no-backward"}


def refuse_capture_options(given: Mapping[str, object], *, what: str = "re-rendering a saved report") -> None:
    """A saved report is re-rendered as it is, a trace read as torch wrote it: options that change a
    capture would be silently ignored, so refuse them (`what` says what the source is)."""
    used = [_FLAGS.get(name, f"--{name.replace('_', '-')}") for name, value in given.items() if value]
    if used:
        raise UsageError(f"{', '.join(used)}: meant for compiling a target, not for {what}")


def _reading(source: Source) -> str:
    from tritoninspect.source.parse import TraceLogs

    return "reading a TORCH_TRACE log" if isinstance(source, TraceLogs) else "re-rendering a saved report"


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
    from tritoninspect.capture.progress import IMPORTING, stage

    stage(IMPORTING)

    with signals_held():
        # torch._dynamo makes torch's cache folder when imported: a TORCHINDUCTOR_CACHE_DIR (or TMPDIR) it
        # cannot use is an OSError there, said here as the environment it is, not as an internal error later.
        for name, pip in (("torch", "torch"), ("torch._dynamo", "torch"), ("triton", "triton")):
            try:
                __import__(name)
            except ImportError as exc:
                raise EnvironmentProblem(
                    f"{name} is not importable ({exc})", hint=f"pip install '{pip}' (see the README for versions)"
                ) from exc
            except OSError as exc:
                raise EnvironmentProblem(
                    f"{name} is not importable ({exc})",
                    hint="torch keeps its caches in $TORCHINDUCTOR_CACHE_DIR, else in $TMPDIR: both must be "
                         "folders you can write") from exc
        import tritoninspect.analyse  # noqa: F401
        import tritoninspect.capture.session  # noqa: F401

    gc.freeze()


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C, SIGTERM and the alarm wait until the block ends, then act (a pending one raises there).

    Two failures seen under load (tests/test_bad_inputs.py, "ctrl-c during import"): Ctrl-C in the middle
    of `import torch` left a half-initialised module whose next import raised ImportError, said as "torch is
    not importable" (exit 5, not 130); and the threads torch starts while importing (a native one in torch
    2.13) inherit the importing thread's signal mask, so one of them could take a later Ctrl-C, which then
    never woke the main thread out of a blocking call in the user's code (a hang, until the watchdog).
    With the signals blocked while importing, the first cannot happen and those threads never take them."""
    from tritoninspect.run.stdout_guard import RUN_SIGNALS

    previous = signal.pthread_sigmask(signal.SIG_BLOCK, RUN_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def one_process() -> Iterator[None]:
    """A copy of the process the user's code made inside the block (`os.fork()` in `forward`)
    returns through the capture too: it ends quietly at the block's end, instead of printing a
    second report after the first."""
    pid = os.getpid()
    try:
        yield
    finally:
        if os.getpid() != pid:
            os._exit(0)


@contextlib.contextmanager
def time_limit(seconds: float | None, *, json_out: bool = False) -> Iterator[None]:
    """Raise `CaptureTimeout` in the main thread after `seconds` (SIGALRM), naming where it was.

    Code stuck in native code never returns to Python to see the signal: a watchdog
    then ends the process 10 s later, with the same error line, exit code and (`json_out`)
    envelope, on a copy of stdout taken now, before the stdout guard moves fd 1.
    """
    if seconds is None:
        yield
        return
    import signal
    import threading

    def expire(signum: int, frame: Any) -> None:
        raise CaptureTimeout(f"the capture did not finish within {seconds:g} s (it was at {_where(frame)})")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    stdout_fd = os.dup(1) if json_out else None
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
    """The innermost frame outside Python's own library: where the run was, not the `threading` or
    `importlib` function the alarm happened to interrupt (a lock's wait, a module's bytecode)."""
    if frame is None:
        return "an unknown place"
    from tritoninspect.textformats.origin import is_pythons_own

    inner = frame
    while frame is not None and is_pythons_own(frame.f_code.co_filename):
        frame = frame.f_back
    frame = frame or inner
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


def _stuck(seconds: float, stdout_fd: int | None = None) -> None:
    """End a capture that ignored SIGALRM: native code, or user code catching every
    exception or replacing the handler. The same line, exit code and envelope as a timeout."""
    message = f"the capture did not finish within {seconds:g} s (stuck in native code, or the alarm was caught)"
    say_error(message, kind=TimeoutProblem.__name__, code=ExitCode.TIMEOUT, json_out=stdout_fd is not None,
              stdout_fd=stdout_fd)
    os._exit(int(ExitCode.TIMEOUT))
