"""A TORCH_TRACE payload kept as where it lies in its log, and read back from there.

A report read from a log of thousands of compiles would otherwise hold every graph's and output
module's text, which are already in the log (docs/speed.md): `textformats/torch_trace.py` reads the
log as bytes, so it knows each payload's offset and size, and gives records a `LogText` in place of
the text (model/stored.py reads it back whenever a record's text is asked for).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable, Iterator
from typing import IO, NamedTuple

from tritoninspect.model.errors import ReportError


def payload_text(data: bytes) -> str:
    """The payload of its lines' bytes as read ("\tline\n"): each line without its tab, joined by
    newlines. (A log holding a carriage return is read as text, with universal newlines.)"""
    return data[1:].replace(b"\n\t", b"\n").removesuffix(b"\n").decode("utf-8", "replace")


class LogText(NamedTuple):
    """A payload's text kept as where it lies in its log: `str(log_text)` reads it back. Records hold
    it in place of the text (model/stored.py), so a report read from a log of many graphs holds
    their places, not their texts; the checksum refuses a log changed since it was read. (A tuple of
    the log's path and one number, `at` packs offset, size and CRC-32 into: a report of a 100 MiB log
    holds 16,500 of them, 170 bytes each as four fields, 100 as two.)"""

    path: str
    #: offset << 80 | size << 32 | CRC-32 (sizes up to 2**48 bytes).
    place: int

    @classmethod
    def at(cls, path: str, start: int, size: int, crc: int) -> LogText:
        """The text of `size` bytes from `start` in `path`, whose CRC-32 is `crc`."""
        return cls(path, start << 80 | size << 32 | crc)

    @property
    def start(self) -> int:
        return self.place >> 80

    @property
    def size(self) -> int:
        return self.place >> 32 & 0xFFFFFFFFFFFF

    @property
    def crc(self) -> int:
        return self.place & 0xFFFFFFFF

    def __str__(self) -> str:
        text = _RECENT.pop(self, None)
        if text is None:
            text = self._read()
            _recent_add(self, text)
        _RECENT[self] = text  # (again) the most recently read
        return text

    def verify(self) -> None:
        """Raise what reading the text back would raise (a log changed since), without decoding it."""
        if self not in _RECENT:
            self._bytes()

    def _read(self) -> str:
        return payload_text(self._bytes())

    def _bytes(self) -> bytes:
        try:
            data = _read_at(self.path, self.start, self.size)
        except OSError as exc:
            raise ReportError(f"{self.path}: cannot read this TORCH_TRACE log again: {exc.strerror or exc}") from exc
        if len(data) != self.size or zlib.crc32(data) != self.crc:
            raise changed_log(self.path)
        return data


def changed_log(path: str | os.PathLike[str]) -> ReportError:
    """The error for a log rewritten, cut short or replaced after tritoninspect began reading it."""
    return ReportError(f"{path}: the log changed while tritoninspect was reading it (replaced or cut short); "
                       "read a copy that is not being written")


#: The texts read back last, least recently read first, up to `_RECENT_LIMIT` bytes of log: the analyses
#: read an output module several times within a few dozen others (each kernel of it asks).
_RECENT: dict[LogText, str] = {}
_RECENT_LIMIT = 1 << 20
_recent_size = 0


def forget_texts_read() -> None:
    """Drop the texts read back: the next read of each goes to its log (and checks it) again."""
    global _recent_size
    _RECENT.clear()
    _recent_size = 0


def _recent_add(place: LogText, text: str) -> None:
    global _recent_size
    _recent_size += place.size
    while _RECENT and _recent_size > _RECENT_LIMIT:
        oldest = next(iter(_RECENT))
        del _RECENT[oldest]
        _recent_size -= oldest.size


def _read_at(path: str, start: int, size: int) -> bytes:
    """`size` bytes of `path` from `start`. The last log's file stays open (a report's texts are read
    back one after another from the same log: opening it for each took as long as reading them), and
    is read with `pread`, which moves no shared offset: a process forked while it was open (the
    workers that read ranks) reads its own places."""
    global _OPEN
    if not hasattr(os, "pread"):
        with open(path, "rb") as f:
            f.seek(start)
            return f.read(size)
    if _OPEN is None or _OPEN[0] != path:
        if _OPEN is not None:
            os.close(_OPEN[1])
            _OPEN = None
        _OPEN = (path, os.open(path, os.O_RDONLY))
    return os.pread(_OPEN[1], size, start)


_OPEN: tuple[str, int] | None = None


def numbered(f: Iterable[bytes]) -> Iterator[tuple[int, int, bytes]]:
    """(1-based number, byte offset, line) of each line of `f`."""
    offset = 0
    for number, raw in enumerate(f, 1):
        yield number, offset, raw
        offset += len(raw)


def lines_in_runs(f: IO[bytes], runs: Iterable[tuple[int, int, int]]) -> Iterator[tuple[int, int, bytes]]:
    """`numbered`, of the lines in `runs` only (a log read in segments: a plain file, never a .gz), each run
    read in blocks of at most `_BLOCK` bytes cut at line ends."""
    for offset, number, end in runs:
        f.seek(offset)
        left = b""
        while offset < end:
            block = left + f.read(min(_BLOCK, end - offset - len(left)))
            if len(block) == len(left):
                raise changed_log(f.name)  # it ended before what the survey read: cut short since
            lines = block.splitlines(keepends=True)
            left = lines.pop() if not lines[-1].endswith(b"\n") and offset + len(block) < end else b""
            for raw in lines:
                yield number, offset, raw
                offset += len(raw)
                number += 1
        if left:
            yield number, offset, left


_BLOCK = 1 << 18
