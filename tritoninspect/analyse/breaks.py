"""Graph breaks and recompiles around Triton kernels, from records only.

For each graph break: the kernel it concerns (matched against eager launch
sites and the launches in the source around the break), the kernels that ran
eagerly because of it, and a hint for the known Triton causes (analyse/break_causes.py).
For each recompile: the failed guard, and the kernel arguments (grid,
constexprs, scalars) that changed from the previous compile of the frame.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass

from tritoninspect.analyse.break_causes import (  # noqa: F401 - KNOWN_CAUSES, known_cause: re-exported
    KNOWN_CAUSES,
    RUNTIME_FOLLOW_ON,
    cause_of,
    item_hint,
    known_cause,
    runtime_follow_on,
)
from tritoninspect.analyse.indexes import earlier_nodes_of_kernel, nodes_of_kernel
from tritoninspect.analyse.libraries import library_name
from tritoninspect.analyse.guard_text import guarded_value, is_size_mismatch, is_symbolic, short_guard
from tritoninspect.model.records import BreakRecord, Capture, DynamoBreak, NodeRecord, RecompileRecord, extended
from tritoninspect.model.report import STAGES, UNRECORDED, ArgChange, Diagnostic, GraphBreak, Recompile, said
from tritoninspect.textformats.breaks import frame_location, original_function, replaced_compile


def compile_only_notes(capture: Capture, graph_breaks: Iterable[GraphBreak]) -> list[Diagnostic]:
    """What compile-only mode cannot show about these breaks, said where it matters:
    an autotuned kernel that ran eagerly (see RUNTIME_FOLLOW_ON)."""
    if capture.meta.get("mode") != "compile-only":
        return []
    autotuned = {k.name for k in capture.kernels.values() if k.autotune_configs} - _always_disabled(capture)
    eager = sorted({name for b in graph_breaks for name in b.eager_kernels if name in autotuned})
    if not eager:
        return []
    return [Diagnostic(
        "note", "compile-only",
        f"autotuned kernels ran eagerly ({', '.join(eager)}): compile-only mode launches them through its "
        "interpreter launcher, which Dynamo does not compile; on a GPU, Dynamo also compiles the frames of "
        "Triton's autotuner they run through and logs more graph breaks there, follow-ons of these ones.",
    )]


def _always_disabled(capture: Capture) -> set[str]:
    """Kernels each eager launch of which ran inside a user's or library's `torch.compiler.disable`
    (fla-core's chunk_gla): on a GPU too, Dynamo compiles nothing under a disable (it is recursive),
    the autotuner's frames included, so no follow-on breaks come from them."""
    disabled: dict[str, bool] = {}
    for la in capture.launches:
        record = capture.kernels.get(la.kernel_id or "")
        if not la.in_graph and record is not None:
            disabled[record.name] = disabled.get(record.name, True) and bool(la.disabled)
    return {name for name, always in disabled.items() if always}


# --- graph breaks ----------------------------------------------------------------


def analyse_graph_breaks(capture: Capture) -> dict[str, tuple]:
    """Graph breaks (each once), each with its kernel, eager kernels and hint."""
    launches = _eager_launches(capture)
    names = _kernel_names(capture)
    pairs = _each_once(capture)
    deepest = _deepest_claims(pairs, launches)
    detailed = (_detailed(first, last, launches, names, deepest) for first, last in pairs)
    return {"graph_breaks": tuple(_in_library(capture, b) for b in detailed)}


def _deepest_claims(pairs: list[tuple[BreakRecord, BreakRecord]], launches: list[_Launch]) -> dict[_Launch, int]:
    """For each eager launch, how far along its call the most specific break that made it eager reached
    (`_reach`). A break at the user's line in one call of a library (cut-cross-entropy's `nonzero()` in
    `_build_flat_valids`) does not make eager a kernel that another call at the same line launches and
    whose own launch broke (its heuristics): that launch's break does. Follow-ons in Triton's runtime
    never count: they come after the break they follow."""
    deepest: dict[_Launch, int] = {}
    for first, record in pairs:
        if runtime_follow_on(record.library_frame, record.traced_from):
            continue
        b = extended(record, GraphBreak, user_stack=first.user_stack, frame_skipped=first.frame_skipped)
        frame = _break_frame(b)
        for la in launches:
            reach = _reach(b, record.skipped_rest, la.site)
            made = frame is not None and any(_made_eager(f, frame, b.frame_skipped, record.skipped_rest) for f in la.site)
            if made and reach is not None:
                deepest[la] = max(deepest.get(la, reach), reach)
    return deepest


def _reach(b: GraphBreak, skipped_rest: bool, site: tuple[_Frame, ...]) -> int | None:
    """How close to a launch the break's user stack came along the launch's `site` (outermost first):
    minus the number of the site's frames below the last one it runs through (0: the launch's own
    frame; the same lines from where they meet, then the function the break skipped, all of it or its
    rest after the break's line, when the launch is in it). Counted from the launch's end: a site keeps
    only its innermost frames, more or fewer of the outer ones. None when they never meet."""
    stack = [f for f in (_parse_frame(s) for s in b.user_stack) if f is not None]
    lines = [(f.file, f.line) for f in stack]
    start = next(((i, lines.index((f.file, f.line))) for i, f in enumerate(site) if (f.file, f.line) in lines), (0, 0))
    i, j = start
    while i < len(site) and j < len(stack) and (site[i].file, site[i].line) == lines[j]:
        i, j = i + 1, j + 1
    skipped = i < len(site) and j < len(stack) and bool(stack[j].func) and (
        (site[i].file, site[i].func) == (stack[j].file, stack[j].func)
        and (b.frame_skipped or (skipped_rest and site[i].line > stack[j].line)))
    i += int(skipped)
    return i - len(site) if i > start[0] else None


def _in_library(capture: Capture, b: GraphBreak) -> GraphBreak:
    """`b` with the distribution whose code it broke in (its `library_frame`'s); for a break inside
    Triton's own code (a bare `triton.heuristics` launch Dynamo inlined), the library whose launch
    that is (the innermost frame of the user stack), as cut-cross-entropy's num_ctas heuristics."""
    file = frame_location(library_place(b) or "")[0]
    return dataclasses.replace(b, library=library_name(capture, file)) if file else b


#: Triton's own code, where a launch of a library's kernel can break (Heuristics.run).
_TRITON_CODE = re.compile(r"(^|/)triton/")


def library_place(b: DynamoBreak) -> str | None:
    """"file:line in func" the break is at in installed code: its `library_frame`, or, when that is
    Triton's own code, the innermost frame of its user stack (the launch Triton's code runs)."""
    if b.library_frame and _TRITON_CODE.search(frame_location(b.library_frame)[0] or "") and b.user_stack:
        return b.user_stack[-1]
    return b.library_frame



def _each_once(capture: Capture) -> list[tuple[BreakRecord, BreakRecord]]:
    """Each break once, as (its first log, its last), in order: Dynamo can log a break again on
    restart. The report keeps the first log's stack and the last one's details."""
    last = {_key(b): b for b in capture.breaks}
    seen: set[tuple] = set()
    found = []
    for b in capture.breaks:
        if _key(b) not in seen:
            seen.add(_key(b))
            found.append((b, last[_key(b)]))
    return found


def _key(b: DynamoBreak) -> tuple:
    return (b.compile_id, b.reason, b.file, b.line)


@dataclass(frozen=True)
class _Frame:
    file: str
    line: int
    func: str


@dataclass(frozen=True)
class _Launch:
    kernel: str
    site: tuple[_Frame, ...]
    #: The names of the functions `torch.compiler.disable` wraps that the launch ran inside.
    disabled: tuple[str, ...] = ()


def _parse_frame(text: str) -> _Frame | None:
    loc, _, func = text.rpartition(" in ")
    file, _, line = loc.rpartition(":")
    if not file or not line.isdigit():
        return None
    return _Frame(file, int(line), original_function(func))


def _eager_launches(capture: Capture) -> list[_Launch]:
    launches = []
    for la in capture.launches:
        record = capture.kernels.get(la.kernel_id or "")
        if la.in_graph or record is None:
            continue
        frames = tuple(f for f in (_parse_frame(s) for s in la.site) if f is not None)
        disabled = tuple(d.rpartition(" in ")[2].rpartition(".")[2] for d in la.disabled)
        launches.append(_Launch(record.name, _resumed(frames), disabled))
    return launches


def _resumed(frames: tuple[_Frame, ...]) -> tuple[_Frame, ...]:
    """`frames` (innermost last) with a function's frame that called its own resume function dropped:
    after a graph break at line 11 of `forward`, Dynamo's compiled `forward` calls
    `torch_dynamo_resume_in_forward_at_11`, which `original_function` names `forward` too; a launch
    there sat "at line 11" as well as at its own line, and was tied to that break."""
    kept: list[_Frame] = []
    for f in frames:
        if kept and (kept[-1].file, kept[-1].func) == (f.file, f.func) and f.func:
            kept[-1] = f
        else:
            kept.append(f)
    return tuple(kept)


def _kernel_names(capture: Capture) -> list[str]:
    # Longest first, so a name that contains another one is tried first.
    return sorted({k.name for k in capture.kernels.values()}, key=lambda n: (-len(n), n))


def _detailed(
    first: BreakRecord, record: BreakRecord, launches: list[_Launch], names: list[str], deepest: dict[_Launch, int]
) -> GraphBreak:
    b = extended(record, GraphBreak, user_stack=first.user_stack, frame_skipped=first.frame_skipped,
                 attempt=first.attempt)
    frame = _break_frame(b)
    # Only the launches this break made eager itself: another break further along their call is theirs.
    own = [la for la in launches if la not in deepest or _at_least(_reach(b, record.skipped_rest, la.site), deepest[la])]
    own = _inside_its_disable(b, own)
    eager = _eager_kernels(b, record, frame, own)
    kernel, relation = _break_kernel(b, record, frame, _most_specific(b, record.skipped_rest, launches), eager, names)
    cause = cause_of(record.headline, b.reason, record.library_frame, kernel, record.traced_from)
    if cause is not None and cause.pattern.pattern == r"Tensor\.item\(\)":
        cause = item_hint(record.value_uses) or cause
    return dataclasses.replace(
        b, kernel=kernel, kernel_relation=relation, eager_kernels=tuple(eager),
        hint=cause.hint if cause else None, hint_source=cause.source if cause else None,
    )


_DISABLED_FUNCTION_RE = re.compile(r"<function (?:[\w<>]+\.)*(?P<name>\w+) at 0x[0-9a-f]+>")


def _inside_its_disable(b: GraphBreak, launches: list[_Launch]) -> list[_Launch]:
    """Of `launches`, those a break on calling a disabled function can have made eager: not one that ran
    inside other disabled functions only (GatedDeltaNet's layer: fla-core's disabled layer_norm_gated_fwd and
    flash-linear-attention's disabled chunk_gated_delta_rule, both called from the user's one line, each
    claimed the other's kernels). Launches in no disabled function, and other breaks, are left as they are."""
    if "compiler.disable" not in b.headline:
        return launches
    named = _DISABLED_FUNCTION_RE.search(b.reason)
    if named is None:
        return launches
    return [la for la in launches if not la.disabled or named["name"] in la.disabled]


def _at_least(reach: int | None, deepest: int) -> bool:
    return reach is not None and reach >= deepest


def _most_specific(b: GraphBreak, skipped_rest: bool, launches: list[_Launch]) -> list[_Launch]:
    """`launches`, those whose call the break reaches furthest first (a break inside the second
    kernel's launch of a line concerns that kernel, not the line's first one); stable otherwise."""
    def closeness(la: _Launch) -> int:
        reach = _reach(b, skipped_rest, la.site)
        return reach if reach is not None else -len(la.site) - 1

    return sorted(launches, key=lambda la: -closeness(la))


def _break_frame(b: GraphBreak) -> _Frame | None:
    """The user frame the break is reported at, with its function."""
    if b.file is None or b.line is None:
        return None
    for text in reversed(b.user_stack):
        frame = _parse_frame(text)
        if frame is not None and (frame.file, frame.line) == (b.file, b.line):
            return frame
    return _Frame(b.file, b.line, "")


def _eager_kernels(b: GraphBreak, record: BreakRecord, frame: _Frame | None, launches: list[_Launch]) -> list[str]:
    """Kernels launched eagerly because of the break: from the break's own line
    (e.g. a disabled function's call), or, when Dynamo gave up on the rest of
    the frame or on all of it, from that frame's code."""
    if frame is None:
        return []
    found = []
    for la in launches:
        if any(_made_eager(f, frame, b.frame_skipped, record.skipped_rest) for f in la.site) and la.kernel not in found:
            found.append(la.kernel)
    return found


def _made_eager(f: _Frame, at: _Frame, frame_skipped: bool, skipped_rest: bool) -> bool:
    if f.file != at.file:
        return False
    if f.line == at.line:
        return True
    same_function = bool(at.func) and f.func == at.func
    return same_function and (frame_skipped or (skipped_rest and f.line > at.line))


def _break_kernel(
    b: GraphBreak, record: BreakRecord, frame: _Frame | None, launches: list[_Launch], eager: list[str],
    names: list[str],
) -> tuple[str | None, str | None]:
    """The kernel the break concerns, most direct evidence first."""
    if frame is not None:
        for la in launches:
            if any((f.file, f.line) == (frame.file, frame.line) for f in la.site):
                return la.kernel, "launched eagerly from this line"
    for number, text in _source_lines(record.context, record.context_start, record.line):
        kernel = launched_in(text, names)
        if kernel is not None:
            if number == b.line:
                return kernel, "launched on this line"
            return kernel, f"launched at line {number}, next to the break"
    library_line = _frame_line(record.library_frame)
    for number, text in _source_lines(record.library_context, record.library_context_start, library_line):
        kernel = launched_in(text, names)
        if kernel is not None:
            return kernel, f"launched in the library at line {number}, next to the break there"
    if eager:
        return eager[0], "ran eagerly after the break"
    return None, None


def _source_lines(context: tuple[str, ...], start: int | None, line: int | None) -> list[tuple[int, str]]:
    """Numbered context lines, `line` itself first, then the nearest ones."""
    if start is None or line is None:
        return []
    numbered = [(start + i, text) for i, text in enumerate(context)]
    return sorted(numbered, key=lambda item: (abs(item[0] - line), item[0]))


def _frame_line(frame: str | None) -> int | None:
    """The line of a "file:line[ in func]" frame."""
    line = (frame or "").rsplit(" in ", 1)[0].rpartition(":")[2]
    return int(line) if line.isdigit() else None


def launched_in(text: str, names: Iterable[str]) -> str | None:
    """The kernel a source line launches: `k[grid](`, `k.run(`, `wrap_triton(k)`."""
    code = text.split("#", 1)[0]
    for name in names:
        n = re.escape(name)
        if re.search(rf"(?<![\w.]){n}\s*\[|(?<![\w.]){n}\.run\(|(?:wrap|capture)_triton\(\s*{n}\s*\)", code):
            return name
    return None


# --- recompiles --------------------------------------------------------------------

_PREFIX_RE = re.compile(r"^(?P<cid>\d+/\d+): ")
def analyse_recompile_details(capture: Capture) -> dict[str, tuple]:
    """Each recompile with its failed guard and the kernel arguments that changed."""
    recompiles = tuple(_recompile(capture, r) for r in capture.recompiles)
    return {"recompiles": recompiles, "recompile_limits": tuple(capture.recompile_limits)}


def _recompile(capture: Capture, r: RecompileRecord) -> Recompile:
    first = next((ln for ln in r.reason.splitlines() if ln.strip()), "")
    prefix = _PREFIX_RE.match(first)
    previous = replaced_compile(r.compile_id, r.reason)
    raw_guard = first[prefix.end():] if prefix else first
    old = guarded_value(raw_guard)
    size_guard = is_size_mismatch(raw_guard)
    # A size-mismatch guard is on a tensor: an int argument equal to the old size carries it, but
    # a constexpr equal to it (BLOCK = next_power_of_2(n) = n) is at most derived from it.
    changes = tuple(
        dataclasses.replace(c, guarded=old is not None and c.before == old and not (size_guard and c.kind == "constexpr"))
        for c in _changes(capture, previous, r.compile_id)
    )
    hint = _size_hint() if size_guard else _recompile_hint(changes)
    return extended(r, Recompile, guard=short_guard(raw_guard), previous=previous, changes=changes, hint=hint)


def _size_hint() -> str:
    return ("a tensor size Dynamo had compiled as static changed, so it compiled the frame again with that size "
            "dynamic (automatic dynamic shapes); later sizes reuse that compile unless a value computed from the "
            "size (a constexpr, a grid) is guarded too. torch._dynamo.mark_dynamic on the input (or --dynamic) "
            "starts dynamic and saves the static compile.")


def _changes(capture: Capture, previous: str | None, current: str) -> list[ArgChange]:
    if previous is None:
        return []
    changes = []
    for kid, record in capture.kernels.items():
        before, after = _launch_node(capture, kid, previous), _launch_node(capture, kid, current)
        if before is None or after is None:
            continue
        changes.extend(_diff(record.name, before, after))
    return changes


def _launch_node(capture: Capture, kernel_id: str, compile_id: str) -> NodeRecord | None:
    """The kernel's first launch node in the earliest stage of `compile_id` that has its grid."""
    nodes = [n for n in nodes_of_kernel(capture, kernel_id, compile_id) if n.grid]
    # A compile of an earlier segment of a trace (analyse/segments.py) left its launch node here.
    nodes += earlier_nodes_of_kernel(capture, kernel_id, compile_id)
    nodes.sort(key=lambda n: STAGES.index(n.stage) if n.stage in STAGES else len(STAGES))
    return nodes[0] if nodes else None


def _diff(kernel: str, before: NodeRecord, after: NodeRecord) -> list[ArgChange]:
    changes = []
    if _grid_text(before.grid) != _grid_text(after.grid):
        changes.append(ArgChange(kernel, "grid", "grid", _grid_text(before.grid), _grid_text(after.grid)))
    pairs = (("constexpr", before.constexprs, after.constexprs), ("scalar", before.scalars, after.scalars))
    for kind, old, new in pairs:
        old, new = old or {}, new or {}
        for name in [*old, *(k for k in new if k not in old)]:
            if _arg_text(old, name) != _arg_text(new, name):
                changes.append(ArgChange(kernel, kind, name, _arg_text(old, name), _arg_text(new, name)))
    return changes


def _arg_text(args: dict[str, object], name: str) -> str:
    """An argument's value as said; "?" where the launch node does not hold it (a trace's first compile
    records no value for an int Dynamo specialised), never the word "None". A recorded value that is
    itself "?" is said quoted, so it is never taken for one not recorded."""
    if name not in args:
        return UNRECORDED
    text = str(args[name])
    return repr(text) if text == UNRECORDED else text


def _grid_text(grid: tuple[tuple[object, ...], ...] | None) -> str:
    if not grid:
        return "-"
    return ", ".join(dict.fromkeys("(" + ", ".join(str(v) for v in g) + ")" for g in grid))


def _recompile_hint(changes: tuple[ArgChange, ...]) -> str | None:
    constexpr = next((c for c in changes if c.kind == "constexpr" and c.guarded), None)
    if constexpr is None:
        constexpr = next((c for c in changes if c.kind == "constexpr"), None)
    if constexpr is not None:
        return (
            f"constexpr {constexpr.name} of {constexpr.kernel} takes a size-dependent value ({said(constexpr.before)} -> "
            f"{said(constexpr.after)}): a tl.constexpr is specialised, so torch guards on its value and compiles again "
            "for each new one. If it bounds tl.arange or sets a block shape it must stay a constexpr: round it to "
            "a few values (a power of two, capped) so few compiles happen; if it only selects a code path, pass it "
            "as a plain argument."
        )
    symbolic = next((c for c in changes if is_symbolic(c.after) and not is_symbolic(c.before)), None)
    if symbolic is not None:
        what = "grid" if symbolic.kind == "grid" else f"{symbolic.name}"
        return (
            f"{symbolic.kernel}'s {what} became symbolic ({said(symbolic.before)} -> {symbolic.after}): Dynamo compiled "
            "again for a dynamic size, and later sizes reuse this compile. Compile with dynamic=True (--dynamic) "
            "or torch._dynamo.mark_dynamic to start dynamic."
        )
    if any(c.kind == "grid" for c in changes):
        return "the grid depends on a specialised size: every new size compiles again; mark the size dynamic."
    return None


# --- decompiled frames -------------------------------------------------------------


def analyse_decompiled(capture: Capture) -> dict[str, tuple]:
    """--decompile: each compiled frame's transformed code, in compile order."""
    return {"decompiled": tuple(capture.decompiled)}
