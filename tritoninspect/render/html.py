"""The HTML report: one self-contained page per report (`-o report.html` for `graph` and `breaks`).

First the findings with their advice (as the default text view: merged by cause, highest impact
first). Per kernel: what torch.compile did with it, and pictures (SVG) of the graph around it in the
final post-grad graph and in the output code; then graph breaks with the user's code, recompiles
with the kernel arguments that changed, and every graph and output module, highlighted, with
user-kernel lines marked. Torch-free: a saved report.json re-renders offline.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from tritoninspect.analyse.pictures import Picture, kernel_pictures
from tritoninspect.render import _format as fmt
from tritoninspect.render._html_findings import findings_html
from tritoninspect.render._html import (
    anchor,
    banner,
    code_block,
    esc,
    facts,
    grid_table,
    legend,
    link,
    page,
    pills,
)
from tritoninspect.render._findings import ALERT_IMPACT
from tritoninspect.render._svg import picture_svg
from tritoninspect.render.cudagraphs import cudagraph_html
from tritoninspect.render.breaks import break_groups, shown_reason
from tritoninspect.render.stage import kernel_line_pattern, marked_lines
from tritoninspect.model.report import (
    STAGES,
    Advice,
    Failure,
    Graph,
    GraphBreak,
    Kernel,
    Occurrence,
    Recompile,
    Report,
    said,
)

__all__ = ["findings_section", "graph_anchor", "kernel_figure", "linked_text", "render_html"]


def render_html(report: Report, *, breaks_first: bool = False) -> str:
    """The whole page for `report`; with `breaks_first` (`breaks -o`), graph breaks and recompiles lead."""
    cwd = Path.cwd()
    kernels = [_kernels(report, cwd), _opaque(report)]
    breaks = [_breaks(report, cwd), _recompiles(report)]
    sections = [_failure(report.failure, cwd), findings_section(report),
                *(breaks + kernels if breaks_first else kernels + breaks), cudagraph_html(report), _graphs(report),
                _diagnostics(report)]
    nav = [("kernels", "Kernels"), ("breaks", "Graph breaks"), ("recompiles", "Recompiles"),
           ("graphs", "Graphs & code")]
    if breaks_first:
        nav = nav[1:3] + nav[:1] + nav[3:]
    nav = [("findings", "Findings"), *nav]
    title = f"tritoninspect · {report.meta.target}"
    return page(title, header(report), sections, nav=nav)


def header(report: Report, label: str = "") -> str:
    """The report's title block: target, versions, options, the mode banner, a failure line."""
    m = report.meta
    versions = f"torch {m.torch} · triton {m.triton or 'unknown'} · python {m.python}"
    dynamic = "auto" if m.dynamic is None else "yes" if m.dynamic else "no"
    options = f"stage: {m.stage} · dynamic: {dynamic} · backward: {fmt.backward_text(m)}"
    inputs = f" · inputs: {', '.join(m.inputs)}" if m.inputs else ""
    failed = ""
    if report.failure is not None:
        failed = f'<a class="banner failed" href="#failure">{esc(report.failure.summary())}</a>'
    prefix = f"{esc(label)}: " if label else ""
    return (f'<header class="top"><h1>{prefix}{esc(m.target)}</h1>'
            f'<div class="meta">{esc(m.tool)} {esc(m.tool_version)} · {esc(versions)}</div>'
            f'<div class="meta">{esc(options + inputs)}</div>{banner(m.mode, m.device)}{failed}</header>')


#: Characters of graph code highlighted per page: token markup triples the size, so a large model's
#: output code past this is shown plain (still with line numbers, links and kernel lines marked).
HIGHLIGHT_BUDGET = 600_000


def graph_anchor(report: Report, index: int, prefix: str = "") -> str:
    """The id of graph `index`'s code block; its lines are `{id}-L{n}` (short: one per line of code)."""
    del report
    return f"{anchor(prefix)}g{index}"


# --- failure ----------------------------------------------------------------------


