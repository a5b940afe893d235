"""Record fields whose text may be kept elsewhere: read as a `str`, stored as given.

A report read from a TORCH_TRACE log holds thousands of graphs and output modules; their texts are
most of its memory (docs/speed.md), and they are already in the log. The trace reader gives records
a stand-in for such a text (`textformats.log_text.LogText`: where it lies in the log), which this
field keeps as it is and turns into the text (`str(stand_in)`) each time the field is read. A live
capture gives the text itself, which is kept and read as it always was.

`StoredText` is a data descriptor used as a dataclass field's default (dataclasses: "descriptor-typed
fields"): the generated `__init__` hands the value to `__set__`, and every read of the field,
`dataclasses.asdict` and the generated `__eq__` included, goes through `__get__`. Copies that go
through `__init__` with the read value (`dataclasses.replace`) would read every text back into
memory: `raw_fields` gives what a record stores, for copies that keep the stand-ins.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from typing import Any


class StoredText:
    """A text field (see the module's docstring); no default: the field must be given."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = f"_stored_{name}"

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            raise AttributeError(self._slot)  # no default for the dataclass field
        value = _get(obj, self._slot)
        return value if type(value) is str else str(value)

    def __set__(self, obj: Any, value: Any) -> None:
        # As an attribute, not through `obj.__dict__`: touching that gives the instance a dict of its own
        # (64 bytes each on CPython 3.11, where attributes are kept inline: 2 MiB for a 100 MiB trace's
        # 33,000 graph records).
        _set(obj, self._slot, value)


_get = object.__getattribute__
_set = object.__setattr__


def raw_fields(record: Any, names: set[str] | None = None) -> dict[str, Any]:
    """The fields of dataclass `record` (those in `names`, or all) as it stores them: a stored text's
    stand-in, not the text read back."""
    found = {}
    for f in dataclasses.fields(record):
        if names is None or f.name in names:
            descriptor = _descriptor(type(record), f.name)
            found[f.name] = _get(record, descriptor._slot) if descriptor else getattr(record, f.name)
    return found


@functools.lru_cache(maxsize=None)
def _descriptor(kind: type, name: str) -> StoredText | None:
    for klass in kind.__mro__:
        attribute = vars(klass).get(name)
        if attribute is not None:
            return attribute if isinstance(attribute, StoredText) else None
    return None


def stored_text(record: Any, name: str = "code") -> Any:
    """What `record` stores for its text field `name`: the text, or its stand-in."""
    descriptor = _descriptor(type(record), name)
    return _get(record, descriptor._slot) if descriptor else getattr(record, name)


def same_text(a: Any, b: Any, name: str = "code") -> bool:
    """Do records `a` and `b` hold the same text in field `name`? (The same stand-in is read once.)"""
    return stored_text(a, name) == stored_text(b, name) or getattr(a, name) == getattr(b, name)


def replaced(record: Any, **changes: Any) -> Any:
    """`dataclasses.replace(record, **changes)` that keeps stored texts as stored."""
    return type(record)(**{**raw_fields(record, {f.name for f in dataclasses.fields(record) if f.init}), **changes})


def verify_stored(records: Iterable[Any], name: str = "code") -> None:
    """Raise now what reading back any of `records`' stored texts would raise later (a log changed since
    it was read): before output written in pieces, which cannot take back what it wrote."""
    for record in records:
        verify = getattr(stored_text(record, name), "verify", None)
        if verify is not None:
            verify()
