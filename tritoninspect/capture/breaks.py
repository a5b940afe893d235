"""Graph-break records with what `tritoninspect breaks` needs: details and source.

Called from the recorder while the compile is alive. The user's source lines
around a break are read here, at capture time, so a saved report can show them
on a machine that does not have the file.
"""

from __future__ import annotations

import inspect
import linecache
import re
from types import CodeType, FrameType
from typing import Any

from tritoninspect import textformats
from tritoninspect.capture import compat
from tritoninspect.model.records import BreakRecord

#: Lines shown on each side of a break's line.
CONTEXT_RADIUS = 2
#: User frames kept for an eager launch site (innermost last), and of the user's own frames beyond.
SITE_DEPTH = 8


def break_record(compile_id: str, payload: str, attempt: int = 0) -> BreakRecord:
    """A `BreakRecord` from a `dynamo_graph_break_reason` artifact, as Dynamo logs it (the
    frames it was tracing, and those that called it, are read now: torch's traceback may have lost
    the user's own)."""
    traced = compat.dynamo.traced_stack()
    frames = textformats.breaks.with_callers(compat.dynamo.stack_above_trace(), traced,
                                             compat.dynamo.converted_function())
    reason, file, line, stack, skipped = textformats.breaks.parse_graph_break(payload, frames)
    details = textformats.breaks.graph_break_details(payload)
    context, start = context_lines(file, line)
    library_context, library_start = context_lines(*textformats.breaks.frame_location(details["library_frame"] or ""))
    return BreakRecord(
        compile_id, reason, file, line, stack, skipped, context=context, context_start=start,
        library_context=library_context, library_context_start=library_start,
        value_uses=value_uses(reason, file, line), attempt=attempt, traced_from=traced[0] if traced else None,
        **details,
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
    if not file:
        return None
    return textformats.value_use.break_value_uses(reason, "".join(linecache.getlines(file)), line)


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


def eager_launch_context() -> dict[str, Any]:
    """The `LaunchRecord` fields of an eager launch: where it came from (`site`) ties it to the graph break
    that made it eager; the disables it ran under and the autograd backward it ran in say why it ran outside
    the graph when no graph break is tied to it (a library's disabled forward, whose backward the engine runs)."""
    backward = autograd_backward()
    return {"site": launch_site(), "disabled": disabled_sites(), "backward_of": backward[0] if backward else None,
            "forward_lines": backward[1] if backward else None, "backward_lines": backward[2] if backward else None}


def compiled_launch_context(frame: FrameType) -> dict[str, Any]:
    """The `LaunchRecord` fields of a launch from a compiled graph, `frame` the graph's (its output code or
    the module run as is): the user's autograd.Function whose forward ran eagerly around it (`inside_forward`),
    e.g. after a graph break inside that forward; {} when none did."""
    inside = autograd_forward(frame)
    return {"inside_forward": inside} if inside else {}


def autograd_forward(start: FrameType) -> str | None:
    """The innermost autograd.Function of user or library code whose forward runs eagerly (`Function.apply`)
    around `start`, as "file:line in Class.forward" (the forward's first line); None when there is none."""
    for frame in compat.dynamo.frames(start):
        cls = compat.dynamo.autograd_function_forward(frame)
        code = getattr(inspect.unwrap(getattr(cls, "forward", None)), "__code__", None) if cls else None
        if code is not None and textformats.origin.is_user_file(code.co_filename):
            return f"{code.co_filename}:{code.co_firstlineno} in {cls.__name__}.forward"  # type: ignore[union-attr]
    return None


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


def disabled_sites() -> tuple[str, ...]:
    """Each function of user or library code that `torch.compiler.disable` wraps and that this
    eager launch runs inside, outermost first, as "file:line in name": the line of the disable
    (`disable_line`), so a report can say whose disable kept the launch out of the graph."""
    found = []
    for frame in compat.dynamo.frames():
        fn = compat.dynamo.disabled_function(frame)
        # Not unwrapped: fla's dispatcher disables its `wrapper`, which `functools.wraps` the function
        # it dispatches; the wrapper's own code is where the disable is.
        code = getattr(fn, "__code__", None)
        if code is not None and textformats.origin.is_user_file(code.co_filename):
            # Named as `functools.wraps` names it: fla's dispatcher wrapper reads as what it dispatches.
            found.append(f"{code.co_filename}:{disable_line(code)} in {getattr(fn, '__name__', code.co_name)}")
    return tuple(reversed(found))


def disable_line(code: CodeType) -> int:
    """Where `torch.compiler.disable` is applied to the function of `code`: its `@...disable`
    decorator, else the first `disable(name` after its def in its file (fla's dispatcher: `return
    torch.compiler.disable(wrapper)`, fla/backends.py:203 in fla-core 0.6.0); else its first line."""
    lines = linecache.getlines(code.co_filename)
    first = code.co_firstlineno  # a decorated function's first decorator
    for number in range(first, min(len(lines), first + 20) + 1):
        text = lines[number - 1].strip()
        if not text.startswith("@"):
            break
        if _DISABLE_RE.search(text):
            return number
    call = re.compile(r"\bdisable\(\s*" + re.escape(code.co_name) + r"\b")
    return next((n for n in range(first, len(lines) + 1) if call.search(lines[n - 1])), first)


def autograd_backward() -> tuple[str, tuple[int, int], tuple[int, int] | None] | None:
    """For a launch from an autograd.Function's backward that the autograd engine runs: its forward,
    "file:line in Class.forward" (the forward's first line), the forward's first and last lines
    (what ties the launches of that forward to this backward), and the backward's, where it is in the
    same file (a graph break Dynamo met tracing it: mamba-ssm's MambaChunkScanCombinedFn); None for any
    other launch."""
    for frame in compat.dynamo.frames():
        cls = compat.dynamo.autograd_function_backward(frame)
        if cls is None:
            continue
        code = getattr(inspect.unwrap(getattr(cls, "forward", None)), "__code__", None)
        if code is None or not textformats.origin.is_user_file(code.co_filename):
            return None
        back = getattr(inspect.unwrap(getattr(cls, "backward", None)), "__code__", None)
        backward = _lines(back) if back is not None and back.co_filename == code.co_filename else None
        return f"{code.co_filename}:{code.co_firstlineno} in {cls.__name__}.forward", _lines(code), backward
    return None


def _lines(code: Any) -> tuple[int, int]:
    """A function's first and last lines."""
    return code.co_firstlineno, max((line for _, _, line in code.co_lines() if line is not None),
                                    default=code.co_firstlineno)


_DISABLE_RE = re.compile(r"\bdisable\b")
