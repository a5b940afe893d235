"""The HTML diff: variants side by side, differences marked (`tritoninspect diff A B -o diff.html`).

The diff report (`DiffReport`) holds the compared facts and graph diffs; the pictures need
each side's own report, so the page is drawn from a `DiffPage`: the diff plus the reports
(any number of sides; two today). Without the reports (a bare `DiffReport`) the page has
the tables and graph diffs only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tritoninspect.analyse.pictures import Picture, kernel_pictures
from tritoninspect.diff_report import DiffReport, Row, Side
from tritoninspect.render._html import anchor, banner, diff_block, esc, grid_table, legend, page
from tritoninspect.render.html import graph_block, highlight_within_budget, kernel_figure, linked_lines
from tritoninspect.render.stage import kernel_line_pattern
from tritoninspect.report import Report

__all__ = ["DiffPage", "node_signatures", "render_diff_html"]

#: Numbers Inductor and FX append to names (`buf3`, `mul_1`, `add_kernel_0`): not a difference.
_NUMBERED = re.compile(r"(?<=[A-Za-z_])_?\d+\b")


@dataclass(frozen=True)
class DiffPage:
    """What the HTML diff is drawn from: the diff and each side's report, in side order."""

    diff: DiffReport
    reports: tuple[Report, ...] = ()


def render_diff_html(document: DiffPage | DiffReport) -> str:
    """The whole diff page."""
    view = document if isinstance(document, DiffPage) else DiffPage(document)
    diff, sides = view.diff, (view.diff.a, view.diff.b)
    body = [_notes(diff), _rows(diff), _kernels(view, sides), _graph_diffs(diff), _codes(view, sides)]
    nav = [("summary", "Summary"), ("kernels", "Kernels side by side"), ("graph-diffs", "Graph diffs"),
           ("code", "Each side's code")]
    title = "tritoninspect diff · " + " vs ".join(s.source for s in sides)
    return page(title, _header(sides), body, nav=nav)


def _header(sides: tuple[Side, ...]) -> str:
    cards = "".join(
        f'<div><div class="side-head">{esc(s.label)}: {esc(s.source)}</div>'
        f'<div class="meta">{esc(s.target)} · torch {esc(s.torch)} · triton {esc(s.triton)} · stage {esc(s.stage)}'
        + (f" · inputs {esc(', '.join(s.inputs))}" if s.inputs else "") + ("· saved report" if s.saved else "")
        + f"</div>{banner(s.mode, s.device)}"
        + (f'<div class="banner failed">{esc(s.failure)}</div>' if s.failure else "") + "</div>"
        for s in sides)
    return (f'<header class="top"><h1>diff: {" vs ".join(esc(s.label) for s in sides)}</h1>'
            f'<div class="side-by-side" style="--cols:{len(sides)}">{cards}</div></header>')


def _notes(diff: DiffReport) -> str:
    if not diff.notes:
        return ""
    return "".join(f'<div class="hint"><b>note:</b> {esc(n)}</div>' for n in diff.notes)


def _rows(diff: DiffReport) -> str:
    """The compared facts: those that differ first, then all of them (collapsed)."""
    header = ("section", "what", diff.a.label, diff.b.label)
    changed = [_row(r) for r in diff.rows if r.changed]
    every = [_row(r) for r in diff.rows]
    marks = {i for i, r in enumerate(diff.rows) if r.changed}
    differ = grid_table(header, changed) if changed else "<p>No compared fact differs.</p>"
    return (f'<section id="summary"><h2>Summary: {len(changed)} of {len(diff.rows)} compared facts differ</h2>'
            f"{differ}<details><summary>all {len(every)} compared facts</summary>"
            f"{grid_table(header, every, changed=marks)}</details>{_bench(diff)}</section>")


def _row(r: Row) -> list[str]:
    return [esc(r.section), esc(r.name), _value(r.a, r.unit), _value(r.b, r.unit)]


def _value(value: object, unit: str) -> str:
    if value is None:
        return '<span class="muted">-</span>'
    if isinstance(value, float):
        return esc(f"{value:.3g}{unit}")
    if isinstance(value, (list, tuple)):
        return esc(", ".join(map(str, value)) or "none")
    return esc(f"{value}{unit}")


