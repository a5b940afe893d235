"""Saved JSON files read, and frozen dataclass trees built back from their `dataclasses.asdict` form.

`read_json` / `parse_json` turn a file that cannot be read, is not UTF-8 or is not JSON into
one `ReportError` line naming it. One loader builds both versioned models (`report.Report`,
`diff_report.DiffReport`) once the JSON Schema has checked the data (`tritoninspect.model.schema`):
each declares which fields hold nested records in a `Schema`; JSON lists become tuples, and a
field named in `Schema.convert` gets its own conversion (e.g. a grid's inner tuples).
Errors are `ValueError`s naming the class and field; the models turn them into
`ReportError`s.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tritoninspect.model.errors import ReportError


def read_json(path: Path | str) -> Any:
    """The parsed JSON of a saved file; errors start with the path."""
    try:
        mode = os.stat(path).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            # A FIFO or a device would block or never end; a folder still says "Is a directory" below.
            raise ReportError(f"{path}: not a regular file")
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ReportError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    return parse_json(raw, str(path))


def parse_json(raw: str | bytes, source: str) -> Any:
    """`raw` (UTF-8 if bytes) as JSON; errors start with `source`."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        return json.loads(text, object_pairs_hook=_no_repeated_keys, parse_constant=_not_json,
                          parse_float=_finite)
    except _NotJson as exc:
        raise ReportError(f"{source}: not a report: {exc}") from exc
    except _RepeatedKey as exc:
        raise ReportError(f"{source}: not a report: the key {str(exc)!r} appears twice in one object "
                          "(JSON readers disagree on which value wins)") from exc
    except UnicodeDecodeError as exc:
        raise ReportError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise ReportError(f"{source}: not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise ReportError(f"{source}: not a report: JSON nested too deeply") from exc
    except ValueError as exc:  # an integer of more than 4300 digits (sys.get_int_max_str_digits)
        raise ReportError(f"{source}: not a report: {str(exc).split(';')[0]}") from exc


class _RepeatedKey(Exception):
    pass


class _NotJson(Exception):
    pass


def _finite(literal: str) -> float:
    """A number literal as a float; one past float's range (`1e999`) would read as infinity, which
    the report would then write as `Infinity`, which is not JSON."""
    value = float(literal)
    if math.isinf(value):
        raise _NotJson(f"the number {literal[:40]} is beyond a float's range (it would read as infinity, "
                       "which JSON cannot hold)")
    return value


def _not_json(constant: str) -> Any:
    """`NaN`, `Infinity` and `-Infinity`, which `json.loads` takes by default: tritoninspect never
    writes them (its times are finite), so a file holding one was made or edited by something else."""
    raise _NotJson(f"{constant} is not a JSON value (Python's json writes it for a float that is not a number; "
                   "other JSON readers refuse it)")


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's dict; a key given twice (which `json.loads` would settle by keeping the last) is refused:
    tritoninspect never writes one, and a hand-edited `"schema_version": 999, "schema_version": 5` would
    otherwise pass the schema check with whichever value the reader keeps."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        raise _RepeatedKey(next(key for key, _ in pairs if key in seen or seen.add(key)))  # type: ignore[func-returns-value]
    return obj


@dataclass(frozen=True)
class Schema:
    #: (owner class, field) -> (record class, holds a list of them).
    nested: Mapping[tuple[type, str], tuple[type, bool]]
    #: Nested-record fields that may be null.
    nullable: frozenset[tuple[type, str]] = frozenset()
    #: Field name -> conversion of a non-null value, for fields that are not plain tuples.
    convert: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)

    def build(self, cls: type, data: Any) -> Any:
        """An instance of the dataclass `cls` from `data`; unknown fields are an error."""
        if not isinstance(data, dict):
            raise ValueError(f"{cls.__name__} must be an object")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"unknown field(s) {sorted(unknown)} in {cls.__name__}")
        return cls(**{name: self._value(cls, name, value) for name, value in data.items()})

    def _value(self, owner: type, name: str, value: Any) -> Any:
        nested = self.nested.get((owner, name))
        if nested is None:
            if value is not None and name in self.convert:
                return self.convert[name](value)
            return tuple(value) if isinstance(value, list) else value
        if value is None and (owner, name) in self.nullable:
            return None
        record, many = nested
        if many and isinstance(value, list):
            return tuple(self.build(record, item) for item in value)
        if not many and isinstance(value, dict):
            return self.build(record, value)
        raise ValueError(f"{owner.__name__}.{name} must be {'a list of objects' if many else 'an object'}")
