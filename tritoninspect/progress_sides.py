"""Progress of a diff's captures: each side's stage, and the time since the diff started.

`diff` captures its sides in child processes, several at a time; each child reports the
stages `graph` shows (`tritoninspect/progress.py`), and `SidesDisplay` shows them: on a
terminal a Rich status with one line per side and the elapsed time; piped, one line per
side per stage on stderr (`[  2.1 s] B: Inductor: compiling 0/0 inference`). `--quiet`
and `--json` turn the lines off.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any


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
        from tritoninspect.render._safe import safe_text

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
        if self.console.is_terminal:
            self._status = self.console.status(self, spinner="dots")
            self._status.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.__exit__(*exc)