def _bench(diff: DiffReport) -> str:
    if diff.bench is None:
        return ""
    b = diff.bench
    rows = []
    for name in ("eager", "compiled"):
        ta, tb = getattr(b.a, name), getattr(b.b, name)
        ratio = b.ratios.get(name)
        rows.append([esc(name), esc(f"{ta.median_ms:.4f} ms" if ta else "-"), esc(f"{tb.median_ms:.4f} ms" if tb else "-"),
                     esc(f"{ratio:.2f}×" if ratio else "-")])
    note = f'<p class="muted">{esc(b.note)}</p>' if b.note else ""
    return "<h3>Timings (median)</h3>" + grid_table(("", diff.a.label, diff.b.label, "B/A"), rows) + note


# --- pictures side by side --------------------------------------------------------------


def node_signatures(picture: Picture) -> dict[str, str]:
    """Node id -> what the node is, without the numbers names carry (for pairing across sides)."""
    return {n.id: f"{n.kind}:{_NUMBERED.sub('', n.label)}" for n in picture.nodes}


def _kernels(view: DiffPage, sides: tuple[Side, ...]) -> str:
    if not view.reports:
        return ('<section id="kernels"><h2>Kernels side by side</h2><p class="muted">This diff was rendered '
                "without its sides' reports: no pictures.</p></section>")
    names = list(dict.fromkeys(k.name for r in view.reports for k in r.kernels))
    blocks = "".join(_kernel_row(view, sides, name, n) for n, name in enumerate(names))
    return (f'<section id="kernels"><h2>Kernels side by side</h2>{legend()}<p class="muted">Nodes marked '
            f"<b style=\"color:#8250df\">purple</b> have no counterpart in the other variant's picture.</p>"
            f"{blocks}</section>")


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
        cells = [_cell(view, s, found, i, f"d{number}k{k}s{i}") for i, s in enumerate(sides)]
        rows.append(f'<div class="side-by-side" style="--cols:{len(sides)}">{"".join(cells)}</div>')
    if not rows:
        rows.append('<p class="muted">No picture on either side.</p>')
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


def _cell(view: DiffPage, side: Side, found: list[Picture | None], i: int, pid: str) -> str:
    picture = found[i]
    head = f'<div class="side-head">{esc(side.label)}</div>'
    if picture is None:
        return f'<div>{head}<p class="muted">not in this variant</p></div>'
    others = [node_signatures(p) for j, p in enumerate(found) if j != i and p is not None]
    mine = node_signatures(picture)
    marked = frozenset(n for n, sig in mine.items() if others and all(sig not in o.values() for o in others))
    prefix = f"s{i}-"
    figure = kernel_figure(view.reports[i], picture, pid, prefix=prefix, marked=marked,
                           mark_text="not in the other variant")
    count = f'<span class="pill changed">{len(marked)} different</span>' if marked else ""
    return f"<div>{head}{count}{figure}</div>"


# --- graph diffs and each side's code --------------------------------------------------


def _graph_diffs(diff: DiffReport) -> str:
    if not diff.graph_diffs:
        return '<section id="graph-diffs"><h2>Graph diffs</h2><p>No graphs to compare.</p></section>'
    blocks = []
    for g in diff.graph_diffs:
        ids = f"[{g.compile_id_a or '-'}] vs [{g.compile_id_b or '-'}]"
        state = '<span class="pill changed">changed</span>' if g.changed else '<span class="muted">same</span>'
        body = diff_block(g.lines) if g.lines else '<p class="muted">identical after renaming</p>'
        opened = " open" if g.changed else ""
        blocks.append(f"<details{opened}><summary>{esc(g.stage)} {esc(g.part)} {esc(ids)} {state}</summary>"
                      f"{body}</details>")
    return (f'<section id="graph-diffs"><h2>Graph diffs ({len(diff.changed_graphs)} of {len(diff.graph_diffs)} '
            f"changed)</h2>{''.join(blocks)}</section>")


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
