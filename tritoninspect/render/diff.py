"""The terminal renderer of `tritoninspect diff`: two columns, changes marked, then graph diffs.

Nothing here imports torch: a saved diff renders anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from tritoninspect.model.diff_report import PARALLEL_NOTE, SECTIONS, Bench, DiffReport, GraphDiff, Row, Side, SideBench, Timing
from tritoninspect.render._console import console_text, make_console, print_blocks
from tritoninspect.render._safe import safe_record
from tritoninspect.render._widgets import heading, table

#: Marker for a row whose values differ (also readable without colour).
CHANGED = "≠"
#: Column widths: name, A, B, change; 100 columns with padding.
WIDTHS = (35, 28, 28, 6)
_CHANGED_STYLE = "bold yellow"
_SECTION_TITLES = {
    "graphs": "Graphs",
    "kernels": "Kernels (matched by id, then name)",
    "ops per stage": "Ops per stage (Graph.op_count; output code: calls)",
    "clones and copies": "Clones and copies (still cloned: after Inductor's re-inplacing)",
    "inductor kernels": "Inductor kernels in the output code",
    "neighbourhood": "Fusion neighbourhood",
    "graph totals": "Graph totals",
    "compile time": "Compile time (wall, per stage)",
    "torch.compile vs export": "torch.compile vs torch.export (a graph report against an export report)",
}


class DiffRenderer:
    """Renders a DiffReport for a human."""

    def __init__(self, width: int | None = None, color: bool | None = None) -> None:
        self.width = width
        self.color = color

    def render(self, diff: DiffReport) -> str:
        console = make_console(width=self.width, color=self.color)
        self.print_to(console, diff)
        return console_text(console)

    def print_to(self, console: Console, diff: DiffReport) -> None:
        diff = safe_record(diff)
        # The answer first: one summary line per variant, then each comparison in full.
        self._print_blocks(console, [_title(diff)], first=True)
        for pair in diff.comparisons:
            if len(diff.comparisons) > 1:
                self._print_blocks(console, [[heading(f"{pair.a.label} vs {pair.b.label}")]], first=False)
            blocks = [_header(pair), _bench(pair.bench, pair), *(_section(pair, s) for s in SECTIONS),
                      _graph_diffs(pair)]
            self._print_blocks(console, blocks, first=len(diff.comparisons) == 1)

    @staticmethod
    def _print_blocks(console: Console, blocks: Sequence[Sequence[RenderableType]], *, first: bool) -> None:
        def print_one(renderable: RenderableType) -> None:
            if isinstance(renderable, Text) and renderable.no_wrap:
                # Diff lines print whole, so they can be copied back out.
                console.print(renderable, no_wrap=True, overflow="ignore", crop=False)
            else:
                console.print(renderable)

        print_blocks(console, blocks, first=first, print_one=print_one)


# --- header ----------------------------------------------------------------------------------


def _title(diff: DiffReport) -> list[RenderableType]:
    """The tool line, then what each variant changed against A (reports before schema 3 have no summary)."""
    lines: list[RenderableType] = [Text.assemble((f"{diff.tool} {diff.tool_version}", "bold"), "  diff")]
    for pair in diff.comparisons:
        if pair.summary:
            lines.append(Text(pair.summary, style="bold"))
    if any(PARALLEL_NOTE in pair.notes for pair in diff.comparisons):
        lines.append(Text("no compile-time ratio: sides compiled in parallel; use -j1 for comparable compile times",
                          style="dim"))
    return lines


def _header(diff: DiffReport) -> list[RenderableType]:
    a, b = diff.a, diff.b
    lines: list[RenderableType] = [_side_line(a), _side_line(b)]
    lines += [Text.assemble((f"{s.label}  FAILED ", "bold red"), s.failure,
                            (" (the diff compares what was captured before it)", "dim"))
              for s in (a, b) if s.failure]
    lines += [_mode_line(s, both=a.mode == b.mode) for s in ((a,) if a.mode == b.mode else (a, b))]
    for describe in (_versions, _options):
        same = describe(a) == describe(b)
        lines.append(Text(describe(a) if same else f"{a.label}: {describe(a)}\n{b.label}: {describe(b)}",
                          style="dim"))
    lines += [Text(f"note: {note}", style="yellow") for note in diff.notes]
    lines.append(_summary(diff))
    return lines


def _side_line(side: Side) -> Text:
    how = "saved report, not recompiled" if side.saved else "captured in a fresh process"
    shown = side.source if side.saved else side.target
    return Text.assemble((f"{side.label}  ", "bold"), (shown, "bold"), (f"  ({how})", "dim"))


def _mode_line(side: Side, *, both: bool) -> Text:
    prefix = "" if both else f"{side.label} "
    if side.mode == "compile-only":
        detail = "CPU; kernels ran in Triton's interpreter; no GPU timings"
        return Text(f"{prefix}mode: compile-only ({detail})", style="bold black on yellow")
    return Text(f"{prefix}mode: {side.mode} ({side.device})", style="bold green" if side.mode == "gpu" else "bold")


def _versions(side: Side) -> str:
    return f"torch {side.torch} · triton {side.triton}"


def _options(side: Side) -> str:
    dynamic = "auto" if side.dynamic is None else ("yes" if side.dynamic else "no")
    backward = "yes" if side.backward else "no (forward with grad on)" if side.forward_grad else "no"
    parts = [f"stage: {side.stage}", f"dynamic: {dynamic}", f"backward: {backward}",
             f"inputs: {', '.join(side.inputs) or '-'}"]
    return " · ".join(parts)


def _summary(diff: DiffReport) -> Text:
    facts = f"{sum(r.changed for r in diff.facts)} of {len(diff.facts)} facts differ"
    graphs = f"{len(diff.changed_graphs)} of {len(diff.graph_diffs)} graphs differ after normalisation"
    style = _CHANGED_STYLE if diff.changed_rows or diff.changed_graphs else "green"
    return Text(f"{facts} · {graphs}", style=style)


# --- fact tables --------------------------------------------------------------------------------


def _section(diff: DiffReport, section: str) -> list[RenderableType]:
    rows = [r for r in diff.rows if r.section == section]
    if not rows:
        return []
    t = _two_columns(diff, last=f"{diff.b.label}/{diff.a.label}" if section == "compile time" else "")
    for row in rows:
        _add_fact(t, row)
    return [heading(_SECTION_TITLES.get(section, section)), t]


def _two_columns(diff: DiffReport, *, last: str = "") -> Table:
    name_a, name_b = _column_names(diff)
    t = table("", f"{diff.a.label} {name_a}", f"{diff.b.label} {name_b}", last)
    for column, width in zip(t.columns, WIDTHS):
        column.width = width
    return t


def _column_names(diff: DiffReport) -> tuple[str, str]:
    """The shortest names that tell the sides apart: RawNet, add_raw.py:Net, or the whole target."""
    a, b = (s.target or s.source for s in (diff.a, diff.b))
    for shorten in (_attr, _file_and_attr):
        if shorten(a) != shorten(b):
            return shorten(a), shorten(b)
    return a, b


def _attr(target: str) -> str:
    return target.rsplit(":", 1)[-1]


def _file_and_attr(target: str) -> str:
    return target.replace("\\", "/").rsplit("/", 1)[-1]


def _add_fact(t: Table, row: Row) -> None:
    if row.unit == "s":
        t.add_row(Text(row.name), Text(_value(row.a, "s")), Text(_value(row.b, "s")), Text(_ratio(row.a, row.b)))
        return
    style = _CHANGED_STYLE if row.changed else ""
    t.add_row(Text(row.name, style="bold" if row.changed else ""), Text(_value(row.a), style=style),
              Text(_value(row.b), style=style), Text(CHANGED if row.changed else "", style=_CHANGED_STYLE))


def _value(value: object, unit: str = "") -> str:
    if value is None:
        return "-"
    if unit == "s" and isinstance(value, (int, float)):
        return f"{value:.2f} s"
    return str(value)


def _ratio(a: object, b: object) -> str:
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or a == 0:
        return ""
    return f"×{b / a:.2f}"


# --- bench ----------------------------------------------------------------------------------------


def _bench(bench: Bench | None, diff: DiffReport) -> list[RenderableType]:
    if bench is None:
        return []
    title = heading("Run and compile time (--bench)")
    where = Text(f"{bench.mode}: {bench.device}", style="dim")
    t = _two_columns(diff, last=f"{diff.b.label}/{diff.a.label}")
    rows = _bench_rows(bench)
    for name, a, b, ratio in rows:
        t.add_row(Text(name), Text(a), Text(b), Text(ratio, style="bold" if ratio else ""))
    parts: list[RenderableType] = [title, where]
    if bench.note:
        parts.append(Text(bench.note, style="yellow"))
    else:
        parts.append(Text(bench.method, style="dim"))
    return [*parts, t]


def _bench_rows(bench: Bench) -> list[tuple[str, str, str, str]]:
    rows = []
    if bench.note is None:
        rows += [
            ("eager", _timing(bench.a.eager), _timing(bench.b.eager), _times(bench.ratios.get("eager"))),
            ("compiled", _timing(bench.a.compiled), _timing(bench.b.compiled), _times(bench.ratios.get("compiled"))),
            ("compiled, back to back", _pipelined(bench.a.compiled), _pipelined(bench.b.compiled),
             _times(bench.ratios.get("pipelined"))),
            ("speed-up eager/compiled", _speedup(bench.a), _speedup(bench.b), ""),
        ]
    rows.append(("compile (backend, capture)", _value(bench.a.compile_s, "s"), _value(bench.b.compile_s, "s"),
                 _times(bench.ratios.get("compile_s"))))
    if bench.note is None:
        rows.append(("first compiled call, cold", _value(bench.a.first_call_s, "s"),
                     _value(bench.b.first_call_s, "s"), _times(bench.ratios.get("first_call_s"))))
    return rows


def _timing(timing: Timing | None) -> str:
    if timing is None:
        return "-"
    return f"{_ms(timing.median_ms)} [{_ms(timing.p20_ms, unit=False)}–{_ms(timing.p80_ms, unit=False)}]"


def _pipelined(timing: Timing | None) -> str:
    return "-" if timing is None or timing.pipelined_ms is None else _ms(timing.pipelined_ms)


def _ms(value: float, *, unit: bool = True) -> str:
    text = f"{value:.4f}" if value < 1 else f"{value:.3f}" if value < 100 else f"{value:.1f}"
    return f"{text} ms" if unit else text


def _speedup(side: SideBench) -> str:
    if side.eager is None or side.compiled is None or side.compiled.median_ms == 0:
        return "-"
    return f"×{side.eager.median_ms / side.compiled.median_ms:.2f}"


def _times(ratio: float | None) -> str:
    return "" if ratio is None else f"×{ratio:.2f}"


# --- graph diffs ------------------------------------------------------------------------------------


def _graph_diffs(diff: DiffReport) -> list[RenderableType]:
    if not diff.graph_diffs:
        return []
    note = Text("names normalised (buffers, args, node and kernel suffixes, side-table indices, source comments); "
                "output code: kernel definitions and call() only", style="dim")
    parts: list[RenderableType] = [heading("Graph diffs", len(diff.changed_graphs)), note,
                                   _graph_list(diff.graph_diffs)]
    for graph in diff.changed_graphs:
        parts.append(Text())
        parts.append(_diff_text(graph.lines))
    return parts


def _graph_list(graphs: Sequence[GraphDiff]) -> Text:
    text = Text()
    for i, g in enumerate(graphs):
        if i:
            text.append("\n")
        same = g.compile_id_a == g.compile_id_b
        ids = g.compile_id_a if same else f"{g.compile_id_a or 'none'} vs {g.compile_id_b or 'none'}"
        name = g.stage if not g.part or g.stage.endswith(g.part) else f"{g.stage} {g.part}"
        text.append(f"{name} [{ids}]: ")
        text.append("differs" if g.changed else "same", style=_CHANGED_STYLE if g.changed else "green")
    return text


def _diff_text(lines: Sequence[str]) -> Text:
    text = Text(no_wrap=True, overflow="ignore")
    for i, line in enumerate(lines):
        if i:
            text.append("\n")
        text.append(line, style=_line_style(line))
    return text


def _line_style(line: str) -> str:
    if line.startswith(("---", "+++")):
        return "bold"
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("-"):
        return "red"
    if line.startswith("+"):
        return "green"
    return ""
