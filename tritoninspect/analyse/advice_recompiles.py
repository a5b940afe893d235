"""Advice rules for recompiles: grouped by the guard that failed (or the kernel argument it held),
and recompile limits hit. See analyse/advice.py for the rule contract."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tritoninspect.analyse.advice_text import BROKEN, RECOMPILES, plural
from tritoninspect.analyse.guard_text import is_size_mismatch
from tritoninspect.analyse.summary import KernelSummary
from tritoninspect.model.report import Advice, Recompile, Report, said


def recompiles(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """Recompiles, grouped by the guard that failed (or the kernel argument it guarded); limits hit."""
    groups: dict[tuple[str, ...], list[Recompile]] = {}
    for r in report.recompiles:
        key = _recompile_key(r)
        # Automatic dynamic shapes: one size that changed recompiles every frame that holds it (a Hugging Face
        # model at a second sequence length: 14 recompiles of 11 frames, each said apart with the same advice).
        groups.setdefault(("sizes",) if key[0] == "guard" and is_size_mismatch(_guard_of(r)) else key, []).append(r)
    advice = [_recompile_advice(_recompile_key(group[0]) if key == ("sizes",) and len(group) == 1 else key, group)
              for key, group in groups.items()]
    for limit in report.recompile_limits:
        advice.append(Advice(
            rule="recompiles", impact=BROKEN,
            finding=f"Dynamo hit {limit.limit_type}"
                    + (f" ({limit.limit})" if limit.limit is not None else "")
                    + (f" for {limit.function}" if limit.function else "")
                    + ": later calls ran eagerly, uncompiled.",
            action="Stop the values that change per call from being specialised (see the recompiles), or "
                   f"raise torch._dynamo.config.{limit.limit_type}.",
            because="After the limit Dynamo stops compiling the frame and runs it in plain Python.",
            cite=f"torch._dynamo.config.{limit.limit_type}",
        ))
    return advice


_VALUE_RE = re.compile(r"(==|!=|<=|>=|<|>)\s*-?[\d.e+-]+(\s*#.*)?$")


def _recompile_key(r: Recompile) -> tuple[str, ...]:
    """What the recompile is about: a kernel argument the failed guard held (kernel, kind, name);
    else the failed guard itself, its compared value left out so repeats group; else a changed constexpr."""
    guarded = [c for c in r.changes if c.guarded]
    guard = _guard_of(r)
    if guarded and not is_size_mismatch(guard):
        return (guarded[0].kernel, guarded[0].kind, guarded[0].name)
    if guard and _not_a_size(guard) and (frame := _frame_of(r, line=False)):
        return ("calls", frame)  # a type, object or argument count: one advice per function, whichever failed
    if guard:
        return ("guard", _VALUE_RE.sub(r"\1 <value>", guard.split("  # ")[0].strip()))
    changed = [c for c in r.changes if c.kind == "constexpr"] or list(r.changes)
    if changed:
        return (changed[0].kernel, changed[0].kind, changed[0].name)
    return ("guard", _first_line(r.reason))


def _guard_of(r: Recompile) -> str:
    """The failed guard; for reports without `guard`, the reason's first line without its `0/0: ` prefix."""
    return r.guard or re.sub(r"^\d+/\d+: ", "", _first_line(r.reason))


