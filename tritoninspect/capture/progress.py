"""Progress of a capture: which stage runs.

The pipeline and the recorder call `stage("...")` as they go; nothing is shown unless a
command installed a listener with `listening(...)` (a context variable, so the library
and diff's children stay silent). The CLI's listener shows them (commands/_progress.py);
diff's children write them for their parent (children/side_child.py). Python warnings
raised during a capture (torch repeats its graph-break warnings) go to the listener too,
to count (`warnings_seen`).
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Callable, Iterator

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
    (the CLI says that stage itself); then choosing the mode (GPU, or compile-only without one: the report's
    header says which) and loading torch.compile's modules."""
    return "setting up the capture (choosing GPU or compile-only mode, loading torch.compile)" if "torch" in sys.modules \
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
