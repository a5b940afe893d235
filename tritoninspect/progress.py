"""Progress of a capture: which stage runs, and for how long.

The pipeline and the recorder call `stage("...")` as they go; nothing is shown unless a
command installed a listener with `listening(...)` (a context variable, so the library
and diff's children stay silent). `ProgressDisplay` is the CLI's listener: on a terminal a
Rich status with the stage and the elapsed time; piped, one line per stage on stderr
(`[  2.1 s] Inductor: compiling 0/0 inference`), which `--quiet` and `--json` turn off.
Python warnings raised during a capture (torch repeats its graph-break warnings) are counted
in one line; `--debug` shows each distinct one with its count.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

_LISTENER: contextvars.ContextVar[Callable[[str], None] | None] = contextvars.ContextVar(
    "tritoninspect_progress", default=None)


def stage(message: str) -> None:
    """Tell the listener, if any, that `message` (a stage) starts now. Never raises."""
    listener = _LISTENER.get()
    if listener is None:
        return
    with contextlib.suppress(Exception):
        listener(message)


#: The first stage of a capture, where torch is not imported yet.
IMPORTING = "importing torch and Triton"


def first_stage() -> str:
    """The first stage of a capture: importing torch and Triton, unless the caller already did
    (the CLI says that stage itself); then entering the device mode and torch.compile's modules."""
    return "setting up the capture (device mode, torch.compile's modules)" if "torch" in sys.modules \
        else IMPORTING


def warnings_seen(warnings: list[tuple[str, str, str]]) -> None:
    """Python warnings recorded during a capture, as (category, message, "file:line"), for the listener
    to count (or show, with --debug); without a listener they are printed as Python would."""
    listener = _LISTENER.get()
    if not warnings:
        return
    if listener is None or not hasattr(listener, "warnings"):
        import sys

        for category, message, where in warnings:
            sys.stderr.write(f"{where}: {category}: {message}\n")
        return
    with contextlib.suppress(Exception):
        listener.warnings(warnings)


@contextlib.contextmanager
def listening(listener: Callable[[str], None]) -> Iterator[None]:
    """Within the block, `stage(...)` calls go to `listener`."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


class ProgressDisplay:
    """Shows stages on a stderr Console: a live status on a terminal, else one line each.

    Use as a context manager around the capture; `lines=False` shows nothing when piped.
    """

    def __init__(self, console: Any, title: str, *, lines: bool = True, debug: bool = False,
                 clock: Callable[[], float] = time.monotonic):
        # Stages name the target's path, kernels and torch's warnings: no escape sequence of theirs
        # reaches the terminal (render/_safe.py).
        from tritoninspect.render._safe import safe_text

        self._safe = safe_text
        title = safe_text(title)
        self.console, self.title, self.lines, self.debug, self.clock = console, title, lines, debug, clock
        self.start = clock()
        self.current = title
        self._status: Any = None

    def __call__(self, message: str) -> None:
        message = self._safe(message)
        self.current = message
        if self._status is None and self.lines:
            self.console.print(f"[{self.elapsed():5.1f} s] {message}", markup=False, highlight=False,
                               soft_wrap=True)

    def warnings(self, warnings: list[tuple[str, str, str]]) -> None:
        """Count the warnings, once per distinct text; show each with `debug`."""
        counts = Counter((category, message) for category, message, _ in warnings)
        if self.debug:
            for (category, message), n in counts.items():
                times = f" (x{n})" if n > 1 else ""
                self.console.print(self._safe(f"torch warned{times}: {category}: {message}"), markup=False,
                                   highlight=False, soft_wrap=True)
        elif self.lines or self._status is not None:
            distinct = f" ({len(counts)} distinct)" if len(counts) != len(warnings) else ""
            times = "once" if len(warnings) == 1 else f"{len(warnings)} times"
            self.console.print(f"torch warned {times}{distinct}; --debug shows the warnings",
                               markup=False, highlight=False, style="dim", soft_wrap=True)

    def elapsed(self) -> float:
        return self.clock() - self.start

    def __rich__(self) -> Any:
        from rich.text import Text

        # Re-read on every refresh of the status, so the time runs between stages.
        return Text(f"{self.title} · {self.current} · {self.elapsed():.0f} s")

    def __enter__(self) -> ProgressDisplay:
        if self.console.is_terminal:
            self._status = self.console.status(self, spinner="dots")
            self._status.__enter__()
        self._token = _LISTENER.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _LISTENER.reset(self._token)
        if self._status is not None:
            self._status.__exit__(*exc)
