"""A project's checks: the `[[tool.tritoninspect.check]]` entries of its `pyproject.toml`.

`find_project(start)` looks for the nearest `pyproject.toml` with a `[tool.tritoninspect]`
table from `start` upward, as ruff does (a `pyproject.toml` without the table is passed
over); `load_project(path)` reads and validates it. Each entry is a `target` (relative to
the pyproject's directory, as every path in it) and the conditions `tritoninspect check`
knows, with the same names as its flags:

    [[tool.tritoninspect.check]]
    target = "samples/triton_op.py:Net"
    entries = { add_kernel = "triton_op" }
    no_breaks = true

A table that is wrong in any way is one `UsageError` (exit 2) naming the file, the entry
and the key. Torch-free, like the rest of `source/`.
"""

from __future__ import annotations

import difflib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritoninspect.model.errors import UsageError

if TYPE_CHECKING:
    from tritoninspect.source.parse import Source

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, from PyPI (pyproject.toml's conditional dependency)
    import tomli as tomllib

PYPROJECT = "pyproject.toml"
#: Where the entries live; `TABLE` is the only key `[tool.tritoninspect]` has.
TABLE = "check"
#: An entry's keys: its target, an optional name, the conditions (`check`'s flags with `_` for `-`;
#: `entries` is `--entry`) and the capture options an entry may set for itself.
CONDITION_KEYS = ("no_breaks", "max_graphs", "entries", "no_clones", "no_fallback", "allow")
CAPTURE_KEYS = ("inputs", "dynamic", "backward", "stage")
KEYS = ("target", "name", *CONDITION_KEYS, *CAPTURE_KEYS)
STAGES = ("dynamo", "aot", "inductor")


@dataclass(frozen=True)
class CheckEntry:
    """One `[[tool.tritoninspect.check]]` entry, validated."""

    #: 1-based position among the entries, and the line of its `[[...]]` header (0: not found).
    index: int
    line: int
    #: As written (relative to the pyproject's directory).
    target: str
    #: What its output line and JUnit test case are called: `name`, else the target.
    name: str
    no_breaks: bool = False
    max_graphs: int | None = None
    #: kernel -> hop | triton_op | custom_op, as `--entry KERNEL=KIND`.
    entries: dict[str, str] = field(default_factory=dict)
    no_clones: tuple[str, ...] = ()
    no_fallback: bool = False
    #: Rules whose error findings are accepted, as `--allow RULE` (every other error finding fails).
    allow: tuple[str, ...] = ()
    inputs: str | None = None
    dynamic: bool = False
    backward: bool | None = None
    stage: str | None = None

    @property
    def where(self) -> str:
        return f"[[tool.tritoninspect.check]] #{self.index} ({self.name})"


@dataclass(frozen=True)
class Project:
    """A pyproject.toml's checks, and the directory their targets are relative to."""

    path: Path
    entries: tuple[CheckEntry, ...]

    @property
    def root(self) -> Path:
        return self.path.parent


def find_project(start: Path) -> Path:
    """The nearest pyproject.toml with a `[tool.tritoninspect]` table, from `start` upward.

    UsageError when there is none (naming the nearest pyproject.toml passed over, if any),
    or when one on the way cannot be read as TOML.
    """
    passed_over: Path | None = None
    for directory in (start.resolve(), *start.resolve().parents):
        candidate = directory / PYPROJECT
        if not candidate.is_file():
            continue
        if "tritoninspect" in _read(candidate).get("tool", {}):
            return candidate
        passed_over = passed_over or candidate
    seen = f" ({passed_over} has no [tool.tritoninspect] table)" if passed_over else ""
    raise UsageError(f"check: no TARGET, and no pyproject.toml with [[tool.tritoninspect.check]] entries "
                     f"from {start} upward{seen}",
                     hint="give a TARGET with conditions, or add entries (docs/ci.md)")


def load_project(path: Path) -> Project:
    """The validated entries of `path`'s `[tool.tritoninspect]` table (UsageError naming the key)."""
    data = _read(path)
    table = data.get("tool", {}).get("tritoninspect")
    if not isinstance(table, dict):
        raise _bad(path, "[tool.tritoninspect] must be a table")
    for key in table:
        if key != TABLE:
            raise _bad(path, f"[tool.tritoninspect]: unknown key {key!r}{_did_you_mean(key, (TABLE,))}; "
                       f"checks go in [[tool.tritoninspect.check]]")
    raw = table.get(TABLE)
    if not isinstance(raw, list) or not raw or not all(isinstance(e, dict) for e in raw):
        raise _bad(path, "tool.tritoninspect.check must be one or more [[tool.tritoninspect.check]] tables")
    lines = _header_lines(path.read_text(encoding="utf-8"), len(raw))
    entries = tuple(_entry(path, i + 1, lines[i], e) for i, e in enumerate(raw))
    for entry in entries:  # the later of two entries with one name is the one named
        first = next(e for e in entries if e.name == entry.name)
        if first is not entry:
            raise _bad(path, f"{entry.where}: #{first.index} has the same name; give each a distinct `name`")
    return Project(path, entries)


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read it ({exc})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from exc


def _header_lines(text: str, count: int) -> list[int]:
    """The line of each `[[tool.tritoninspect.check]]` header, in order (0 where the entries are
    written another way, e.g. as an inline array)."""
    pattern = re.compile(r"^\s*\[\[\s*tool\s*\.\s*tritoninspect\s*\.\s*check\s*\]\]")
    found = [n for n, line in enumerate(text.splitlines(), 1) if pattern.match(line)]
    return found if len(found) == count else [0] * count


def _entry(path: Path, index: int, line: int, raw: dict[str, Any]) -> CheckEntry:
    where = f"[[tool.tritoninspect.check]] #{index}"
    for key in raw:
        if key not in KEYS:
            raise _bad(path, f"{where}: unknown key {key!r}{_did_you_mean(key, KEYS)}; keys: {', '.join(KEYS)}")
    target = raw.get("target")
    if not isinstance(target, str) or not target.strip():
        raise _bad(path, f"{where}: `target` is missing or not a string (e.g. target = \"model.py:Net\")")
    name = raw.get("name", target)
    values: dict[str, Any] = {"name": _typed(path, where, "name", name, str)}
    for key, kind in (("no_breaks", bool), ("no_fallback", bool), ("dynamic", bool), ("backward", bool),
                      ("max_graphs", int), ("inputs", str), ("stage", str)):
        if key in raw:
            values[key] = _typed(path, where, key, raw[key], kind)
    if values.get("max_graphs", 0) < 0:
        raise _bad(path, f"{where}: max_graphs must be 0 or more")
    if values.get("stage", STAGES[0]) not in STAGES:
        raise _bad(path, f"{where}: stage {values['stage']!r}: choose one of {', '.join(STAGES)}")
    if "entries" in raw:
        values["entries"] = _kernel_entries(path, where, raw["entries"])
    if "no_clones" in raw:
        values["no_clones"] = _kernel_names(path, where, raw["no_clones"])
    if "allow" in raw:
        values["allow"] = _kernel_names(path, where, raw["allow"], "allow", "a rule")
    return CheckEntry(index=index, line=line, target=target.strip(), **values)


def _typed(path: Path, where: str, key: str, value: Any, kind: type) -> Any:
    # bool is an int in Python, not in TOML: `max_graphs = true` is refused.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        example = {bool: "true or false", int: "an integer", str: "a string"}[kind]
        raise _bad(path, f"{where}: {key} must be {example}, not {value!r}")
    return value


def _kernel_entries(path: Path, where: str, value: Any) -> dict[str, str]:
    from tritoninspect.analyse.checks import ENTRY_KINDS

    if not isinstance(value, dict) or not value:
        raise _bad(path, f"{where}: entries must be a table of kernel = kind, e.g. "
                   f"entries = {{ add_kernel = \"triton_op\" }}")
    for kernel, kind in value.items():
        if kind not in ENTRY_KINDS:
            raise _bad(path, f"{where}: entries.{kernel} = {kind!r}: choose one of {', '.join(ENTRY_KINDS)}")
    return dict(value)


def _kernel_names(path: Path, where: str, value: Any, key: str = "no_clones",
                  what: str = "a kernel name") -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise _bad(path, f"{where}: {key} must be {what} or a list of them, not {value!r}")
    return tuple(value)


def _did_you_mean(key: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(key, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _bad(path: Path, message: str) -> UsageError:
    return UsageError(f"{path}: {message}")


def entry_source(project: Project, entry: CheckEntry) -> Source:
    """The entry's target as a source, its path taken from the pyproject's directory (a dotted
    `package.module:Net` is imported there: the capture runs in that directory). TargetError
    for a target that is no source (a missing file), naming the entry."""
    from tritoninspect.model.errors import TargetError
    from tritoninspect.source.parse import parse_source
    from tritoninspect.source.spec import looks_like_path

    target, root = entry.target, project.root
    module, colon, attr = target.rpartition(":")
    if colon and looks_like_path(module):  # path/to/model.py:Net
        text = f"{root / module}:{attr}"
    elif not colon and (looks_like_path(target) or target.endswith(".json") or (root / target).exists()):
        text = str(root / target)  # model.py alone, a saved report, a TORCH_TRACE log or folder
    else:
        text = target  # package.module:Net: imported in the pyproject's directory, where it is captured
    try:
        source = parse_source(text)
        if not all(path.exists() for path in source.files):  # a saved report, checked now as a model file is
            raise TargetError(f"No such file: {target}")
    except TargetError as exc:
        raise TargetError(f"{project.path}: {entry.where}: {exc.message}", hint=exc.hint) from exc
    return source
