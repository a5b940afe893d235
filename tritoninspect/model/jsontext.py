"""Indented JSON text made straight from dataclasses: what `json.dumps(dataclasses.asdict(value),
indent=2, default=str)` gives, byte for byte, without the deep copy `asdict` makes nor the
pure-Python encoder that `json.dumps` falls back to when it indents.

A report of a 1.4 MiB trace rank has some 14,000 dataclasses and dicts in it; made this way its
text takes a third of the time (docs/speed.md, Traces). tests/test_jsontext.py holds it to
`json.dumps` on every fixture report and on the values JSON treats specially.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any

from tritoninspect.model.spill import Rows

#: What is written as an array: a long trace's report keeps its rows in a file (model/spill.py).
_ARRAYS = (list, tuple, Rows)
_INF = float("inf")
#: Dataclass type -> (field name, its key as written: '"name": '), in field order.
_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}


def json_text(value: Any, margin: str = "") -> str:
    """`json.dumps(asdict-like value, indent=2, default=str)`: dataclasses as objects of their
    fields, tuples as arrays, anything JSON has no form for as its `str`. `margin`: every line but
    the first starts with it too (the text as it sits inside a larger document)."""
    out: list[str] = []
    _write(value, "\n" + margin, out.append)
    return "".join(out)


def write_json(value: Any, write: Callable[[str], Any]) -> None:
    """`json_text(value)` handed to `write` in pieces of some hundred KB, cut between the elements of
    its arrays down to `_STREAMED` levels (a report's graphs, a kernel's occurrences...): the text of a
    document of tens of MB is never held whole."""
    pieces: list[str] = []

    def flush() -> None:
        if pieces:
            write("".join(pieces))
            pieces.clear()

    _stream(value, "\n", pieces, flush, _STREAMED)
    flush()


#: How deep `write_json` cuts: the report (1), its lists (2), their elements (3), their lists (4).
_STREAMED = 4
#: Pieces `write_json` gathers before it writes them.
_PIECES = 2048


def _stream(o: Any, nl: str, pieces: list[str], flush: Callable[[], None], depth: int) -> None:
    """`_write`, flushing between array elements while `depth` lasts."""
    kind = type(o)
    if depth == 0 or kind is str or o is None or kind is bool or kind is int or kind is float:
        _write(o, nl, pieces.append)
        return
    inner = nl + "  "
    if kind in _ARRAYS:
        if not o:
            pieces.append("[]")
            return
        lead = "[" + inner
        for item in o:
            pieces.append(lead)
            _stream(item, inner, pieces, flush, depth - 1)
            if len(pieces) > _PIECES:
                flush()
            lead = "," + inner
        pieces.append(nl + "]")
        return
    if kind is dict:
        items = [(encode_basestring_ascii(k if type(k) is str else _key(k)) + ": ", v) for k, v in o.items()]
    elif (keys := _keys_of(o)) is not None and not isinstance(o, (str, int, float, list, tuple, dict, Rows)):
        items = [(key, getattr(o, name)) for name, key in keys]
    else:
        _write(o, nl, pieces.append)
        return
    if not items:
        pieces.append("{}")
        return
    lead = "{" + inner
    for key, item in items:
        pieces.append(lead + key)
        _stream(item, inner, pieces, flush, depth - 1)
        lead = "," + inner
    pieces.append(nl + "}")


def fields_of(value: Any) -> tuple[str, ...] | None:
    """The field names of a dataclass instance (None for anything else)."""
    keys = _keys_of(value)
    return None if keys is None else tuple(name for name, _ in keys)


def _keys_of(value: Any) -> tuple[tuple[str, str], ...] | None:
    kind = type(value)
    keys = _FIELDS.get(kind)
    if keys is None and hasattr(kind, "__dataclass_fields__") and not isinstance(value, type):
        fields = dataclasses.fields(value)
        keys = _FIELDS[kind] = tuple((f.name, encode_basestring_ascii(f.name) + ": ") for f in fields)
    return keys


def _write(o: Any, nl: str, out: Callable[[str], Any]) -> None:
    # The order of json.encoder's `_iterencode`: str, None, True, False, int, float, list or tuple,
    # dict, then `default`; a dataclass is a dict of its fields (as `asdict` made it first).
    kind = type(o)
    if kind is str:  # the exact types first (most values), then json's own order for subclasses
        out(encode_basestring_ascii(o))
    elif (keys := _FIELDS.get(kind)) is not None:
        _dataclass(o, keys, nl, out)
    elif isinstance(o, str):
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
    elif isinstance(o, _ARRAYS):
        _array(o, nl, out)
    elif isinstance(o, dict):
        _object(o, nl, out)
    elif (keys := _keys_of(o)) is not None:
        _dataclass(o, keys, nl, out)
    else:
        out(encode_basestring_ascii(str(o)))


def _dataclass(o: Any, keys: tuple[tuple[str, str], ...], nl: str, out: Callable[[str], Any]) -> None:
    if not keys:
        out("{}")
        return
    inner = nl + "  "
    lead, sep = "{" + inner, "," + inner
    for name, key in keys:
        value = getattr(o, name)
        if type(value) is str:
            out(lead + key + encode_basestring_ascii(value))
        elif value is None:
            out(lead + key + "null")
        else:
            out(lead + key)
            _write(value, inner, out)
        lead = sep
    out(nl + "}")


def _array(items: list[Any] | tuple[Any, ...] | Rows, nl: str, out: Callable[[str], Any]) -> None:
    if not items:
        out("[]")
        return
    inner = nl + "  "
    lead, sep = "[" + inner, "," + inner
    for item in items:
        if type(item) is str:
            out(lead + encode_basestring_ascii(item))
        else:
            out(lead)
            _write(item, inner, out)
        lead = sep
    out(nl + "]")


def _object(items: dict[Any, Any], nl: str, out: Callable[[str], Any]) -> None:
    if not items:
        out("{}")
        return
    inner = nl + "  "
    lead, sep = "{" + inner, "," + inner
    for key, value in items.items():
        out(lead + encode_basestring_ascii(key if type(key) is str else _key(key)) + ": ")
        _write(value, inner, out)
        lead = sep
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