def _failure(failure: Failure | None, cwd: Path) -> str:
    if failure is None:
        return ""
    rows = [("stage", esc(failure.stage)), ("compile id", esc(failure.compile_id or "")),
            ("part", esc(failure.part)), ("exception", f"<code>{esc(failure.exc_type)}</code>"),
            ("kernel", esc(failure.kernel or "")), ("your code", esc(failure.user_frame or "")),
            ("torch/triton frame", esc(failure.torch_frame or ""))]
    details = "\n".join(failure.details())
    more = f"<details><summary>full message</summary><pre class=\"code\">{esc(details)}</pre></details>" if details else ""
    return (f'<section id="failure"><h2>The compile or run failed</h2><p class="verdict">{esc(failure.headline())}</p>'
            f"{facts(rows)}{more}<p class=\"muted\">Everything below was captured before the failure.</p></section>")


# --- findings and advice -------------------------------------------------------------


def findings_section(report: Report) -> str:
    """The findings, highest impact first, each with what to change and why: the default text
    view's findings and advice in one list; a merged finding lists the findings it holds."""
    from tritoninspect.analyse.advice import advise

    found = advise(report)
    if not found:
        return '<section id="findings"><h2>Findings</h2><p>Nothing to change was found.</p></section>'
    items = "".join(_finding(report, a) for a in found)
    return (f'<section id="findings"><h2>Findings, by impact ({len(found)})</h2>'
            f'<ol class="findings">{items}</ol></section>')


def _finding(report: Report, a: Advice) -> str:
    cls = ' class="alert"' if a.impact >= ALERT_IMPACT else ""
    library = next((lib for lib in report.libraries if lib.distribution == a.library), None)
    owner = (f' <span class="pill library">{esc(library.distribution)} {esc(library.version)}</span>'
             if library else f' <span class="pill library">{esc(a.library)}</span>' if a.library else "")
    details = ""
    if a.details:
        lines = "".join(f"<li>{esc(d)}</li>" for d in a.details)
        details = f"<details><summary>each finding ({len(a.details)})</summary><ul>{lines}</ul></details>"
    action = f'<div class="hint"><b>advice:</b> {linked_text(a.action)}</div>' if a.action else ""
    why = (f'<div class="muted">why: {esc(a.because)} <span class="cite">[{esc(a.cite)}]</span></div>'
           if a.because else "")
    search = " ".join((a.rule, *a.kernels, a.library or ""))
    return (f'<li data-search="{esc(search)}"><p{cls}>{esc(a.finding)}{owner}</p>{details}{action}{why}</li>')


_URL_RE = re.compile(r"https?://[^\s()<>]+[^\s()<>.,;:]")


def linked_text(text: str) -> str:
    """`text` escaped, its http(s) URLs made links."""
    out, last = [], 0
    for m in _URL_RE.finditer(text):
        out.append(esc(text[last:m.start()]))
        out.append(link(m.group(0)))
        last = m.end()
    out.append(esc(text[last:]))
    return "".join(out)


# --- kernels ----------------------------------------------------------------------


def _kernels(report: Report, cwd: Path) -> str:
    if not report.kernels:
        return '<section id="kernels"><h2>Kernels</h2><p>No user-defined Triton kernels were seen.</p></section>'
    articles = "".join(_kernel(report, k, cwd) for k in report.kernels)
    return (f'<section id="kernels"><h2>Kernels ({len(report.kernels)})</h2>{_kernel_table(report, cwd)}'
            f"{findings_html(report, None, cwd)}{legend()}{articles}</section>")


def _kernel_table(report: Report, cwd: Path) -> str:
    """One line per kernel, linking to its pictures: the overview of a model with many kernels."""
    if len(report.kernels) < 2:
        return ""
    rows = [[f'<a href="#{kernel_anchor(report, k)}"><code>{esc(k.name)}</code></a>', pills(k.entries),
             esc(", ".join(fmt.compile_ids(k)) or fmt.NONE), esc(fmt.location(k.file, k.line, cwd=cwd)),
             esc(fmt.output_code_status(k)), str(len(kernel_pictures(report, k)))] for k in report.kernels]
    return grid_table(("kernel", "entries", "compile ids", "source", "in output code", "pictures"), rows)