def _recompile_advice(key: tuple[str, ...], group: list[Recompile]) -> Advice:
    ids = ", ".join(r.compile_id for r in group)
    head = f"{plural(len(group), 'recompile')} ({ids})"
    kernel, action = None, next((r.hint for r in reversed(group) if r.hint), None)
    if key == ("sizes",):
        sizes = list(dict.fromkeys(_size_change(_guard_of(r)) for r in group))
        more = f", and {len(sizes) - _SIZES_SHOWN} more" if len(sizes) > _SIZES_SHOWN else ""
        frames = len({r.compile_id.partition("/")[0] for r in group})
        finding = (f"{head}, of {plural(frames, 'frame')}: automatic dynamic shapes, after "
                   f"{', '.join(sizes[:_SIZES_SHOWN])}{more} changed")
        along = _along(group)
        finding += f"; with it {along}." if along else "."
        action = _sizes_action()
    elif key[0] == "calls":
        guards = ", ".join(dict.fromkeys(_guard_of(r).split("  # ")[0].strip() for r in group))
        finding = f"{head} of {key[1]}: guard{'s' if ', ' in guards else ''} failed: {guards}."
        action = _calls_action(group[0])
    elif key[0] != "guard":
        kernel, kind, name = key
        values = [c for r in group for c in r.changes if (c.kernel, c.kind, c.name) == key]
        steps = " -> ".join(map(said, [values[0].before, *(c.after for c in values)])) if values else "?"
        finding = f"{head}: {kind} {name} of {kernel} took {steps}."
        if kind == "constexpr":  # said here, not from the stored hint: reports saved before said it unconditionally
            action = (f"{name} takes a new value per size and a tl.constexpr is specialised: each value compiles "
                      f"again. If {name} bounds tl.arange or sets a block shape it must stay a constexpr: round it "
                      "to a few values (a power of two, capped) so few compiles happen; if it only selects a code "
                      "path, pass it as a plain argument.")
    else:
        finding = f"{head}: guard failed: {_guards_text(key[1], group)}"
        along = _along(group)
        finding += f"; with it {along}." if along else "."
        size = is_size_mismatch(_guard_of(group[0]))
        action = _size_action(_guard_of(group[0])) if size else _guard_action(key[1], action)
    triton = {_triton_frame(r) for r in group}
    if None not in triton:
        action = _triton_frame_action(sorted(triton)[0])  # type: ignore[arg-type]
    return Advice(
        rule="recompiles", impact=RECOMPILES, kernel=kernel, kernels=(kernel,) if kernel else (), finding=finding,
        action=action or (f"Keep what the failed guard `{key[-1]}` checks the same between calls, or compile "
                          "with dynamic=True (or torch._dynamo.mark_dynamic) if it is a size that changes."),
        because="Dynamo guards on the values it specialised on (constexpr arguments, int arguments, static "
                "shapes); a call that fails a guard compiles the frame again.",
        cite="torch/_dynamo/guards.py; torch._dynamo.config.recompile_limit",
    )


