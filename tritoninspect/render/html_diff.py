"""The HTML diff: every variant against the first, side by side, differences marked
(`tritoninspect diff A B [C ...] -o diff.html`).

The diff report (`DiffReport`) holds the compared facts and graph diffs of A with B, and in
`others` of A with each further variant; the pictures need each side's own report, so the page
is drawn from a `DiffPage`: the diff plus the reports, in side order. Without the reports (a
bare `DiffReport`) the page has the tables and graph diffs only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath

from tritoninspect.analyse.pictures import Picture, kernel_pictures
from tritoninspect.model.diff_report import SECTIONS, DiffReport, GraphDiff, Row, Side, Timing
from tritoninspect.render._html import anchor, banner, diff_block, esc, grid_table, legend, page
from tritoninspect.render.html import graph_block, highlight_within_budget, kernel_figure, linked_lines
from tritoninspect.render.stage import kernel_line_pattern
from tritoninspect.model.report import Report

__all__ = ["DiffPage", "Differences", "FactRow", "differences", "edge_signatures", "fact_rows",
           "node_signatures", "render_diff_html"]

#: Numbers Inductor and FX append to names (`buf3`, `mul_1`, `add_kernel_0`): not a difference.
_NUMBERED = re.compile(r"(?<=[A-Za-z_])_?\d+\b")
#: How a value that differs from A's is marked: a sign as well as a colour (readable in print).
_DIFFERS = "≠ "


@dataclass(frozen=True)
class DiffPage:
    """What the HTML diff is drawn from: the diff and each side's report, in side order."""

    diff: DiffReport
    reports: tuple[Report, ...] = ()

    def _repr_html_(self) -> str | None:
        """Jupyter: the HTML diff with each side's pictures, in a frame of its own (render/notebook.py)."""
        from tritoninspect.model.notebook import page_html

        return page_html(self)


def render_diff_html(document: DiffPage | DiffReport) -> str:
    """The whole diff page: A against every further variant."""
    view = document if isinstance(document, DiffPage) else DiffPage(document)
    diff, sides = view.diff, page_sides(view.diff)
    body = [_notes(diff), _rows(diff, sides), _kernels(view, sides), _graph_diffs(diff), _codes(view, sides)]
    nav = [("summary", "Summary"), ("kernels", "Kernels side by side"), ("graph-diffs", "Graph diffs"),
           ("code", "Each side's code")]
    title = "tritoninspect diff · " + " vs ".join(s.source for s in sides)
    return page(title, _header(diff, sides), body, nav=nav)


def page_sides(diff: DiffReport) -> tuple[Side, ...]:
    """A, then each variant compared with it: B, C, ..."""
    return (diff.a, *(pair.b for pair in diff.comparisons))


def _short(side: Side) -> str:
    """The side's file name (`triton_op.json`, `model.py:Net`): its column head next to the label."""
    return PurePath(side.source.replace("\\", "/")).name or side.source


def _header(diff: DiffReport, sides: tuple[Side, ...]) -> str:
    cards = "".join(
        f'<div><div class="side-head">{esc(s.label)}: {esc(s.source)}</div>'
        f'<div class="meta">{esc(s.target)} · torch {esc(s.torch)} · triton {esc(s.triton)} · stage {esc(s.stage)}'
        + (f" · inputs {esc(', '.join(s.inputs))}" if s.inputs else "") + (" · saved report" if s.saved else "")
        + f"</div>{banner(s.mode, s.device)}"
        + (f'<div class="banner failed">{esc(s.failure)}</div>' if s.failure else "") + "</div>"
        for s in sides)
    return (f'<header class="top"><h1>diff: {esc(sides[0].label)} vs {", ".join(esc(s.label) for s in sides[1:])}</h1>'
            f"{_summaries(diff)}"
            f'<div class="side-by-side" style="--cols:{len(sides)}">{cards}</div></header>')


def _summaries(diff: DiffReport) -> str:
    """One line per variant: what it changed against A (diff reports before schema 3 have none)."""
    lines = "".join(f"<li>{esc(pair.summary)}</li>" for pair in diff.comparisons if pair.summary)
    return f'<ul class="summaries">{lines}</ul>' if lines else ""


def _notes(diff: DiffReport) -> str:
    notes = dict.fromkeys(n for pair in diff.comparisons for n in pair.notes)
    return "".join(f'<div class="hint"><b>note:</b> {esc(n)}</div>' for n in notes)