def _kernel(report: Report, kernel: Kernel, cwd: Path) -> str:
    rows = [
        ("source", esc(fmt.location(kernel.file, kernel.line, cwd=cwd))),
        ("decorators", esc(fmt.decorators_text(kernel))),
        ("constexprs", esc(", ".join(kernel.constexpr_params) or fmt.NONE)),
        ("compile ids", esc(", ".join(fmt.compile_ids(kernel)) or fmt.NONE)),
        ("in output code", esc(fmt.output_code_status(kernel))),
        *(("guard", esc(fmt.guard_text(g))) for g in kernel.guards),
        *(("symbolic", esc(fmt.symbolic_arg_text(a))) for a in kernel.symbolic_args),
    ]
    figures = _figures(report, kernel)
    return (f'<article class="kernel" id="{kernel_anchor(report, kernel)}" data-search="{esc(kernel.name)} '
            f'{esc(kernel.file or "")}"><h3>{esc(kernel.name)} {pills(kernel.entries)}</h3>'
            f'<p class="verdict">{esc(fmt.verdict(kernel))}</p>{facts(rows)}{findings_html(report, kernel, cwd)}'
            f"{figures}{_occurrences(kernel)}</article>")


def _index(report: Report, kernel: Kernel) -> int:
    return report.kernels.index(kernel)


def kernel_anchor(report: Report, kernel: Kernel) -> str:
    """`k0-add_kernel`: unique even for names that differ only in characters an id cannot hold."""
    return anchor(f"k{_index(report, kernel)}", kernel.name)


def _figures(report: Report, kernel: Kernel) -> str:
    pictures = kernel_pictures(report, kernel)
    if not pictures:
        if set(kernel.entries) <= {"eager"}:
            return '<p class="muted">Launched outside every compiled graph: there is no graph around it.</p>'
        return '<p class="muted">No graph around this kernel was captured (no FX graph or output code).</p>'
    k = _index(report, kernel)
    return '<div class="figs">' + "".join(kernel_figure(report, p, f"k{k}p{i}") for i, p in enumerate(pictures)) + "</div>"


def kernel_figure(report: Report, picture: Picture, pid: str, *, prefix: str = "",
                  marked: Mapping[str, str] = MappingProxyType({}),
                  marked_edges: Mapping[int, str] = MappingProxyType({})) -> str:
    """One picture with its caption; its nodes link to the lines of the graph it was drawn from.
    `marked`, `marked_edges`: differences (diff pages), node id or edge index -> its tooltip."""
    target = graph_anchor(report, picture.graph_index, prefix) if picture.graph_index >= 0 else ""
    svg = picture_svg(picture, pid, link=target, marked=marked, marked_edges=marked_edges)
    code = f' · <a href="#{esc(target)}">code</a>' if target else ""
    return (f'<figure data-search="{esc(picture.title)}"><figcaption>{esc(picture.title)}'
            f'<span class="sub">{code} · nodes link to their lines</span></figcaption>{svg}</figure>')


def _occurrences(kernel: Kernel) -> str:
    rows = [_occurrence_row(o) for o in kernel.occurrences]
    table = grid_table(("compile id", "stage", "entry", "node / launch", "grid", "arguments", "clones and copies"), rows)
    return f"<details><summary>every occurrence ({len(rows)})</summary>{table}</details>"


def _occurrence_row(o: Occurrence) -> list[str]:
    what = o.node or o.inductor_name or ""
    if o.custom_op:
        what += f" in {o.custom_op}"
    if o.launches is not None:
        what += f" · {fmt.plural(o.launches, 'launch', 'launches')}"
    where = fmt.subgraph_place(o)
    if where:
        what += f" · {where}"
    args = " · ".join(x for x in (fmt.kv_text(o.constexprs), fmt.kv_text(o.scalars)) if x != fmt.NONE)
    return [esc(o.compile_id or fmt.NONE), esc(fmt.graph_name(o.stage, o.part or "")), pills([o.entry]),
            f"<code>{esc(what.strip())}</code>", esc(fmt.grids_text(o.grid)), esc(args or fmt.NONE), esc(_clones(o))]


def _clones(o: Occurrence) -> str:
    c = o.clones
    if c is None:
        return ", ".join(o.tensors_to_clone or ()) or ""
    kept = ", ".join(c.after_reinplace) if c.after_reinplace is not None else "?"
    text = f"to clone: {', '.join(c.before_reinplace) or 'none'}; after re-inplacing: {kept or 'none'}"
    if c.bytes:
        text += f" ({c.bytes} bytes/call)"
    if c.copies:
        text += f"; copies: {', '.join(c.copies)}"
    return text


