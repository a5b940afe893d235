"""One `Picture` (analyse/pictures.py) as an inline SVG element: laid out, styled, linked to its code.

Every string is escaped here (`_html.esc`: control characters shown escaped, then markup): labels come from the user's code
and from saved reports, so a kernel named `</svg><script>` stays text. Styling lives in the
page's stylesheet (`render/_html_assets.py`), keyed by the node kinds' class names.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from tritoninspect.analyse.pictures import Picture, PNode
from tritoninspect.render._html import esc as escape
from tritoninspect.render._layout import layout

__all__ = ["picture_svg"]

#: Monospace 12px labels: this many pixels per character (layout needs sizes before drawing).
CHAR_W = 7.3
LABEL_MAX = 44
PAD_X = 12
ONE_LINE_H = 28
TWO_LINE_H = 42


def picture_svg(picture: Picture, pid: str, *, link: str = "", marked: Mapping[str, str] = MappingProxyType({}),
                marked_edges: Mapping[int, str] = MappingProxyType({})) -> str:
    """`picture` as `<svg>`; `pid` makes its element ids unique in the page; nodes link to `#{link}-L{line}`.

    `marked`: node id -> why it is drawn as a difference (diff pages; the text goes in its tooltip);
    `marked_edges`: the same for edges, by their index in `picture.edges`.
    """
    labels = {n.id: (_clip(n.label), _clip(n.sublabel)) for n in picture.nodes}
    sizes = [(n.id, *_size(*labels[n.id])) for n in picture.nodes]
    placed = layout(sizes, [(e.src, e.dst) for e in picture.edges])
    parts = [_open(picture, pid, placed.width, placed.height)]
    for i, (edge, route) in enumerate(zip(picture.edges, placed.routes)):
        if route:
            parts.append(_edge(edge.kind, edge.label, route, pid, marked_edges.get(i)))
    for node, (_, w, h) in zip(picture.nodes, sizes):
        x, y = placed.centres[node.id]
        parts.append(_node(node, labels[node.id], x, y, w, h, link, marked.get(node.id), node.id == picture.focus))
    parts.append("</svg>")
    return "\n".join(parts)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_MAX else text[: LABEL_MAX - 1] + "…"


def _size(label: str, sublabel: str) -> tuple[float, float]:
    chars = max(len(label), len(sublabel) * 0.85, 4)
    return round(chars * CHAR_W + 2 * PAD_X, 1), float(TWO_LINE_H if sublabel else ONE_LINE_H)


def _open(picture: Picture, pid: str, width: float, height: float) -> str:
    w, h = round(width), round(height)
    title = escape(picture.title)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="pic" id="{pid}" viewBox="0 0 {w} {h}" '
            f'width="{w}" height="{h}" role="img" aria-label="{title}">'
            f"<title>{title}</title>"
            f'<defs><marker id="{pid}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="arrowhead"/></marker>'
            f'<marker id="{pid}-arrow-m" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="arrowhead-m"/></marker>'
            f'<marker id="{pid}-arrow-x" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" class="arrowhead-x"/></marker>'
            f"</defs>")


def _edge(kind: str, label: str, route: list[tuple[float, float]], pid: str, mark: str | None) -> str:
    marker = f"{pid}-arrow-m" if kind == "mutates" else f"{pid}-arrow"
    d = _path(route)
    if mark is None:
        out = f'<path class="e e-{escape(kind)}" d="{d}" marker-end="url(#{marker})"/>'
    else:
        out = (f'<path class="e e-{escape(kind)} marked" d="{d}" marker-end="url(#{pid}-arrow-x)">'
               f"<title>{escape(mark)}</title></path>")
    if label:
        # Halfway down the last stretch: edges into (or out of) one node are apart there.
        (x0, y0), (x1, y1) = route[-2], route[-1]
        x, y = x0 + (x1 - x0) * 0.5, y0 + (y1 - y0) * 0.5
        out += (f'<text class="el" x="{x + 4:.1f}" y="{y + 4:.1f}">{escape(_clip(label))}</text>')
    return out


def _path(points: list[tuple[float, float]]) -> str:
    """A smooth vertical curve through the points (cubic segments with vertical tangents)."""
    (x, y), rest = points[0], points[1:]
    d = [f"M{x:.1f},{y:.1f}"]
    for nx, ny in rest:
        mid = (y + ny) / 2
        d.append(f"C{x:.1f},{mid:.1f} {nx:.1f},{mid:.1f} {nx:.1f},{ny:.1f}")
        x, y = nx, ny
    return " ".join(d)


def _node(node: PNode, labels: tuple[str, str], x: float, y: float, w: float, h: float, link: str,
          mark: str | None, focus: bool) -> str:
    label, sub = labels
    marked = mark is not None
    classes = f"n n-{escape(node.kind)}" + (" focus" if focus else "") + (" marked" if marked else "")
    tip = "\n".join(node.detail + ((mark,) if mark else ()))
    left, top = x - w / 2, y - h / 2
    radius = h / 2 if node.kind in ("input", "output") else 6
    body = [f'<rect x="{left:.1f}" y="{top:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{radius:.1f}"/>']
    text_y = y + 4 if not sub else y - 3
    body.append(f'<text class="nl" x="{x:.1f}" y="{text_y:.1f}">{escape(label)}</text>')
    if sub:
        body.append(f'<text class="ns" x="{x:.1f}" y="{y + 13:.1f}">{escape(sub)}</text>')
    if marked:
        body.append(f'<circle class="badge" cx="{left + w:.1f}" cy="{top:.1f}" r="6"/>')
    inner = f"<title>{escape(tip)}</title>" + "".join(body)
    group = f'<g class="{classes}" data-node="{escape(node.id)}">{inner}</g>'
    if link and node.line:
        return f'<a href="#{escape(link)}-L{node.line}">{group}</a>'
    return group
