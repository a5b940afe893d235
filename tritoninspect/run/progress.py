"""What the Python API shows while it captures (`inspect_module`, `inspect_target`).

By default nothing, but in a Jupyter kernel: there one output line, updated in place as each
stage starts (an indeterminate `<progress>` bar, the stage, the elapsed time; plain text for
frontends without HTML), ending on how long the capture took. `progress=True` elsewhere: one
plain line per stage on stderr, as the CLI writes them when piped. Never an escape sequence:
a notebook shows them as garbage (`[2K`), so nothing here goes through Rich, and the stage
texts, which name the user's files and kernels, are made safe first.
"""

from __future__ import annotations

import contextlib
import html
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any


def in_notebook() -> bool:
    """A Jupyter kernel runs us (IPython's shell there has a kernel; a terminal IPython has none)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    return shell is not None and getattr(shell, "kernel", None) is not None


@contextlib.contextmanager
def showing_progress(progress: bool | None, title: str) -> Iterator[None]:
    """Within the block, the capture's stages are shown as `progress` asks (None: in a notebook only)."""
    from tritoninspect.capture.progress import listening

    notebook = in_notebook()
    if not (progress or (progress is None and notebook)):
        yield
        return
    display = NotebookLine(title) if notebook else StderrLines(title)
    with listening(display):
        try:
            yield
        except BaseException:
            display.end("stopped")
            raise
    display.end("done")


class StderrLines:
    """`[  2.1 s] stage` on stderr, one line per stage."""

    def __init__(self, title: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.title, self.clock, self.start = _safe(title), clock, clock()
        self.counts: Counter[str] = Counter()

    def __call__(self, message: str) -> None:
        sys.stderr.write(f"[{self.clock() - self.start:5.1f} s] {_safe(message)}\n")

    def warnings(self, warnings: list[tuple[str, str, str]]) -> None:
        self.counts.update(message for _, message, _ in warnings)

    def end(self, how: str) -> None:
        warned = f"; torch warned {sum(self.counts.values())} times" if self.counts else ""
        sys.stderr.write(f"[{self.clock() - self.start:5.1f} s] {self.title}: {how}{warned}\n")


class NotebookLine(StderrLines):
    """One output of the cell, updated in place (IPython's `display(..., display_id=True)`)."""

    def __init__(self, title: str, clock: Callable[[], float] = time.monotonic) -> None:
        from IPython.display import display

        super().__init__(title, clock)
        self.handle = display(self._bundle("starting", running=True), raw=True, display_id=True)

    def __call__(self, message: str) -> None:
        self.handle.update(self._bundle(_safe(message), running=True), raw=True)

    def end(self, how: str) -> None:
        warned = f" · torch warned {sum(self.counts.values())} times" if self.counts else ""
        self.handle.update(self._bundle(how + warned, running=False), raw=True)

    def _bundle(self, stage: str, *, running: bool) -> dict[str, Any]:
        text = f"{self.title} · {stage} · {self.clock() - self.start:.1f} s"
        bar = "<progress></progress> " if running else ""
        return {"text/plain": text,
                "text/html": f'<div class="tritoninspect-progress" style="font-family:monospace">{bar}'
                             f"{html.escape(text)}</div>"}


def _safe(text: str) -> str:
    from tritoninspect.render._safe import safe_text

    return safe_text(text)
