"""Whose code a kernel, op or graph break is: the installed libraries of the capture, by file."""

from __future__ import annotations

from tritoninspect.model.records import Capture
from tritoninspect.model.report import Library


def analyse_libraries(capture: Capture) -> dict[str, tuple[Library, ...]]:
    """Each installed distribution that holds a kernel, op or break of the capture, once."""
    found: dict[str, Library] = {}
    for record in capture.libraries.values():
        found.setdefault(record.distribution, record)
    return {"libraries": tuple(sorted(found.values(), key=lambda lib: lib.distribution.lower()))}


def library_name(capture: Capture, file: str | None) -> str | None:
    """The distribution `file` belongs to; None for the user's own code (or an unknown file)."""
    record = capture.libraries.get(file) if file else None
    return record.distribution if record is not None else None