#: The frame Dynamo recompiled, as torch's guard-failure text names it: its "User stack trace" (torch 2.11-2.14,
#: torch/_dynamo/guards.py `get_and_maybe_log_recompilation_reasons`), else the guard's trailing comment.
_STACK_FILE_RE = re.compile(r'User stack trace:\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_COMMENT_FRAME_RE = re.compile(r"#\s*(?P<file>\S+\.py):(?P<line>\d+) in (?P<func>\S+)\s*$", re.M)
_TRITON_FILE_RE = re.compile(r"(^|/)triton/")


def _frame_match(r: Recompile) -> re.Match[str] | None:
    """The recompiled frame's file, line and function in the reason's text."""
    return _STACK_FILE_RE.search(r.reason) or _COMMENT_FRAME_RE.search(r.reason.split("\nUser stack trace:")[0])


def _triton_frame(r: Recompile) -> str | None:
    """"file:line in func" of the recompiled frame when it is Triton's own code, else None."""
    m = _frame_match(r)
    if m is None or not _TRITON_FILE_RE.search(m["file"]):
        return None
    file = m["file"][m["file"].rfind("triton/"):]
    return f"{file}:{m['line']} in {m['func']}"


def _triton_frame_action(frame: str) -> str:
    """A recompile of Triton's own launch code: no guard of the user's to keep."""
    return (f"The recompiled frame is Triton's own launch code ({frame}): Dynamo compiles it only because a "
            "kernel launch ran eagerly after a graph break, and each different launch through it fails the "
            "guards of the last. Nothing to keep the same in your code: fix the graph break before the launch "
            "(see the kernels that ran eagerly) and this recompile goes with it.")


def _guards_text(expression: str, group: list[Recompile]) -> str:
    """One guard as the first recompile logged it, or the expression and each compared value."""
    if len(group) == 1 or "<value>" not in expression:
        return _guard_of(group[0]).split("  # ")[0].strip()
    values = [m[0] for r in group if (m := re.search(r"-?[\d.e+-]+(?=\s*(#|$))", _guard_of(r).split("  # ")[0]))]
    return f"{expression} ({', '.join(values)})"


def _size_action(guard: str) -> str:
    """Automatic dynamic: the value is the tensor size the guard names."""
    match = re.search(r"tensor '(?P<t>.+?)' size mismatch at index (?P<i>\d+)\. expected (?P<a>-?\d+), "
                      r"actual (?P<b>-?\d+)", guard)
    what = (f"dimension {match['i']} of {match['t']} ({match['a']}, then {match['b']})" if match else "a tensor size")
    return (f"{what[0].upper()}{what[1:]} changed after the first compile, so Dynamo compiled again with it dynamic (automatic "
            "dynamic shapes; later sizes reuse that compile). Mark it dynamic from the start "
            "(torch._dynamo.mark_dynamic on the input it comes from, or dynamic=True / --dynamic) to compile "
            "once; values computed from the size (a constexpr block size, a grid) can still recompile.")


_SIZES_SHOWN = 4
_SIZE_CHANGE_RE = re.compile(r"tensor '(?P<t>.+?)' size mismatch at index (?P<i>\d+)\. expected (?P<a>-?\d+), "
                             r"actual (?P<b>-?\d+)")


def _size_change(guard: str) -> str:
    """"dimension 1 of input_ids (16 -> 24)" from a size-mismatch guard."""
    m = _SIZE_CHANGE_RE.search(guard)
    return f"dimension {m['i']} of {m['t']} ({m['a']} -> {m['b']})" if m else guard.split("  # ")[0].strip()


def _sizes_action() -> str:
    return ("These sizes changed after the first compile, so Dynamo compiled each frame that holds one again with "
            "it dynamic (automatic dynamic shapes; later sizes reuse those compiles). Mark them dynamic from the "
            "start (torch._dynamo.mark_dynamic on the inputs they come from, or dynamic=True / --dynamic) to "
            "compile once; values computed from a size (a constexpr block size, a grid) can still recompile.")


def _along(group: list[Recompile]) -> str:
    """The kernel arguments that changed in those recompiles, said as consequences, not causes."""
    seen: dict[tuple[str, str, str], list[str]] = {}
    for r in group:
        for c in r.changes:
            if c.kind != "grid":
                seen.setdefault((c.kernel, c.kind, c.name), [c.before]).append(c.after)
    return ", ".join(f"{kind} {name} of {kernel} took {' -> '.join(map(said, steps))}"
                     for (kernel, kind, name), steps in list(seen.items())[:2])


def _guard_action(guard: str, hint: str | None) -> str | None:
    """A guard on `___stackN`: a Python number passed into a resumed frame (after a graph break)."""
    if guard.startswith("___stack"):
        return ("The failed guard checks a Python number carried across a graph break (___stack: a value on "
                "the stack of the resumed frame, e.g. from .item()): each new value compiles again. Keep it a "
                "tensor (pass the 0-d tensor to the kernel and tl.load it), or avoid the break.")
    if _not_a_size(guard):
        return _calls_action(None)
    return hint


_TYPE_GUARD_RE = re.compile(r"^type\(.+?\) is ")
_OBJECT_GUARD_RE = re.compile(r"^.+? is <the \w+ compiled for>")
_ARITY_GUARD_RE = re.compile(r"^(not\s+)?(len\()?(L\['(?P<l>\w+)'\]|(?P<x>\w+))\)?\s*(==\s*(<value>|\d+))?\s*($|#)")


def _not_a_size(guard: str) -> bool:
    """Is the failed guard on a type, an object's identity or the number of `*args` / `**kwargs`?"""
    guard = guard.split("  # ")[0].strip()
    if _TYPE_GUARD_RE.match(guard) or _OBJECT_GUARD_RE.match(guard):
        return True
    m = _ARITY_GUARD_RE.match(guard)
    return m is not None and (m["l"] or m["x"]) in ("args", "kwargs")


def _calls_action(r: Recompile | None) -> str:
    """Calls that differ in a type, an object or their number of arguments: nothing dynamic=True makes symbolic.
    A frame other than the first compiled is a function Python code called (after a graph break, in a skipped
    frame): one called from several places, differently (a decorator's wrapper), compiles once per kind of call."""
    frame = _frame_of(r) if r is not None else None
    text = ("Dynamo compiled the frame for one kind of call (a type, an object, a number of arguments) and a later "
            "call differed: each kind compiles again, up to torch._dynamo.config.recompile_limit; dynamic=True "
            "does not help (it makes sizes and ints symbolic).")
    if frame is None or r is None or r.compile_id.startswith("0/"):
        return text + " Call it alike each time."
    return (text + f" {_frame_of(r, line=False)} is compiled on its own because its callers run in Python (after a graph break, or "
            "in a frame Dynamo skipped), and they call it differently: fix those breaks and it is traced inside "
            "each caller's graph instead.")


def _frame_of(r: Recompile, *, line: bool = True) -> str | None:
    """"file:line in func" of the recompiled frame (an installed package's file from its package folder);
    without `line`, "func (file)": the function, whichever of its lines installed the guard."""
    m = _frame_match(r)
    if m is None:
        return None
    file = m["file"].rsplit("site-packages/", 1)[-1].rsplit("dist-packages/", 1)[-1]
    return f"{file}:{m['line']} in {m['func']}" if line else f"{m['func']} ({file})"


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


RECOMPILE_PRECONDITION = ("recompiles (Report.recompiles), grouped by the failed guard or the kernel argument it "
                          "held; a recompile limit hit (Report.recompile_limits).")
