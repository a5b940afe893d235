"""A fatal signal during a capture (SIGABRT from Triton's interpreter, SIGSEGV) leaves a Python stack.

Triton's interpreter runs a kernel's body as Python on NumPy arrays, without bounds checks: a
launch that writes out of bounds (say a scalar argument drawn at random) can corrupt memory and
abort the process in C, where no Python handler can run. `fatal_signal_stacks()` enables
`faulthandler` for the capture, so such an abort prints the stack of the running thread: the
kernel's own frames (its name, file and line: the interpreter executes its body) and the user's
line that launched it. The previous faulthandler state comes back afterwards.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import sys
from collections.abc import Iterator
from typing import TextIO


@contextlib.contextmanager
def fatal_signal_stacks(stream: TextIO | None = None) -> Iterator[bool]:
    """Within the block, a fatal signal dumps the current thread's Python stack to `stream`
    (default stderr). Yields whether that is on (a stream without a file descriptor, as under
    a test runner's capture, cannot take it)."""
    if faulthandler.is_enabled():
        yield True  # someone (python -X faulthandler, pytest) already did
        return
    target = sys.stderr if stream is None else stream
    try:
        target.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation, ValueError):
        yield False
        return
    faulthandler.enable(file=target, all_threads=False)
    try:
        yield True
    finally:
        faulthandler.disable()
