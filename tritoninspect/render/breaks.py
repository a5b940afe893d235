"""`tritoninspect breaks` as text: graph breaks, recompiles and decompiled frames.

Reads only the report (no torch), so a saved report re-renders anywhere.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rich.console import RenderableType
from rich.padding import Padding
from rich.text import Text

from tritoninspect.render import _format as fmt
from tritoninspect.render._console import console_text, make_console
from tritoninspect.render._failure import failure_section, recompile_limit_section
from tritoninspect.render._safe import safe_record
from tritoninspect.render._widgets import ALERT, heading
from tritoninspect.render.terminal import header, probe_place
from tritoninspect.model.report import (
    DEVICE_PROBE_MEANING,
    ArgChange,
    DecompiledFrame,
    GraphBreak,
    Recompile,
    Report,
    said,
)

#: Indent of everything under a break's or recompile's first line.
INDENT = "   "
_INSTALLED_RE = re.compile(r".*[/\\](?:site|dist)-packages[/\\]")


class BreaksRenderer:
    """The breaks view of a report: each break with its kernel, code and hint."""

    def __init__(self, width: int | None = None, color: bool | None = None) -> None:
        self.width = width
        self.color = color

    def render(self, report: Report) -> str:
        report = safe_record(report)
        console = make_console(width=self.width, color=self.color)
        cwd = Path.cwd()
        sections = [header(report, cwd), failure_section(report, cwd), _summary(report), _breaks(report, cwd), _eager(report),
                    _recompiles(report, cwd), _risks(report), recompile_limit_section(report, cwd), _decompiled(report, cwd), _diagnostics(report)]
        for i, section in enumerate(s for s in sections if s):
            if i:
                console.print()
            for renderable in section:
                console.print(renderable)
        return console_text(console)


def render_breaks(report: Report, *, width: int | None = None, color: bool | None = None) -> str:
    """The `tritoninspect breaks` text for `report`."""
    return BreaksRenderer(width=width, color=color).render(report)


def _summary(report: Report) -> list[RenderableType]:
    graphs = len({g.compile_id for g in report.graphs if g.stage == "dynamo"})
    breaks = report.graph_breaks
    counts = {"frame skipped": sum(b.frame_skipped for b in breaks),
              "could not resume": sum(b.skipped_rest for b in breaks)}
    notes = [f"{n} {what}" for what, n in counts.items() if n]
    count = f"graph breaks: {len(breaks)}" + (f" ({', '.join(notes)})" if notes else "")
    limits = f" · recompile limit hit: {len(report.recompile_limits)}" if report.recompile_limits else ""
    return [Text(f"Dynamo graphs: {graphs} · {count} · recompiles: {len(report.recompiles)}{limits}")]


# --- graph breaks -------------------------------------------------------------------


def break_groups(report: Report) -> list[list[GraphBreak]]:
    """Consecutive breaks at one place, together: Dynamo often logs one cause
    several times (a retry, a follow-on it cannot resume from, the launcher's
    own frame, triton's launch wrapper) and they read best as one finding."""
    groups: list[list[GraphBreak]] = []
    for b in report.graph_breaks:
        if groups and _group_key(groups[-1][0]) == _group_key(b):
            groups[-1].append(b)
        else:
            groups.append([b])
    return groups


def _group_key(b: GraphBreak) -> tuple:
    return (b.file, b.line) if b.file else (b.compile_id, _headline(b))


def _headline(b: GraphBreak) -> str:
    return b.title()


def _breaks(report: Report, cwd: Path) -> list[RenderableType]:
    if not report.graph_breaks:
        return [Text("No graph breaks.", style="green")]
    groups = break_groups(report)
    title = heading("Graph breaks", len(report.graph_breaks))
    if len(groups) < len(report.graph_breaks):
        title.append(f" at {fmt.plural(len(groups), 'place')}", style="bold")
    out: list[RenderableType] = [title]
    for number, group in enumerate(groups, 1):
        out.append(Text())
        out.extend(break_block(number, group, cwd))
    return out


def break_block(number: int, group: list[GraphBreak], cwd: Path) -> list[RenderableType]:
    """One place: headline, where, kernel, docs, code, each record Dynamo logged, hint, reason."""
    b = group[0]
    # One place, several causes (an HF model's call line: a disabled function's break, and a frame skipped on
    # `Missing tp_iternext`): the headline is the first's, and says the others are listed below.
    others = len(dict.fromkeys(_headline(x) for x in group)) - 1
    head = _headline(b) + (f" (and {fmt.plural(others, 'other cause')}, below)" if others else "")
    lines: list[RenderableType] = [_HangingText(Text.assemble((f"{number}. ", "bold"), (head, "bold")), 3)]
    lines.append(_indented(_where(b, cwd)))
    probes = list(dict.fromkeys(x.device_probe for x in group if x.device_probe))
    if probes:
        places = ", ".join(probe_place(p, cwd) for p in probes)
        lines.append(_paragraph(Text(f"{DEVICE_PROBE_MEANING} (torch.cuda.is_available() answered False at "
                                     f"{places}, while Dynamo traced it)", style=ALERT)))
    lines.extend(_kernel_lines(group))
    if b.gb_id or b.doc_url:
        lines.append(_indented(" ".join(x for x in (b.gb_id, b.doc_url) if x), "dim"))
    lines.extend(_code(b))
    lines.extend(_records(group))
    lines.extend(_hints(group))
    lines.extend(_reasons(group))
    return lines


def _hint_numbers(group: list[GraphBreak]) -> dict[tuple[str, str | None], int]:
    """Each distinct (hint, source) of a place, numbered from 1 in the order Dynamo logged them."""
    distinct = dict.fromkeys((x.hint, x.hint_source) for x in group if x.hint)
    return {key: n for n, key in enumerate(distinct, 1)}  # type: ignore[misc]


def _hints(group: list[GraphBreak]) -> list[RenderableType]:
    """Each distinct hint once, with where it comes from; numbered when there are several,
    and the records above say which applies to each."""
    numbers = _hint_numbers(group)
    library = next((x.library for x in group if x.library), None)
    lines: list[RenderableType] = []
    if library and numbers:
        # The hint names a change to the code that launches the kernel: here the library's, not the user's.
        lines.append(_paragraph(Text(f"the break is in {library}'s code (installed library, not yours): the change "
                                     "below is for its maintainers; `tritoninspect graph` advises what you can do "
                                     "from your side", style="cyan")))
    for (hint, source), n in numbers.items():
        label = f"hint {n}: " if len(numbers) > 1 else "hint: "
        lines.append(_paragraph(Text.assemble((label, "bold cyan"), hint)))
        if source:
            lines.append(_paragraph(Text(f"from {source}", style="dim")))
    return lines


def _reasons(group: list[GraphBreak]) -> list[RenderableType]:
    """Each distinct cause's reason once (records differ in how Dynamo handled it)."""
    reasons: dict[str, str] = {}
    for x in group:
        reasons.setdefault(_core(shown_reason(x.reason)), shown_reason(x.reason))
    lines: list[RenderableType] = []
    for reason in reasons.values():
        lines.append(_indented("reason:", "dim"))
        lines.extend(_paragraph(Text(line, style="dim"), 5) for line in reason.splitlines() if line.strip())
    return lines


def _records(group: list[GraphBreak]) -> list[RenderableType]:
    """What Dynamo did each time it logged this break, by compile id."""
    if len(group) == 1 and not (group[0].frame_skipped or group[0].skipped_rest or group[0].library_frame):
        return []
    lines: list[RenderableType] = [_indented(f"Dynamo logged it {fmt.plural(len(group), 'time')}:")]
    numbers = _hint_numbers(group)
    for b in group:
        text = Text(f"[{b.trace_id}]")  # as torch writes it: a restarted attempt's log is `[1/0_1]`
        if _headline(b) != _headline(group[0]):
            text.append(f" {_headline(b)}" + (f" ({b.gb_id})" if b.gb_id else ""))
        if b.library_frame:
            text.append(f" inside {library_location(b.library_frame)}")
        if b.frame_skipped:
            text.append(" · frame skipped: this whole frame ran eagerly, no graph", style=ALERT)
        elif b.skipped_rest:
            text.append(" · could not resume: compiled up to here, the rest of the frame ran eagerly", style=ALERT)
        if len(numbers) > 1 and b.hint:
            separator = " · " if text.plain != f"[{b.trace_id}]" else " "
            text.append(f"{separator}hint {numbers[(b.hint, b.hint_source)]}", style="cyan")
        lines.append(_paragraph(text, len(INDENT) + 2))
    return lines


#: torch's per-variable origin listing: internal, and long.
_ATTRIBUTION = "\nStack variable source attribution:"
_MORE_DETAILS = "For more details about this graph break"


def shown_reason(reason: str) -> str:
    """The reason for the terminal: without the documentation trailer (shown as
    a link) and torch's variable-origin listing. JSON and --dump keep it whole."""
    text = reason.split(_ATTRIBUTION, 1)[0]
    kept = [ln for ln in text.splitlines() if _MORE_DETAILS not in ln and ln.strip() != "Developer debug context:"]
    return "\n".join(kept).strip()


def _core(reason: str) -> str:
    """A reason without the note on how Dynamo handled it, to show each cause once: without the
    "Graph break encountered:" preamble of a skipped frame, and without the "Higher Order Operator:"
    line Dynamo adds when the break is inside one (an autograd.Function's forward), which the
    same cause logged from the outer frame lacks."""
    core = reason.split("Graph break encountered:", 1)[-1]
    return "\n".join(ln for ln in core.strip().splitlines() if not ln.strip().startswith("Higher Order Operator:"))


def _indented(text: str, style: str = "") -> Text:
    return Text(INDENT + text, style=style)


def _paragraph(text: Text, indent: int = len(INDENT)) -> RenderableType:
    return Padding(text, (0, 0, 0, indent))


class _HangingText:
    """A Text whose wrapped lines start under the text, not at the margin (numbered headlines)."""

    def __init__(self, text: Text, indent: int) -> None:
        self.text, self.indent = text, indent

    def __rich_console__(self, console: Any, options: Any) -> Any:
        width = max(options.max_width - self.indent, 10)
        lines = self.text.wrap(console, width)
        for i, line in enumerate(lines):
            yield Text(" " * self.indent) + line if i else line


def _where(b: GraphBreak, cwd: Path) -> str:
    func = _function(b)
    return "at " + fmt.location(b.file, b.line, cwd=cwd) + (f" in {func}" if func else "")


def _function(b: GraphBreak) -> str | None:
    prefix = f"{b.file}:{b.line} in "
    return next((f[len(prefix):] for f in reversed(b.user_stack) if f.startswith(prefix)), None)


def library_location(frame: str) -> str:
    """An installed library's frame from its package down: `triton/runtime/jit.py:370 in <lambda>`."""
    return _INSTALLED_RE.sub("", frame)


def _kernel_lines(group: list[GraphBreak]) -> list[RenderableType]:
    b = group[0]
    lines: list[RenderableType] = []
    if b.kernel:
        lines.append(Text.assemble(INDENT, "kernel: ", (b.kernel, "bold"), f" ({b.kernel_relation})"))
    eager = list(dict.fromkeys(k for x in group for k in x.eager_kernels))
    if eager:
        lines.append(Text.assemble(INDENT, "ran eagerly because of it: ", (", ".join(eager), "red")))
    return lines


def _code(b: GraphBreak) -> list[RenderableType]:
    if not b.context or b.context_start is None:
        return []
    width = len(str(b.context_start + len(b.context) - 1))
    lines: list[RenderableType] = []
    for i, source in enumerate(b.context):
        number = b.context_start + i
        mark = ">" if number == b.line else " "
        style = "bold" if number == b.line else "dim"
        lines.append(Text(f"{INDENT}{mark} {number:>{width}} | {source}", style=style))
    return lines


# --- eager kernels ------------------------------------------------------------------


def _eager(report: Report) -> list[RenderableType]:
    """Kernels launched outside every compiled graph, and the breaks they are tied to."""
    rows = []
    for kernel in report.kernels:
        launches = sum(o.launches or 0 for o in kernel.occurrences if o.entry == "eager" and o.stage == "runtime")
        if not launches:
            continue
        tied = [str(i) for i, group in enumerate(break_groups(report), 1)
                if any(kernel.name in (b.kernel, *b.eager_kernels) for b in group)]
        why = f"break {', '.join(tied)}" if tied else "no graph break tied to it: a disabled region, or a break not tied to this kernel"
        count = fmt.plural(launches, "launch", "launches")
        rows.append(Text(f"{kernel.name}: {count} outside compiled graphs ({why})"))
    if not rows:
        return []
    return [heading("Kernels that ran eagerly", len(rows)), *rows]


# --- recompiles ---------------------------------------------------------------------


def _recompiles(report: Report, cwd: Path) -> list[RenderableType]:
    if not report.recompiles:
        return []
    out: list[RenderableType] = [heading("Recompiles", len(report.recompiles))]
    for r in report.recompiles:
        out.extend(recompile_block(r))
    return out


def _risks(report: Report) -> list[RenderableType]:
    """Guards on sizes the kernels' launches added: a later call that fails one recompiles."""
    guards = [(k.name, g) for k in report.kernels for g in k.guards]
    if not guards:
        return []
    out: list[RenderableType] = [heading("Recompile risks: guards the kernels' launches added", len(guards))]
    out += [_paragraph(Text.assemble((name, "bold"), ": ", fmt.guard_text(g))) for name, g in guards]
    return out


def recompile_block(r: Recompile) -> list[RenderableType]:
    """A recompile: the failed guard, the kernel arguments that changed, a hint."""
    after = f" after {r.previous}" if r.previous else ""
    guard = r.guard or fmt.first_line(r.reason)
    head = Text.assemble((f"[{r.compile_id}]", "bold"), f"{after} · guard failed: ", guard)
    lines: list[RenderableType] = [_HangingText(head, len(INDENT))]
    for kernel in dict.fromkeys(c.kernel for c in r.changes):
        changes = " · ".join(_change_text(c) for c in r.changes if c.kernel == kernel)
        lines.append(_paragraph(Text.assemble((kernel, "bold"), ": ", changes)))
    if r.hint:
        lines.append(_paragraph(Text.assemble(("hint: ", "bold cyan"), r.hint)))
    return lines


def _change_text(c: ArgChange) -> str:
    name = "grid" if c.kind == "grid" else f"{c.kind} {c.name}"
    guarded = " (the guarded value)" if c.guarded else ""
    return f"{name} {said(c.before)} -> {said(c.after)}{guarded}"


# --- decompiled frames -------------------------------------------------------------


def _decompiled(report: Report, cwd: Path) -> list[RenderableType]:
    if not report.decompiled:
        return []
    out: list[RenderableType] = [
        heading("Decompiled frames", len(report.decompiled)),
        Text("Dynamo's transformed code per frame (depyf): __compiled_fn_* run the graphs, "
             "__resume_at_* continue after a graph break", style="dim"),
    ]
    for frame in report.decompiled:
        out.extend(decompiled_block(frame, cwd))
    return out


def decompiled_block(frame: DecompiledFrame, cwd: Path) -> list[RenderableType]:
    where = fmt.location(frame.file, frame.line, cwd=cwd)
    lines: list[RenderableType] = [Text.assemble((f"[{frame.compile_id}] {frame.function}", "bold"), f"  {where}")]
    lines.extend(Text(INDENT + line) for line in frame.source.rstrip().splitlines())
    return lines


def _diagnostics(report: Report) -> list[RenderableType]:
    if not report.diagnostics:
        return []
    lines: list[RenderableType] = [heading("Diagnostics", len(report.diagnostics))]
    lines += [Text(f"{d.severity} {d.source}: {fmt.first_line(d.message)}") for d in report.diagnostics]
    return lines