# --- compared facts: a column per side ------------------------------------------------------


@dataclass(frozen=True)
class FactRow:
    """One compared fact across all sides: A's value, then each variant's and whether it differs from A's."""

    section: str
    name: str
    unit: str
    a: object
    #: Per variant (B, C, ...): its value; None where that comparison has no such row.
    values: tuple[object, ...]
    changed: tuple[bool, ...]
    #: Per variant: whether its comparison holds the row at all.
    present: tuple[bool, ...]

    @property
    def differs(self) -> bool:
        return any(self.changed)


def fact_rows(diff: DiffReport) -> list[FactRow]:
    """The rows of every comparison merged by (section, name), in section order."""
    pairs = diff.comparisons
    found: dict[tuple[str, str], list[Row | None]] = {}
    for i, pair in enumerate(pairs):
        for row in pair.rows:
            found.setdefault((row.section, row.name), [None] * len(pairs))[i] = row
    order = {s: n for n, s in enumerate(SECTIONS)}
    keys = sorted(found, key=lambda k: order.get(k[0], len(order)))  # stable: first seen first within a section
    return [_fact(key, found[key]) for key in keys]


def _fact(key: tuple[str, str], rows: list[Row | None]) -> FactRow:
    first = next(r for r in rows if r is not None)
    return FactRow(key[0], key[1], first.unit, first.a, tuple(r.b if r else None for r in rows),
                   tuple(bool(r and r.changed) for r in rows), tuple(r is not None for r in rows))


def _rows(diff: DiffReport, sides: tuple[Side, ...]) -> str:
    """The compared facts: those that differ first, then all of them (collapsed); the compile times
    (measurements, not counted as facts: `Row.is_fact`) in a table of their own."""
    merged = fact_rows(diff)
    facts = [f for f in merged if f.unit != "s"]
    header = ("section", "what", *(f"{s.label} · {_short(s)}" for s in sides))
    changed = [_fact_cells(f, sides) for f in facts if f.differs]
    every = [_fact_cells(f, sides) for f in facts]
    marks = {i for i, f in enumerate(facts) if f.differs}
    differ = grid_table(header, changed) if changed else "<p>No compared fact differs.</p>"
    per_side = ""
    if len(sides) > 2:
        counts = [f"{s.label}: {sum(f.changed[i] for f in facts)}" for i, s in enumerate(sides[1:])]
        per_side = f'<p class="muted">facts that differ from A\'s, per variant: {esc(" · ".join(counts))}</p>'
    return (f'<section id="summary"><h2>Summary: {len(changed)} of {len(facts)} compared facts differ</h2>'
            f"{per_side}{differ}<details><summary>all {len(every)} compared facts</summary>"
            f"{grid_table(header, every, changed=marks)}</details>{_timings(merged, header, sides)}"
            f"{_bench(diff, sides)}</section>")


def _timings(merged: list[FactRow], header: tuple[str, ...], sides: tuple[Side, ...]) -> str:
    rows = [_fact_cells(f, sides) for f in merged if f.unit == "s"]
    if not rows:
        return ""
    return ('<details><summary>compile times (wall; measurements, compared as a ratio to A, not counted as '
            f"facts)</summary>{grid_table(header, rows)}</details>")


def _fact_cells(f: FactRow, sides: tuple[Side, ...]) -> list[str]:
    cells = [esc(f.section), esc(f.name), _value(f.a, f.unit)]
    for side, value, changed, present in zip(sides[1:], f.values, f.changed, f.present):
        if not present:
            cells.append(f'<span class="muted" title="A vs {esc(side.label)} has no such row">-</span>')
        elif changed:
            cells.append(f'<span class="ne" title="differs from A">{esc(_DIFFERS)}{_value(value, f.unit)}</span>')
        else:
            cells.append(_value(value, f.unit) + _ratio(f.a, value, f.unit))
    return cells


def _value(value: object, unit: str) -> str:
    if value is None:
        return '<span class="muted">-</span>'
    if isinstance(value, float):
        return esc(f"{value:.3g}{unit}")
    if isinstance(value, (list, tuple)):
        return esc(", ".join(map(str, value)) or "none")
    return esc(f"{value}{unit}")


def _ratio(a: object, b: object, unit: str) -> str:
    """Measurements are compared as a ratio to A's (never marked as differences)."""
    if unit != "s" or not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or not a:
        return ""
    return f' <span class="muted">(×{b / a:.2f})</span>'


