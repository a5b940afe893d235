"""JSON Schemas of the saved reports: generated from the frozen dataclasses, shipped as package data,
and used to validate a saved report before it is turned back into records.

`generate(Report, ...)` walks the dataclasses' type hints (str, int, float, bool, None, Optional and
other unions, tuple, list, dict, Enum, Literal, nested dataclasses) and the `#:` comments above each
field; `tests/test_schema.py` checks that `tritoninspect/schemas/*.schema.json` equal what it generates
(`TRITONINSPECT_UPDATE_GOLD=1` rewrites them). `validate` checks a parsed report with the `jsonschema`
library, imported only then, so `--help` and captures never pay for it; a report that does not match
becomes one `ReportError` line naming the file and the field path.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import re
import types
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from tritoninspect.model.errors import EnvironmentProblem, ReportError

DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: The shipped schema files, in the package's `schemas/` folder.
REPORT_SCHEMA = "report.schema.json"
DIFF_SCHEMA = "diff.schema.json"

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
#: Keywords that only constrain one JSON type, so options carrying them can share one `type` list.
_TYPE_SPECIFIC = {"items", "prefixItems", "minItems", "maxItems", "additionalProperties", "$ref"}


# --- generation ------------------------------------------------------------------------------------


def generate(
    root: type, *, version: int, title: str, schema_id: str, optional: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The JSON Schema of `root` (a dataclass tree) as `dataclasses.asdict` writes it.

    Every field is listed in `properties`, in order, and required, except the `optional` ones
    ("Class.field", each with a default); unknown fields are refused (`additionalProperties:
    false`). Nested records are `$defs` whose objects carry no `type` of their own, so each use
    says `object` or `[object, null]` and a wrong type reads as one plain error.
    """
    walker = _Walker(optional)
    body = walker.record(root)
    if optional - walker.fields:
        raise TypeError(f"optional fields that no record has: {sorted(optional - walker.fields)}")
    body["properties"] = {"schema_version": {"type": "integer", "const": version,
                                             "description": "The schema version this file follows."},
                          **{k: v for k, v in body["properties"].items() if k != "schema_version"}}
    body["required"] = ["schema_version", *(name for name in body["required"] if name != "schema_version")]
    return {"$schema": DIALECT, "$id": schema_id, "title": title, "type": "object", **body,
            "$defs": dict(sorted(walker.defs.items()))}