def _opaque(report: Report) -> str:
    if not report.opaque_ops:
        return ""
    rows = [[esc(op.compile_id), esc(op.stage), f"<code>{esc(op.op)}</code>", esc(op.node),
             esc(", ".join(fmt.kernels_inside(report, op)) or "none seen")] for op in report.opaque_ops]
    return ('<section id="opaque"><h2>Opaque custom ops</h2><p class="muted">Inductor calls these as a black box: '
            "it cannot see, fuse or reorder the kernels inside.</p>"
            + grid_table(("compile id", "stage", "custom op", "node", "kernels inside"), rows) + "</section>")


# --- breaks and recompiles ---------------------------------------------------------


def _breaks(report: Report, cwd: Path) -> str:
    if not report.graph_breaks:
        return '<section id="breaks"><h2>Graph breaks</h2><p>No graph breaks.</p></section>'
    groups = break_groups(report)
    blocks = "".join(_break(n, group, cwd) for n, group in enumerate(groups, 1))
    eager = _eager(report)
    return (f'<section id="breaks"><h2>Graph breaks ({len(report.graph_breaks)} at '
            f'{fmt.plural(len(groups), "place")})</h2>{blocks}{eager}</section>')


def _break(number: int, group: list[GraphBreak], cwd: Path) -> str:
    b = group[0]
    where = fmt.location(b.file, b.line, cwd=cwd) if b.file else (b.library_frame or "unknown place")
    rows = [("where", esc(where)), ("compile ids", esc(", ".join(dict.fromkeys(x.trace_id for x in group)))),
            ("kernel", esc(f"{b.kernel} ({b.kernel_relation})") if b.kernel else ""),
            ("ran eagerly", esc(", ".join(dict.fromkeys(k for x in group for k in x.eager_kernels)))),
            ("docs", " ".join(x for x in (esc(b.gb_id or ""), link(b.doc_url)) if x))]
    code = ""
    if b.context and b.context_start is not None:
        code = code_block("\n".join(b.context), anchor("break", number), first=b.context_start,
                          at={b.line} if b.line else set())
    hints = "".join(f'<div class="hint"><b>hint:</b> {esc(h)}' + (f' <span class="muted">({esc(s)})</span>' if s else "")
                    + "</div>" for h, s in dict.fromkeys((x.hint, x.hint_source) for x in group if x.hint))
    reasons = "".join(f'<div class="reason">{esc(shown_reason(r))}</div>'
                      for r in dict.fromkeys(x.reason for x in group))
    headline = b.title()
    search = f"{headline} {b.kernel or ''} {where}"
    return (f'<div class="break" id="{anchor("break", number)}" data-search="{esc(search)}">'
            f"<h3>{number}. {esc(headline)}</h3>{facts(rows)}{code}{hints}"
            f"<details><summary>Dynamo's reason ({len(group)} record{'s' if len(group) > 1 else ''})</summary>"
            f"{reasons}</details></div>")


def _eager(report: Report) -> str:
    rows = []
    for kernel in report.kernels:
        launches = sum(o.launches or 0 for o in kernel.occurrences if o.entry == "eager" and o.stage == "runtime")
        if launches:
            rows.append([f"<code>{esc(kernel.name)}</code>", esc(fmt.plural(launches, "launch", "launches"))])
    if not rows:
        return ""
    return "<h3>Kernels that ran eagerly</h3>" + grid_table(("kernel", "outside compiled graphs"), rows)


def _recompiles(report: Report) -> str:
    if not report.recompiles and not report.recompile_limits:
        return '<section id="recompiles"><h2>Recompiles</h2><p>No recompiles.</p></section>'
    rows = [_recompile_row(r) for r in report.recompiles]
    limits = "".join(f"<p><b>recompile limit hit</b> at [{esc(x.compile_id)}]: {esc(x.limit_type)}={esc(x.limit)}"
                     f" {esc(fmt.location(x.file, x.line))}: later calls ran eagerly</p>" for x in report.recompile_limits)
    table = grid_table(("compile id", "after", "guard that failed", "kernel arguments that changed", "hint"), rows)
    return f'<section id="recompiles"><h2>Recompiles ({len(report.recompiles)})</h2>{table}{limits}</section>'