def _bench(diff: DiffReport, sides: tuple[Side, ...]) -> str:
    pairs = diff.comparisons
    benches = [pair.bench for pair in pairs]
    first = next((b for b in benches if b is not None), None)
    if first is None:
        return ""
    header = ["", sides[0].label]
    for side in sides[1:]:
        header += [side.label, f"{side.label}/A"]
    rows = []
    for name in ("eager", "compiled"):
        row = [esc(name), _ms(getattr(first.a, name))]
        for bench in benches:
            ratio = bench.ratios.get(name) if bench else None
            row += [_ms(getattr(bench.b, name) if bench else None), esc(f"{ratio:.2f}×" if ratio else "-")]
        rows.append(row)
    notes = dict.fromkeys(b.note for b in benches if b is not None and b.note)
    note = "".join(f'<p class="muted">{esc(n)}</p>' for n in notes)
    return "<h3>Timings (median)</h3>" + grid_table(header, rows) + note


def _ms(timing: Timing | None) -> str:
    return esc(f"{timing.median_ms:.4f} ms" if timing is not None else "-")


# --- pictures side by side --------------------------------------------------------------


def node_signatures(picture: Picture) -> dict[str, str]:
    """Node id -> what the node is, without the numbers names carry (for pairing across sides)."""
    return {n.id: f"{n.kind}:{_NUMBERED.sub('', n.label)}" for n in picture.nodes}


def edge_signatures(picture: Picture) -> list[tuple[str, str, str]]:
    """Per edge (in order): what it joins and how, by its ends' node signatures."""
    nodes = node_signatures(picture)
    return [(nodes.get(e.src, e.src), nodes.get(e.dst, e.dst), e.kind) for e in picture.edges]


@dataclass(frozen=True)
class Differences:
    """What one side's picture has that its references lack: node id -> and edge index -> the tooltip."""

    nodes: dict[str, str]
    edges: dict[int, str]

    def __len__(self) -> int:
        return len(self.nodes) + len(self.edges)


def differences(mine: Picture, references: Mapping[str, Picture]) -> Differences:
    """Nodes of `mine` with no counterpart in some reference picture (keyed by its side's label), and edges
    between nodes a reference has too that it does not join that way (an edge to a node the reference
    lacks is not marked again: its node is)."""
    nodes, edges = node_signatures(mine), edge_signatures(mine)
    node_missing: dict[str, list[str]] = {}
    edge_missing: dict[int, list[str]] = {}
    for label, ref in references.items():
        ref_nodes, ref_edges = set(node_signatures(ref).values()), set(edge_signatures(ref))
        for node, sig in nodes.items():
            if sig not in ref_nodes:
                node_missing.setdefault(node, []).append(label)
        for i, sig in enumerate(edges):
            if sig[0] in ref_nodes and sig[1] in ref_nodes and sig not in ref_edges:
                edge_missing.setdefault(i, []).append(label)
    return Differences({n: f"not in {', '.join(ls)}" for n, ls in node_missing.items()},
                       {i: f"{', '.join(ls)} does not join these two this way" for i, ls in edge_missing.items()})


def _kernels(view: DiffPage, sides: tuple[Side, ...]) -> str:
    if not view.reports:
        return ('<section id="kernels"><h2>Kernels side by side</h2><p class="muted">This diff was rendered '
                "without its sides' reports: no pictures.</p></section>")
    names = list(dict.fromkeys(k.name for r in view.reports for k in r.kernels))
    blocks = "".join(_kernel_row(view, sides, name, n) for n, name in enumerate(names))
    against = ("the other variant's picture" if len(sides) == 2 else
               "A's picture (in A's: some other variant's)")
    return (f'<section id="kernels"><h2>Kernels side by side</h2>{legend()}<p class="muted">Nodes marked '
            f'<b class="ne">purple</b> have no counterpart in {against}; a purple edge joins two nodes both have, '
            f"in a way the other does not.</p>{blocks}</section>")


def _kernel_row(view: DiffPage, sides: tuple[Side, ...], name: str, number: int) -> str:
    per_side = []
    for report in view.reports:
        kernel = report.kernel(name)
        per_side.append(kernel_pictures(report, kernel) if kernel is not None else [])
    keyed = [_keyed(pictures) for pictures in per_side]
    keys = list(dict.fromkeys(key for pictures in keyed for key in pictures))
    rows = []
    for k, key in enumerate(keys):
        found = [pictures.get(key) for pictures in keyed]
        cells = [_cell(view, sides, found, i, f"d{number}k{k}s{i}") for i in range(len(found))]
        rows.append(f'<div class="side-by-side" style="--cols:{len(found)}">{"".join(cells)}</div>')
    if not rows:
        rows.append('<p class="muted">No picture on any side.</p>')
    return (f'<article class="kernel" id="{anchor(f"dk{number}", name)}" data-search="{esc(name)}"><h3>{esc(name)}</h3>'
            + "".join(rows) + "</article>")