def render(schema: dict[str, Any]) -> str:
    """The schema as it is stored: indented JSON with a final newline."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


class _Walker:
    """Walks type hints into schemas, collecting each record met into `defs` once."""

    def __init__(self, optional: frozenset[str]) -> None:
        self.optional = optional
        self.defs: dict[str, Any] = {}
        #: Every "Class.field" met.
        self.fields: set[str] = set()

    def record(self, cls: type) -> dict[str, Any]:
        """The object schema of one dataclass (without `type`: its uses say it)."""
        hints, notes = get_type_hints(cls), _field_notes(cls)
        properties, required = {}, []
        for f in dataclasses.fields(cls):
            note = {"description": notes[f.name]} if f.name in notes else {}
            properties[f.name] = {**note, **self.schema_of(hints[f.name])}
            self.fields.add(f"{cls.__name__}.{f.name}")
            if f"{cls.__name__}.{f.name}" not in self.optional:
                required.append(f.name)
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise TypeError(f"optional field {cls.__name__}.{f.name} has no default to read it as")
        doc = cls.__doc__ or ""
        # A dataclass without a docstring gets its signature as one: not a description.
        described = {"description": " ".join(doc.split())} if doc and not doc.startswith(f"{cls.__name__}(") else {}
        return {**described, "properties": properties, "required": required, "additionalProperties": False}

    def ref(self, cls: type) -> dict[str, Any]:
        if cls.__name__ not in self.defs:
            self.defs[cls.__name__] = {}  # placeholder first: a record may (indirectly) hold itself
            self.defs[cls.__name__] = self.record(cls)
        return {"type": "object", "$ref": f"#/$defs/{cls.__name__}"}

    def schema_of(self, hint: Any) -> dict[str, Any]:
        """The schema of one type hint."""
        origin, args = get_origin(hint), get_args(hint)
        if hint is Any:
            return {}
        if hint in _SCALARS:
            return {"type": _SCALARS[hint]}
        if isinstance(hint, type) and issubclass(hint, enum.Enum):
            return {"enum": [member.value for member in hint]}
        if dataclasses.is_dataclass(hint):
            return self.ref(hint)
        if origin is Literal:
            return {"enum": list(args)}
        if origin in (Union, types.UnionType):
            return _union([self.schema_of(arg) for arg in args])
        if hint in (tuple, list) or origin in (tuple, list):
            return self._array(origin, args)
        if hint is dict or origin is dict:
            if args and args[0] is not str:
                raise TypeError(f"JSON object keys are strings, not {args[0]!r}")
            values = self.schema_of(args[1]) if args else {}
            return {"type": "object", "additionalProperties": values} if values else {"type": "object"}
        raise TypeError(f"no JSON Schema for the type hint {hint!r}")

    def _array(self, origin: Any, args: tuple[Any, ...]) -> dict[str, Any]:
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):  # tuple[int, str]
            items = [self.schema_of(arg) for arg in args]
            return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
        each = self.schema_of(args[0]) if args else {}
        return {"type": "array", "items": each} if each else {"type": "array"}


def _union(options: list[dict[str, Any]]) -> dict[str, Any]:
    """One schema for a union: enums joined, or one `type` list when no two options share a
    keyword; else `anyOf`."""
    if any(option == {} for option in options):
        return {}
    if all(set(option) == {"enum"} or option == {"type": "null"} for option in options):
        values = [value for option in options for value in option.get("enum", [None])]
        return {"enum": values}
    merged: dict[str, Any] = {"type": []}
    for option in options:
        kind, rest = option.get("type"), {k: v for k, v in option.items() if k != "type"}
        if not isinstance(kind, str) or kind in merged["type"] or set(rest) - _TYPE_SPECIFIC \
                or set(rest) & set(merged):
            return {"anyOf": options}
        merged["type"].append(kind)
        merged.update(rest)
    return merged


def _field_notes(cls: type) -> dict[str, str]:
    """The `#:` comment lines right above each field in the source of the class, or of the
    dataclass it extends (e.g. the report's `Kernel` of the capture's `KernelRecord`), joined."""
    notes: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if dataclasses.is_dataclass(klass):
            notes.update(_own_field_notes(klass))
    return notes


def _own_field_notes(cls: type) -> dict[str, str]:
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return {}
    notes: dict[str, str] = {}
    pending: list[str] = []
    for line in source.splitlines()[1:]:
        stripped = line.strip()
        if stripped.startswith("#:"):
            pending.append(stripped[2:].strip())
            continue
        field = re.match(r"(\w+)\s*:", stripped)
        if field and pending:
            notes[field.group(1)] = " ".join(pending)
        pending = []
    return notes


# --- validation ------------------------------------------------------------------------------------


@cache
def load(name: str) -> dict[str, Any]:
    """A shipped schema (`REPORT_SCHEMA` or `DIFF_SCHEMA`)."""
    return json.loads(resources.files("tritoninspect").joinpath("schemas", name).read_text(encoding="utf-8"))


@cache
def _validator(name: str) -> Any:
    try:
        import jsonschema
    except ImportError as exc:
        raise EnvironmentProblem(
            "reading a saved report needs the jsonschema package", hint="pip install 'jsonschema>=4.18'"
        ) from exc
    return jsonschema.Draft202012Validator(load(name))


def validate(data: Any, name: str, source: str) -> None:
    """Raise `ReportError` ("SOURCE: FIELD.PATH: PROBLEM") unless `data` matches the shipped schema `name`.

    A missing `schema_version`, or another than the schema's, is said first and alone: the rest of
    the file was written for something else. Of several problems, the first in the file is named,
    with a count of the others.
    """
    version = load(name)["properties"]["schema_version"]["const"]
    if isinstance(data, dict) and data.get("schema_version", version) != version:
        raise ReportError(f"{source}: schema_version: this tritoninspect reads version {version}, "
                          f"got {_shown(data['schema_version'])}")
    if isinstance(data, dict) and "schema_version" not in data:
        raise ReportError(f"{source}: schema_version: missing (not a saved tritoninspect {_KIND[name]}?)")
    # A set: jsonschema reports a missing field once per field, each error naming them all.
    problems = sorted(set(_problems(_validator(name).iter_errors(data))),
                      key=lambda problem: (_order(data, problem[0]), problem[2], format_path(problem[0]), problem[1]))
    if problems:
        (path, message, _), more = problems[0], len(problems) - 1
        where = format_path(path) or "top level"
        raise ReportError(f"{source}: {where}: {message}" + (f" (and {more} more)" if more else ""))


def _problems(errors: Iterable[Any]) -> Iterable[tuple[tuple[str | int, ...], str, int]]:
    """(path, message, rank) per problem; a missing or unknown field is named in the path, and
    missing fields rank in the schema's order."""
    for error in errors:
        path = tuple(error.absolute_path)
        if error.validator == "required":
            fields = list(error.schema.get("properties", {}))
            for name in error.validator_value:
                if isinstance(error.instance, dict) and name not in error.instance:
                    yield (*path, name), "missing", fields.index(name) if name in fields else len(fields)
        elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = error.schema.get("properties", {})
            for name in error.instance:
                if name not in known:
                    yield (*path, name), "unknown field", 0
        else:
            yield path, _message(error), 0


def _message(error: Any) -> str:
    got = _shown(error.instance)
    if error.validator == "type":
        expected = [error.validator_value] if isinstance(error.validator_value, str) else error.validator_value
        return f"expected {' or '.join(_TYPE_NAMES.get(t, t) for t in expected)}, got {got}"
    if error.validator == "enum":
        return f"expected one of {', '.join(map(_shown, error.validator_value))}, got {got}"
    if error.validator == "const":
        return f"expected {_shown(error.validator_value)}, got {got}"
    return error.message.splitlines()[0]


_KIND = {REPORT_SCHEMA: "report", DIFF_SCHEMA: "diff report"}
_TYPE_NAMES = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
               "null": "null", "array": "an array", "object": "an object"}


def _shown(value: Any) -> str:
    """A value as it appears in JSON, short: lists and objects by their type only."""
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"


def format_path(path: Iterable[str | int]) -> str:
    """`("kernels", 2, "grid")` as `kernels[2].grid`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _order(data: Any, path: tuple[str | int, ...]) -> list[int]:
    """Where `path` sits in the file: list indexes, and object keys by position (a missing key
    after the present ones)."""
    key, node = [], data
    for part in path:
        if isinstance(part, int):
            key.append(part)
            node = node[part] if isinstance(node, list) and part < len(node) else None
        else:
            names = list(node) if isinstance(node, dict) else []
            key.append(names.index(part) if part in names else len(names))
            node = node.get(part) if isinstance(node, dict) else None
    return key


__all__ = ["DIFF_SCHEMA", "REPORT_SCHEMA", "format_path", "generate", "load", "render", "validate"]
