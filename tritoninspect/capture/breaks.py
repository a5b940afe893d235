"""Graph-break records with what `tritoninspect breaks` needs: details and source.

Called from the recorder while the compile is alive. The user's source lines
around a break are read here, at capture time, so a saved report can show them
on a machine that does not have the file.
"""

from __future__ import annotations

import linecache

from tritoninspect import textformats
from tritoninspect.capture import compat
from tritoninspect.capture.records import BreakRecord

#: Lines shown on each side of a break's line.
CONTEXT_RADIUS = 2
#: User frames kept for an eager launch site (innermost last).
SITE_DEPTH = 8


def break_record(compile_id: str, payload: str) -> BreakRecord:
    """A `BreakRecord` from a `dynamo_graph_break_reason` artifact."""
    reason, file, line, stack, skipped = textformats.breaks.parse_graph_break(payload)
    details = textformats.breaks.graph_break_details(payload)
    context, start = context_lines(file, line)
    library_context, library_start = context_lines(*_location(details["library_frame"]))
    return BreakRecord(
        compile_id, reason, file, line, stack, skipped, context=context, context_start=start,
        library_context=library_context, library_context_start=library_start, **details,
    )


def _location(frame: str | None) -> tuple[str | None, int | None]:
    """(file, line) of a "file:line in func" frame."""
    if not frame:
        return None, None
    file, _, line = frame.rsplit(" in ", 1)[0].rpartition(":")
    return (file, int(line)) if line.isdigit() else (None, None)


def context_lines(
    file: str | None, line: int | None, radius: int = CONTEXT_RADIUS
) -> tuple[tuple[str, ...], int | None]:
    """(lines, first line number) around `file:line`; empty when unreadable."""
    if not file or not line:
        return (), None
    lines = linecache.getlines(file)
    if not lines or line > len(lines):
        return (), None
    start = max(1, line - radius)
    chunk = lines[start - 1 : line + radius]
    return tuple(text.rstrip("\n") for text in chunk), start


def launch_site() -> tuple[str, ...]:
    """The user's frames at this point of an eager launch, innermost last."""
    site = [
        f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"
        for frame in compat.dynamo.frames()
        if textformats.paths.is_user_file(frame.f_code.co_filename)
    ]
    return tuple(reversed(site[:SITE_DEPTH]))
