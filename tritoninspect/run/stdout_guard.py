"""Keep stdout for the report: what the user's program writes there goes to stderr, marked.

A `print()` at import or in `forward` (a common debugging habit, and a classic
graph-break cause) would otherwise land before the JSON of `--json`. Like pytest's
`--capture=fd`, the guard works on file descriptor 1, so C-level writes (printf
from an extension, Triton's interpreter) move too; unlike pytest it passes the
output on as it comes, one marked line at a time, so a long or hanging run still
shows its progress. In the CLI (`for_good`), fd 1 stays on stderr after the block, so a
thread the program left running cannot write into the report either.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO, TextIO

#: Put before every line the program wrote to stdout.
MARK = b"\xe2\x94\x82 "  # "│ "
#: What ends or limits a run: Ctrl-C, SIGTERM, --timeout's alarm. Only the main thread may take them.
RUN_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGALRM})
HEADER = b"your program's stdout (moved to stderr: stdout carries only the report):\n"


class _Forwarder(threading.Thread):
    """Copies lines from a pipe to stderr, each marked, the header before the first."""

    def __init__(self, read_fd: int, err: BinaryIO) -> None:
        super().__init__(name="tritoninspect-stdout", daemon=True)
        self.read_fd = read_fd
        self.err = err
        self.lines = 0
        self._at_line_start = True
        self._done = threading.Event()

    def run(self) -> None:
        # Signals go to the main thread only: one this thread took would not wake the main thread out of
        # a blocking call (the user's `time.sleep`), and Ctrl-C or --timeout's alarm would wait for it.
        signal.pthread_sigmask(signal.SIG_BLOCK, RUN_SIGNALS)
        # Polled, not read to EOF: a child process started inside the block (Inductor's
        # compile workers) keeps the pipe's write end open after the block ends.
        while not self._done.is_set():
            self._drain(timeout=0.05)
        self._drain(timeout=0)
        os.close(self.read_fd)
        if not self._at_line_start:
            self.err.write(b"\n")
        self.err.flush()

    def stop(self) -> None:
        """Forward what is already in the pipe, then end."""
        self._done.set()
        self.join(timeout=5)

    def _drain(self, timeout: float) -> None:
        while select.select([self.read_fd], [], [], timeout)[0]:
            chunk = os.read(self.read_fd, 65536)
            if not chunk:
                self._done.set()
                return
            self._write(chunk)
            timeout = 0

    def _write(self, chunk: bytes) -> None:
        if self.lines == 0 and self._at_line_start:
            self.err.write(HEADER)
        out = bytearray()
        for piece in chunk.splitlines(keepends=True):
            if self._at_line_start:
                out += MARK
                self.lines += 1
            out += piece
            self._at_line_start = piece.endswith((b"\n", b"\r"))
        self.err.write(bytes(out))
        self.err.flush()


@contextlib.contextmanager
def stdout_to_stderr(*, for_good: bool = False) -> Iterator[_Forwarder]:
    """For the duration of the block, fd 1 (and `sys.stdout`) write to stderr, marked.

    The report is written after the block, to the real stdout. Yields the
    forwarder, whose `lines` counts what the program printed.

    `for_good` (the CLI, whose process ends after the report): after the block fd 1 goes
    straight on to stderr, and `sys.stdout` is the real stdout for the main thread only
    (`_ReportStdout`), so a thread the user's code left running (a logger, a progress
    printer) cannot write into the report. Only where `sys.stdout` is the process's own,
    not a test runner's replacement.
    """
    sys.stdout.flush()
    # The program may also replace `sys.stdout` (a logger, a StringIO): the report needs the real one.
    saved_stream = sys.stdout
    saved = os.dup(1)
    read_fd, write_fd = os.pipe()
    forwarder = _Forwarder(read_fd, sys.stderr.buffer if hasattr(sys.stderr, "buffer") else _stderr_bytes())
    forwarder.start()
    os.dup2(write_fd, 1)
    os.close(write_fd)
    try:
        yield forwarder
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        if for_good and saved_stream is sys.__stdout__:
            os.dup2(2, 1)  # from the pipe straight to stderr: no moment where fd 1 is stdout again
            sys.stdout = _ReportStdout(_reopened(saved, saved_stream), threading.main_thread())  # type: ignore
        else:
            sys.stdout = saved_stream
            os.dup2(saved, 1)
            os.close(saved)
        forwarder.stop()


def _reopened(fd: int, like: TextIO) -> TextIO:
    """A text stream on `fd` with the encoding and buffering of `like`."""
    return os.fdopen(fd, "w", buffering=1 if like.line_buffering else -1, encoding=like.encoding,
                     errors=like.errors)


def _stderr_bytes() -> BinaryIO:
    return os.fdopen(os.dup(2), "wb", buffering=0)


class _ReportStdout:
    """`sys.stdout` once a CLI capture is over: the main thread, which writes the report, gets
    the real stdout; any other thread (one the user's code started and left running) gets stderr,
    a whole line at a time: `print()` writes its text and its newline apart, and the tool's own
    `error:` line, written between them, began in the middle of the thread's line."""

    def __init__(self, real: TextIO, main: threading.Thread) -> None:
        self._real, self._main = real, main
        self._partial = threading.local()

    def write(self, text: str) -> int:
        if threading.current_thread() is self._main:
            return self._real.write(text)
        pending = getattr(self._partial, "text", "") + text
        lines, newline, rest = pending.rpartition("\n")
        if newline:
            sys.stderr.write(lines + newline)
        self._partial.text = rest
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if threading.current_thread() is not self._main and getattr(self._partial, "text", ""):
            sys.stderr.write(self._partial.text)
            self._partial.text = ""
        self._real.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, buffer: the real stdout's
        return getattr(self._real, name)
