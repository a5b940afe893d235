"""The CLI's progress displays on stderr: each stage of a capture (capture/progress.py), and how long.

`ProgressDisplay` listens to one capture: on a terminal a Rich status with the stage and
the elapsed time; piped, one line per stage (`[  2.1 s] Inductor: compiling 0/0 inference`),
which `--quiet` and `--json` turn off. Python warnings raised during a capture (torch repeats
its graph-break warnings) are counted in one line; `--debug` shows each distinct one with
its count.

`SidesDisplay` shows a diff's captures: `diff` captures its sides in child processes,
several at a time, each reporting the stages `graph` shows; on a terminal a Rich status
with one line per side and the elapsed time; piped, one line per side per stage
(`[  2.1 s] B: Inductor: compiling 0/0 inference`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from tritoninspect.capture.progress import listening
from tritoninspect.render._safe import safe_text


class SidesDisplay:
    """Called as `display(label, stage)` from the threads waiting for the sides' children."""

    def __init__(self, console: Any, title: str, labels: Sequence[str], *, lines: bool = True,
                 clock: Callable[[], float] = time.monotonic):
        self.console, self.title, self.lines, self.clock = console, title, lines, clock
        self.start = clock()
        self.current = {label: "waiting" for label in labels}
        self._lock = threading.Lock()
        self._status: Any = None

    def __call__(self, label: str, message: str) -> None:
        message = safe_text(message)  # it names the side's target path: no escape sequence of it shown
        with self._lock:
            self.current[label] = message
            if self._status is None and self.lines:
                self.console.print(f"[{self.elapsed():5.1f} s] {label}: {message}", markup=False, highlight=False,
                                   soft_wrap=True)

    def elapsed(self) -> float:
        return self.clock() - self.start

    def __rich__(self) -> Any:
        from rich.text import Text

        # Re-read on every refresh of the status, so the time runs between stages.
        sides = "\n".join(f"  {label}: {stage}" for label, stage in self.current.items())
        return Text(f"{self.title} · {self.elapsed():.0f} s\n{sides}")

    def __enter__(self) -> SidesDisplay:
        if self.console.is_terminal and self.live:
            self._status = self.console.status(self, spinner="dots")
            self._status.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.__exit__(*exc)


class ProgressDisplay:
    """Shows stages on a stderr Console: a live status on a terminal, else one line each.

    Use as a context manager around the capture; `lines=False` shows nothing when piped, `live=False`
    no status on a terminal.
    """

    def __init__(self, console: Any, title: str, *, lines: bool = True, live: bool = True, debug: bool = False,
                 clock: Callable[[], float] = time.monotonic):
        # Stages name the target's path, kernels and torch's warnings: no escape sequence of theirs
        # reaches the terminal (render/_safe.py).
        self._safe = safe_text
        title = safe_text(title)
        self.console, self.title, self.lines, self.debug, self.clock = console, title, lines, debug, clock
        #: The live status on a terminal (off with --quiet; --json keeps it: stdout has the report).
        self.live = live
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
        self._stack = contextlib.ExitStack()
        if self.console.is_terminal and self.live:
            self._status = self._stack.enter_context(self.console.status(self, spinner="dots"))
        self._stack.enter_context(listening(self))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.__exit__(*exc)
