"""Rows kept in a temporary file instead of memory: a long trace's report (issue 26, analyse/segments.py).

A report read from a log of thousands of compiles holds tens of thousands of rows (graphs, a kernel's
occurrences, findings); held as tuples they made its memory grow with the log. Here each segment's rows are
pickled into one private temporary file as they are made, and a `Rows` is the sequence of them: the places of
its chunks in the file, read back a chunk at a time when iterated. It serves what reads a report's fields
(iteration, len, indexing, slices, `+`, `==`); `materialized` turns a report back into tuples where a whole
copy is wanted (`Report.to_dict`, a report sent to another process).
"""

from __future__ import annotations

import bisect
import dataclasses
import pickle
import tempfile
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

from tritoninspect.model.errors import EnvironmentProblem

#: Rows pickled together: one read of the file for each, and objects shared among them stay shared.
CHUNK = 256


class Spill:
    """One private temporary file of pickled chunks of rows (removed when closed or collected)."""

    def __init__(self) -> None:
        try:
            self._file: IO[bytes] = tempfile.TemporaryFile(prefix="tritoninspect-spill-")
        except OSError as exc:
            raise _no_room(exc) from exc
        self._end = 0
        self._cached: tuple[int, list[Any]] = (-1, [])

    def rows(self, rows: Iterable[Any] = ()) -> Rows:
        """A new `Rows` in this file holding `rows` (written a chunk at a time, the rest when first read)."""
        kept = Rows(self)
        kept.extend(rows)
        return kept

    def _dump(self, rows: list[Any]) -> tuple[int, int]:
        """Where `rows` now lie: the chunk's offset and size in bytes."""
        data = pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self._file.seek(self._end)
            self._file.write(data)
        except OSError as exc:
            raise _no_room(exc) from exc
        at, self._end = self._end, self._end + len(data)
        return at, len(data)

    def _load(self, at: int, size: int) -> list[Any]:
        if self._cached[0] == at:
            return self._cached[1]
        self._file.seek(at)
        # One read and `loads`: `pickle.load` on the file reads it in many small pieces (5 times slower).
        rows = pickle.loads(self._file.read(size))
        self._cached = (at, rows)
        return rows


def _no_room(exc: OSError) -> EnvironmentProblem:
    """The one line for a temporary file that cannot be made or written (no usable temp folder, a full disk)."""
    try:
        where = tempfile.gettempdir()
    except OSError:
        where = "no usable temporary folder"
    return EnvironmentProblem(
        f"cannot write the temporary file a long TORCH_TRACE log's report is kept in ({where}): "
        f"{exc.strerror or exc}",
        hint="free space there or set TMPDIR to a folder with room; a log under 8 MiB is read without it")


class Rows(Sequence[Any]):
    """A sequence of rows in a `Spill`; appended to with `extend` while a report is made, then only read."""

    __slots__ = ("_spill", "_at", "_sizes", "_starts", "_len", "_pending")

    def __init__(self, spill: Spill) -> None:
        self._spill = spill
        self._at = array("q")  # each chunk's offset in the file
        self._sizes = array("q")  # and its size
        self._starts = array("q")  # the index of each chunk's first row
        self._len = 0
        self._pending: list[Any] = []  # rows not yet written: fewer than a chunk's

    def extend(self, rows: Iterable[Any]) -> None:
        self._pending.extend(rows)
        while len(self._pending) >= CHUNK:
            self._write(self._pending[:CHUNK])
            del self._pending[:CHUNK]

    def flush(self) -> None:
        """Write the rows waiting for a full chunk (as a smaller one)."""
        if self._pending:
            self._write(self._pending)
            self._pending = []

    def _write(self, chunk: list[Any]) -> None:
        at, size = self._spill._dump(chunk)
        self._at.append(at)
        self._sizes.append(size)
        self._starts.append(self._len)
        self._len += len(chunk)

    @property
    def spill(self) -> Spill:
        return self._spill

    def joined(self, other: Rows) -> Rows:
        """This sequence followed by `other` (of the same file), neither copied."""
        both = Rows(self._spill)
        for rows in (self, other):
            rows.flush()
            both._at.extend(rows._at)
            both._sizes.extend(rows._sizes)
            both._starts.extend(start + both._len for start in rows._starts)
            both._len += rows._len
        return both

    def __len__(self) -> int:
        return self._len + len(self._pending)

    def __iter__(self) -> Iterator[Any]:
        self.flush()
        for at, size in zip(self._at, self._sizes):
            yield from self._spill._load(at, size)

    def __getitem__(self, index: Any) -> Any:
        self.flush()
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._len)))
        if index < 0:
            index += self._len
        if not 0 <= index < self._len:
            raise IndexError("Rows index out of range")
        chunk = bisect.bisect_right(self._starts, index) - 1
        return self._spill._load(self._at[chunk], self._sizes[chunk])[index - self._starts[chunk]]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Rows, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Sequence[Any]) -> tuple[Any, ...]:
        return (*self, *other)

    def __radd__(self, other: Sequence[Any]) -> tuple[Any, ...]:
        return (*other, *self)

    def __reduce__(self) -> tuple[Any, ...]:
        return tuple, (tuple(self),)  # another process has no access to this file: the rows themselves

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[Any, ...]:
        import copy

        return tuple(copy.deepcopy(row, memo) for row in self)

    def __repr__(self) -> str:
        return f"Rows({self._len} rows)"


def chained(spill: Spill, parts: Iterable[Rows | Iterable[Any]]) -> Rows:
    """`parts` one after the other as one `Rows` of `spill`: a `Rows` of it kept in place, other rows written."""
    joined = spill.rows()
    for part in parts:
        joined = joined.joined(part if isinstance(part, Rows) else spill.rows(part))
    return joined


def materialized(value: Any) -> Any:
    """`value` (a report, a kernel) with every `Rows` in its fields, at any depth of dataclasses, as a tuple."""
    if not dataclasses.is_dataclass(value) or isinstance(value, type):
        return value
    changed = {}
    for f in dataclasses.fields(value):
        item = getattr(value, f.name)
        if isinstance(item, Rows) or (isinstance(item, tuple) and any(_holds_rows(x) for x in item)):
            changed[f.name] = tuple(materialized(x) for x in item)
    return dataclasses.replace(value, **changed) if changed else value


def _holds_rows(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and any(isinstance(getattr(value, f.name), Rows)
                                                   for f in dataclasses.fields(value))