def _keyed(pictures: list[Picture]) -> dict[tuple[str, str, str, int], Picture]:
    """Pictures keyed for pairing across sides: frame, stage, part and their rank among those
    (the nth launch of the kernel in that graph), since compile ids and node names may differ."""
    keyed: dict[tuple[str, str, str, int], Picture] = {}
    for p in pictures:
        frame = p.compile_id.split("/")[0]
        rank = sum(1 for k in keyed if k[:3] == (frame, p.stage, p.part))
        keyed[(frame, p.stage, p.part, rank)] = p
    return keyed


def _references(sides: Sequence[Side], found: Sequence[Picture | None], i: int) -> dict[str, Picture]:
    """What side `i`'s picture is compared with: A's for a variant; every variant's for A."""
    chosen = range(1, len(found)) if i == 0 else (0,)
    return {sides[j].label: p for j in chosen if (p := found[j]) is not None}


def _cell(view: DiffPage, sides: Sequence[Side], found: list[Picture | None], i: int, pid: str) -> str:
    picture = found[i]
    head = f'<div class="side-head">{esc(sides[i].label)} <span class="muted">{esc(_short(sides[i]))}</span></div>'
    if picture is None:
        return f'<div>{head}<p class="muted">not in this variant</p></div>'
    marks = differences(picture, _references(sides, found, i))
    figure = kernel_figure(view.reports[i], picture, pid, prefix=f"s{i}-", marked=marks.nodes,
                           marked_edges=marks.edges)
    count = f'<span class="pill changed">{len(marks)} different</span>' if len(marks) else ""
    return f"<div>{head}{count}{figure}</div>"


# --- graph diffs and each side's code --------------------------------------------------


def _graph_diffs(diff: DiffReport) -> str:
    pairs = diff.comparisons
    total = sum(len(pair.graph_diffs) for pair in pairs)
    if not total:
        return '<section id="graph-diffs"><h2>Graph diffs</h2><p>No graphs to compare.</p></section>'
    changed = sum(len(pair.changed_graphs) for pair in pairs)
    blocks = []
    for pair in pairs:
        if len(pairs) > 1:
            blocks.append(f'<h3 id="{anchor("graphs", pair.a.label, pair.b.label)}">{esc(pair.a.label)} vs '
                          f"{esc(pair.b.label)} ({len(pair.changed_graphs)} of {len(pair.graph_diffs)} changed)</h3>")
        blocks += [_graph_diff(g) for g in pair.graph_diffs]
    return f'<section id="graph-diffs"><h2>Graph diffs ({changed} of {total} changed)</h2>{"".join(blocks)}</section>'


def _graph_diff(g: GraphDiff) -> str:
    ids = f"[{g.compile_id_a or '-'}] vs [{g.compile_id_b or '-'}]"
    state = '<span class="pill changed">changed</span>' if g.changed else '<span class="muted">same</span>'
    body = diff_block(g.lines) if g.lines else '<p class="muted">identical after renaming</p>'
    opened = " open" if g.changed else ""
    return (f"<details{opened}><summary>{esc(g.stage)} {esc(g.part)} {esc(ids)} {state}</summary>"
            f"{body}</details>")


def _codes(view: DiffPage, sides: tuple[Side, ...]) -> str:
    if not view.reports:
        return ""
    columns = []
    for i, (side, report) in enumerate(zip(sides, view.reports)):
        pattern = kernel_line_pattern(report)
        highlighted, anchors = highlight_within_budget(report), linked_lines(report)
        blocks = "".join(graph_block(report, g, pattern, prefix=f"s{i}-", highlight=g in highlighted,
                                     anchors=anchors.get(g, set())) for g in range(len(report.graphs)))
        columns.append(f'<div><div class="side-head">{esc(side.label)}: {esc(side.source)}</div>{blocks}</div>')
    return (f'<section id="code"><h2>Each side\'s graphs and code</h2><div class="side-by-side" '
            f'style="--cols:{len(sides)}">{"".join(columns)}</div></section>')
