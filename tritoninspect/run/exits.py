"""`os._exit()` in the user's code, raised as their code failing instead of ending the process unseen."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

from tritoninspect.model.errors import ProcessExit


@contextlib.contextmanager
def exits_raised() -> Iterator[None]:
    """`os._exit()` in the block, called by this process's main thread (the user's import, `forward`,
    `example_inputs`), raises `ProcessExit` instead: the user's code failing, said as such (exit 4),
    where the real call ended the run silently with the user's exit code (`os._exit(0)`: exit 0, an
    empty stdout). A forked copy or another thread gets the real call (a fork's child ends with it)."""
    real, pid = os._exit, os.getpid()

    def _exit(code: int) -> None:
        if os.getpid() == pid and threading.current_thread() is threading.main_thread():
            raise ProcessExit(code)
        real(code)

    os._exit = _exit  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = real
