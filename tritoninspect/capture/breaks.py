"""Graph-break records with what `tritoninspect breaks` needs: details and source.

Called from the recorder while the compile is alive. The user's source lines
around a break are read here, at capture time, so a saved report can show them
on a machine that does not have the file.
"""

from __future__ import annotations

import linecache

from tritoninspect import textformats
from tritoninspect.capture import compat
from tritoninspect.model.records import BreakRecord

#: Lines shown on each side of a break's line.
CONTEXT_RADIUS = 2
#: User frames kept for an eager launch site (innermost last), and of the user's own frames beyond.
SITE_DEPTH = 8


def break_record(compile_id: str, payload: str) -> BreakRecord:
    """A `BreakRecord` from a `dynamo_graph_break_reason` artifact, as Dynamo logs it (the
    frames it was tracing are read now: torch's traceback may have lost the user's own)."""
    reason, file, line, stack, skipped = textformats.breaks.parse_graph_break(payload, compat.dynamo.traced_stack())
    details = textformats.breaks.graph_break_details(payload)
    context, start = context_lines(file, line)
    library_context, library_start = context_lines(*textformats.breaks.frame_location(details["library_frame"] or ""))
    return BreakRecord(
        compile_id, reason, file, line, stack, skipped, context=context, context_start=start,
        library_context=library_context, library_context_start=library_start,
        value_uses=value_uses(reason, file, line), **details,
    )


def tool_break(compile_id: str, payload: str) -> tuple[str, str] | None:
    """(source, message) of a problem to report instead of this break when Dynamo broke in
    tritoninspect's own code (the traced frames are read now, as in `break_record`): one of the
    tool's hooks that the model's eager code reached while Dynamo's frame callback was on. A run
    without tritoninspect has no such break, so it is never listed as the model's."""
    inside = textformats.breaks.tool_frame(payload, compat.dynamo.traced_stack())
    if inside is None:
        return None
    return "tritoninspect", (
        f"[{compile_id}] Dynamo compiled tritoninspect's own code and broke the graph in it ({inside}): not a "
        "break of the model, so it is left out of the graph breaks; a bug in tritoninspect, please report it")


def value_uses(reason: str, file: str | None, line: int | None) -> dict[str, int] | None:
    """A break at `Tensor.item()`: what the user's function does with the value (read from the
    source now, while the file is at hand); None for other breaks or when it cannot tell."""
    if "item()" not in reason or not file or not line:
        return None
    found = textformats.value_use.item_uses("".join(linecache.getlines(file)), line)
    return dict(found.lines) if found is not None and found.kinds else None


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
    """The user's frames at this point of an eager launch, innermost last: the SITE_DEPTH
    innermost, and up to SITE_DEPTH of the user's own code beyond them. A library can be deeper
    than that between the user's line and the launch (Liger's LayerNorm: 8 frames from its
    module's `forward` through its disabled dispatcher), and a graph break there is reported at
    the user's line, which must be in the site to tie the kernel to the break."""
    site: list[str] = []
    beyond = 0
    for frame in compat.dynamo.frames():
        file = frame.f_code.co_filename
        if not textformats.origin.is_user_file(file):
            continue
        if len(site) >= SITE_DEPTH:
            if beyond >= SITE_DEPTH or not textformats.origin.is_own_file(file):
                continue
            beyond += 1
        site.append(f"{file}:{frame.f_lineno} in {frame.f_code.co_name}")
    return tuple(reversed(site))
