"""Progress of a capture: which stage runs, and for how long.

The pipeline and the recorder call `stage("...")` as they go; nothing is shown unless a
command installed a listener with `listening(...)` (a context variable, so the library
and diff's children stay silent). `ProgressDisplay` is the CLI's listener: on a terminal a
Rich status with the stage and the elapsed time; piped, one line per stage on stderr
(`[  2.1 s] Inductor: compiling 0/0 inference`), which `--quiet` and `--json` turn off.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
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

    def __init__(self, console: Any, title: str, *, lines: bool = True, clock: Callable[[], float] = time.monotonic):
        self.console, self.title, self.lines, self.clock = console, title, lines, clock
        self.start = clock()
        self.current = title
        self._status: Any = None

    def __call__(self, message: str) -> None:
        self.current = message
        if self._status is None and self.lines:
            self.console.print(f"[{self.elapsed():5.1f} s] {message}", markup=False, highlight=False,
                               soft_wrap=True)

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
