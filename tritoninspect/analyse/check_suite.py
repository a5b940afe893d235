"""Several checks at once: a project's `[[tool.tritoninspect.check]]` entries, one result each.

`SuiteResult` is what `tritoninspect check` (no TARGET) found: per entry, its `CheckResult`, or
the error that kept it from being checked (the target could not be imported, the capture timed
out). Its JSON form is the versioned `check` suite document (docs/json.md); the text, the JUnit
XML and the GitHub annotations are rendered from it (render/check.py, render/junit.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from tritoninspect.analyse.checks import CheckResult
from tritoninspect.model import __version__

#: Version of the `check` suite document (`check --json` without a TARGET). Changelog:
#: 1: schema_version, tool, tool_version, pyproject, ok, counts, checks (name, target, file, line,
#:    status, seconds, conditions, failures, error).
#: 2: checks[].mode: what made the entry's report ("gpu", "compile-only", "trace"; null: not checked), as
#:    the `check` document's `mode` (its version 2).
SUITE_SCHEMA_VERSION = 2

Status = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class EntryResult:
    """One entry: checked (`result`), or not (`error`: the one line its capture ended with)."""

    name: str
    target: str
    #: Where the entry is declared (a path relative to the repository or the current directory),
    #: and the line of its `[[tool.tritoninspect.check]]` header (0: unknown), for annotations.
    file: str
    line: int
    result: CheckResult | None
    error: str | None = None
    #: The error's kind (`TargetError`, `TimeoutProblem`, ...), for JUnit's `type`.
    error_kind: str = ""
    #: How long its capture took, as seen from here (None: not captured).
    seconds: float | None = None

    @property
    def status(self) -> Status:
        if self.result is None:
            return "error"
        return "pass" if self.result.ok else "fail"

    @property
    def failures(self) -> tuple[str, ...]:
        """What to say about it: the failed conditions, or the error."""
        if self.result is None:
            return (self.error or "not checked",)
        return self.result.failures

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "target": self.target,
            "file": self.file,
            "line": self.line or None,
            "status": self.status,
            "mode": (self.result.mode or None) if self.result else None,
            "seconds": None if self.seconds is None else round(self.seconds, 2),
            "conditions": list(self.result.conditions) if self.result else [],
            "failures": list(self.result.failures) if self.result else [],
            "error": self.error,
        }


@dataclass(frozen=True)
class SuiteResult:
    """Every entry's result, in the pyproject's order."""

    #: The pyproject.toml the entries came from, as shown (relative to the current directory).
    pyproject: str
    entries: tuple[EntryResult, ...]
    #: Wall time of the whole run (the entries run in parallel: less than the sum of theirs), when timed.
    seconds: float | None = None

    @property
    def ok(self) -> bool:
        return all(e.status == "pass" for e in self.entries)

    def count(self, status: Status) -> int:
        return sum(e.status == status for e in self.entries)

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON form (docs/json.md: the check suite document)."""
        return {
            "schema_version": SUITE_SCHEMA_VERSION,
            "tool": "tritoninspect",
            "tool_version": __version__,
            "pyproject": self.pyproject,
            "ok": self.ok,
            "counts": {status: self.count(status) for status in ("pass", "fail", "error")},
            "checks": [e.to_dict() for e in self.entries],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)
