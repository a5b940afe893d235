"""Parses of payload texts kept by the text itself: a text seen again is not parsed again.

The ranks of one SPMD job compile the same graphs, and torch writes the same payload on every
rank (the gloo ranks under tests/fixtures/traces/ranks/ share all of rank 0's payloads); a worker
that reads several ranks (run/traces.py) parses each distinct graph and output module once. The key
is the whole text (and the parser's other arguments), never the md5 on the event line: torch's md5
is of the payload before it is written, which a reader cannot check (it does not match the written
text of graph payloads), so a hand-edited or mixed-up log could map two texts to one md5.

What is kept must be immutable and hold nothing of the event it came from (its compile id, its line
in the log): the callers add those. `limit` bounds the texts kept (characters; least recently used
go first), so a log of distinct payloads holds at most that much more than it would.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")

_MISSING = object()


class TextMemo(Generic[T]):
    """`parse(text, *args)`, made once per distinct (text, args) while it stays among the kept."""

    def __init__(self, parse: Callable[..., T], limit: int = 64 << 20) -> None:
        self._parse = parse
        self._limit = limit
        self._kept: dict[tuple[Hashable, ...], T] = {}
        self._size = 0
        #: Texts parsed (not found among the kept): what tests count.
        self.parses = 0

    def __call__(self, text: str, *args: Hashable) -> T:
        key = (text, *args)
        value = self._kept.pop(key, _MISSING)
        if value is _MISSING:
            value = self._parse(text, *args)
            self.parses += 1
            self._size += len(text)
            self._evict()
        self._kept[key] = value  # (re)inserted last: the most recently used
        return value  # type: ignore[return-value]

    def _evict(self) -> None:
        while self._kept and self._size > self._limit:
            oldest = next(iter(self._kept))
            del self._kept[oldest]
            self._size -= len(oldest[0])  # type: ignore[arg-type]

    def clear(self) -> None:
        self._kept.clear()
        self._size = 0