def _recompile_row(r: Recompile) -> list[str]:
    changes = "<br>".join(
        f"<code>{esc(c.kernel)}</code> {esc('grid' if c.kind == 'grid' else f'{c.kind} {c.name}')}: "
        f"{esc(said(c.before))} → <b>{esc(said(c.after))}</b>" + (" (guarded)" if c.guarded else "") for c in r.changes)
    return [esc(r.compile_id), esc(r.previous or ""), f"<code>{esc(r.guard or fmt.first_line(r.reason))}</code>",
            changes or fmt.NONE, esc(r.hint or "")]


# --- graphs and code -----------------------------------------------------------------


def _graphs(report: Report) -> str:
    if not report.graphs and not report.decompiled:
        return '<section id="graphs"><h2>Graphs &amp; code</h2><p>No graphs were captured.</p></section>'
    pattern = kernel_line_pattern(report)
    order = sorted(range(len(report.graphs)), key=lambda i: (fmt.compile_id_key(report.graphs[i].compile_id),
                                                               STAGES.index(report.graphs[i].stage)))
    highlighted = highlight_within_budget(report)
    anchors = linked_lines(report)
    blocks, current = [], None
    for i in order:
        g = report.graphs[i]
        if g.compile_id != current:
            current = g.compile_id
            blocks.append(f"<h3>[{esc(g.compile_id)}]</h3>")
        blocks.append(graph_block(report, i, pattern, highlight=i in highlighted, anchors=anchors.get(i, set())))
    for frame in report.decompiled:
        blocks.append(f"<details><summary>decompiled [{esc(frame.compile_id)}] {esc(frame.function)}</summary>"
                      f"{code_block(frame.source, anchor('dec', frame.compile_id, frame.function))}</details>")
    return f'<section id="graphs"><h2>Graphs &amp; code</h2>{"".join(blocks)}</section>'


def highlight_within_budget(report: Report) -> set[int]:
    """Indices of the graphs whose code is highlighted: FX graphs first (short, and what pictures show),
    then output code, until `HIGHLIGHT_BUDGET` characters."""
    order = sorted(range(len(report.graphs)), key=lambda i: report.graphs[i].stage == "output_code")
    chosen, left = set(), HIGHLIGHT_BUDGET
    for i in order:
        left -= len(report.graphs[i].code)
        if left >= 0:
            chosen.add(i)
    return chosen


def linked_lines(report: Report) -> dict[int, set[int]]:
    """Graph index -> the lines some picture's node links to (they get ids)."""
    lines: dict[int, set[int]] = {}
    for kernel in report.kernels:
        for picture in kernel_pictures(report, kernel):
            lines.setdefault(picture.graph_index, set()).update(n.line for n in picture.nodes if n.line)
    return lines


def graph_block(report: Report, index: int, pattern: re.Pattern[str], prefix: str = "",
                highlight: bool = True, anchors: set[int] | None = None) -> str:
    """One graph or output module, collapsible; user-kernel lines marked; final post-grad graphs open."""
    g = report.graphs[index]
    hits = marked_lines(g.code, pattern)
    name = esc(fmt.graph_name(g.stage, g.part))
    timing = f" · compiled in {g.compile_time_s:.2f}s" if g.compile_time_s else ""
    totals = _totals(g)
    target = graph_anchor(report, index, prefix)
    opened = " open" if g.stage == "post_grad_final" else ""
    return (f'<details id="{target}"{opened} data-stage="{esc(g.stage)}" data-search="{name} {esc(g.compile_id)}">'
            f"<summary>{name} "
            f'<span class="muted">· {g.op_count} {"launches" if g.stage == "output_code" else "ops"}{totals}{timing}'
            f" · {len(hits)} kernel line{'s' if len(hits) != 1 else ''}</span></summary>"
            f"{code_block(g.code, target, hits=hits, highlight=highlight, anchors=(anchors or set()) | hits)}"
            "</details>")


def _totals(g: Graph) -> str:
    if g.inductor_kernels is None:
        return ""
    return (f" ({g.inductor_kernels} Inductor, {g.user_kernels} user, {g.extern_calls} extern"
            + (f", {g.copies} copies" if g.copies else "") + ")")


def _diagnostics(report: Report) -> str:
    if not report.diagnostics:
        return ""
    rows = [[esc(d.severity), esc(d.source), esc(d.message)] for d in report.diagnostics]
    return '<section id="diagnostics"><h2>Diagnostics</h2>' + grid_table(("severity", "source", "message"), rows) + "</section>"

