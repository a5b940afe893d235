"""Parses of payload texts kept by the text itself: a text seen again is not parsed again.

The ranks of one SPMD job compile the same graphs, and torch writes the same payload on every
rank (the gloo ranks under tests/fixtures/traces/ranks/ share all of rank 0's payloads); a worker
that reads several ranks (run/traces.py) parses each distinct graph and output module once. The key
is the whole text's BLAKE2 digest (and the parser's other arguments), never the md5 on the event line: torch's md5
is of the payload before it is written, which a reader cannot check (it does not match the written
text of graph payloads), so a hand-edited or mixed-up log could map two texts to one md5.

Ranks on different GPUs write the same texts but for the device's index (`DEVICE_FORMS`). With
`devices=True` a text naming one CUDA device is parsed as the text naming the canonical one (device 0;
10 for a two-digit index, 100 for three: the same length, so nothing a parser measures moves), and each
string of that parse gets the text's own index back (`relabel`; the parsers copy what they keep of a
text as written): a worker reading ranks of a job on 64 GPUs parses each graph twice (devices 0-9 and
10-63), not 64 times. tests/test_trace_speed.py checks, on every payload of the real GPU logs moved to
other devices, that this gives what a parse of the text itself gives. The canonical texts are copies no
report holds: they are kept as their 128-bit BLAKE2 digest, not themselves, so that a log of distinct
payloads does not hold them twice. So is every text: a report read from a log holds its texts' places,
not the texts (model/stored.py), and a memo that kept them would hold what the report does not.

What is kept must be immutable and hold nothing of the event it came from (its compile id, its line
in the log): the callers add those. `limit` bounds the parses kept by the size of their texts
(characters; least recently used go first), so a log of distinct payloads holds at most the parses of
that much text, whatever its size.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from collections.abc import Callable, Hashable
from types import MappingProxyType
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: Where torch writes the index of a CUDA device: graph types ("f32[8][1]cuda:3"), `device(type='cuda',
#: index=3)` and `DeviceProperties(type='cuda', index=3, ...)` in graphs and output code, and the output
#: code's `torch.cuda._DeviceGuard(3)`, `torch.cuda.set_device(3)`, `get_raw_stream(3)`
#: (torch/_inductor/codegen/wrapper.py, torch 2.11-2.14).
DEVICE_FORMS = ("cuda:", "type='cuda', index=", "_DeviceGuard(", "set_device(", "get_raw_stream(")
_DEVICE_RES = tuple(re.compile(re.escape(form) + r"(\d+)") for form in DEVICE_FORMS)


def canonical_device(text: str) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """(`text` naming the canonical CUDA device, the (canonical form, own form) pairs that turn a string
    of its parse back: none when it named that one) when `text` names one device index; else None."""
    if "cuda" not in text:  # (a text of another device, or one whose code names no "cuda": its own key)
        return None
    found: set[str] = set()
    for pattern in _DEVICE_RES:
        found.update(pattern.findall(text))
        if len(found) > 1:
            return None  # several devices: the text is its own key
    if not found:
        return None
    (index,) = found
    canonical = "1" + "0" * (len(index) - 1) if len(index) > 1 else "0"
    if index == canonical:
        return text, ()
    back = tuple((form + canonical, form + index) for form in DEVICE_FORMS if form + index in text)
    for canonical_form, own in back:
        text = text.replace(own, canonical_form)
    return text, back


def relabel(value: Any, back: tuple[tuple[str, str], ...]) -> Any:
    """`value` (a parse: strings, tuples, lists, dicts, read-only mappings, dataclasses) with every
    canonical device form in its strings turned back (`canonical_device`); parts without one are the
    same objects."""
    kind = type(value)
    if kind is str:
        for canonical, own in back:
            if canonical in value:
                value = value.replace(canonical, own)
        return value
    if kind in (tuple, list):
        items = [relabel(v, back) for v in value]
        return value if all(a is b for a, b in zip(items, value)) else kind(items)
    if kind in (dict, MappingProxyType):
        pairs = [(relabel(k, back), relabel(v, back)) for k, v in value.items()]
        if all(k is a and v is b for (k, v), (a, b) in zip(pairs, value.items())):
            return value
        return dict(pairs) if kind is dict else MappingProxyType(dict(pairs))
    names = _init_fields(kind)
    if names is None:
        return value
    changed = {}
    for name in names:
        old = getattr(value, name)
        new = relabel(old, back)
        if new is not old:
            changed[name] = new
    return dataclasses.replace(value, **changed) if changed else value


@functools.lru_cache(maxsize=None)
def _init_fields(kind: type) -> tuple[str, ...] | None:
    """The fields a dataclass type is made from; None for any other type."""
    if not dataclasses.is_dataclass(kind):
        return None
    return tuple(f.name for f in dataclasses.fields(kind) if f.init)


def _names_a_device(value: Any) -> bool:
    """Does any string of `value` (as `relabel` walks it) hold a device form? Those without are kept as parsed."""
    kind = type(value)
    if kind is str:
        return any(form in value for form in DEVICE_FORMS)
    if kind in (tuple, list):
        return any(_names_a_device(v) for v in value)
    if kind in (dict, MappingProxyType):
        return any(_names_a_device(k) or _names_a_device(v) for k, v in value.items())
    names = _init_fields(kind)
    return names is not None and any(_names_a_device(getattr(value, name)) for name in names)


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _and_device(parse: Callable[..., T]) -> Callable[..., tuple[T, bool]]:
    def parsed(text: str, *args: Hashable) -> tuple[T, bool]:
        value = parse(text, *args)
        return value, _names_a_device(value)

    return parsed


class TextMemo(Generic[T]):
    """`parse(text, *args)`, made once per distinct (text, args) while it stays among the kept; with
    `devices`, once per text up to the CUDA device it names (`canonical_device`). Texts are kept as
    their BLAKE2 digest, not themselves."""

    def __init__(self, parse: Callable[..., T], limit: int = 8 << 20, *, devices: bool = False) -> None:
        self._parse = parse
        self._limit = limit
        #: key -> (the parse, the length of its text), least recently used first.
        self._kept: dict[tuple[Hashable, ...], tuple[T, int]] = {}
        self._size = 0
        #: The parses of canonical texts, for texts of other devices (`devices`).
        self._canonical: TextMemo[tuple[T, bool]] | None = (
            TextMemo(_and_device(parse), limit) if devices else None)
        #: Texts parsed (not found among the kept): what tests count.
        self.parses = 0

    def __call__(self, text: str, *args: Hashable) -> T:
        key = (_digest(text), *args)
        hit = self._kept.pop(key, None)
        if hit is None:
            hit = (self._new(text, args), len(text))
            self._size += len(text)
            self._evict()
        self._kept[key] = hit  # (re)inserted last: the most recently used
        return hit[0]

    def _new(self, text: str, args: tuple[Hashable, ...]) -> T:
        moved = canonical_device(text) if self._canonical is not None else None
        if moved is None:
            self.parses += 1
            return self._parse(text, *args)
        canonical, back = moved
        shared = self._canonical
        before = shared.parses  # type: ignore[union-attr]
        value, names_a_device = shared(canonical, *args)  # type: ignore[misc]
        self.parses += shared.parses - before  # type: ignore[union-attr]
        return relabel(value, back) if back and names_a_device else value

    def _evict(self) -> None:
        while self._kept and self._size > self._limit:
            oldest = next(iter(self._kept))
            self._size -= self._kept.pop(oldest)[1]

    def clear(self) -> None:
        self._kept.clear()
        self._size = 0
        if self._canonical is not None:
            self._canonical.clear()
