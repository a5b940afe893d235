"""Indented JSON text made straight from dataclasses: what `json.dumps(dataclasses.asdict(value),
indent=2, default=str)` gives, byte for byte, without the deep copy `asdict` makes nor the
pure-Python encoder that `json.dumps` falls back to when it indents.

A report of a 1.4 MiB trace rank has some 14,000 dataclasses and dicts in it; made this way its
text takes a third of the time (docs/speed.md, Traces). tests/test_jsontext.py holds it to
`json.dumps` on every fixture report and on the values JSON treats specially.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from json.encoder import encode_basestring_ascii
from typing import Any

_INF = float("inf")
#: Dataclass type -> its fields' names, in order (`dataclasses.fields`, asked once per type).
_FIELDS: dict[type, tuple[str, ...]] = {}


def json_text(value: Any) -> str:
    """`json.dumps(asdict-like value, indent=2, default=str)`: dataclasses as objects of their
    fields, tuples as arrays, anything JSON has no form for as its `str`."""
    out: list[str] = []
    _write(value, "\n", out.append)
    return "".join(out)


def fields_of(value: Any) -> tuple[str, ...] | None:
    """The field names of a dataclass instance (None for anything else)."""
    kind = type(value)
    names = _FIELDS.get(kind)
    if names is None and hasattr(kind, "__dataclass_fields__") and not isinstance(value, type):
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(value))
    return names


def _write(o: Any, nl: str, out: Callable[[str], Any]) -> None:
    # The order of json.encoder's `_iterencode`: str, None, True, False, int, float, list or tuple,
    # dict, then `default`; a dataclass is a dict of its fields (as `asdict` made it first).
    if isinstance(o, str):
        out(encode_basestring_ascii(o))
    elif o is None:
        out("null")
    elif o is True:
        out("true")
    elif o is False:
        out("false")
    elif isinstance(o, int):
        out(int.__repr__(o))
    elif isinstance(o, float):
        out(_float(o))
    elif isinstance(o, (list, tuple)):
        _array(o, nl, out)
    elif isinstance(o, dict):
        _object(o.items(), len(o), nl, out)
    elif (names := fields_of(o)) is not None:
        _object(((n, getattr(o, n)) for n in names), len(names), nl, out)
    else:
        out(encode_basestring_ascii(str(o)))


def _array(items: list[Any] | tuple[Any, ...], nl: str, out: Callable[[str], Any]) -> None:
    if not items:
        out("[]")
        return
    inner = nl + "  "
    out("[")
    first = True
    for item in items:
        out(inner if first else "," + inner)
        first = False
        _write(item, inner, out)
    out(nl + "]")


def _object(items: Iterable[tuple[Any, Any]], count: int, nl: str, out: Callable[[str], Any]) -> None:
    if not count:
        out("{}")
        return
    inner = nl + "  "
    out("{")
    first = True
    for key, value in items:
        out((inner if first else "," + inner) + encode_basestring_ascii(_key(key)) + ": ")
        first = False
        _write(value, inner, out)
    out(nl + "}")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o == _INF:
        return "Infinity"
    if o == -_INF:
        return "-Infinity"
    return float.__repr__(o)
