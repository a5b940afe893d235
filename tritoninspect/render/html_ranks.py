"""The HTML page of several ranks' reports (`graph RANKS_DIR -o ranks.html`): where the ranks
differ, then each rank's report section as `render/html.py` draws a single report's page.

Each rank's part is cut out of its own page (between `<body>` and `<nav`, and inside `<main>`:
`_html.page`'s layout) and its ids, links and SVG references get a per-rank prefix, so that
two ranks' kernels, figures and code lines never share an id and every link stays in its rank.
"""

from __future__ import annotations

import re
from typing import Any

from tritoninspect.render._html import anchor, esc, grid_table, page
from tritoninspect.render.html import render_html

#: What refers to an id in a report's page: ids themselves, in-page links, SVG markers.
_ID_REFERENCES = re.compile(r'(\bid="|\bhref="#|\burl\(#)')


def render_ranks_html(summary: Any) -> str:
    """One self-contained page for a `RankSummary` (analyse/ranks.py)."""
    sections = [_differences(summary)]
    nav = [("ranks", "Where ranks differ")]
    for i, (name, report) in enumerate(zip(summary.ranks, summary.reports)):
        prefix = anchor(f"r{i}")
        head, body = _parts(render_html(report))
        sections.append(f'<section id="{prefix}" class="rank"><h2>{esc(name)}</h2>'
                        f"{_prefixed(head + body, prefix)}</section>")
        nav.append((prefix, name))
    header = (f'<header class="top"><h1>{esc(summary.source)}</h1>'
              f'<div class="meta">{len(summary.ranks)} logs: {esc(", ".join(summary.ranks))}</div></header>')
    return page(f"tritoninspect · {summary.source} ({len(summary.ranks)} ranks)", header, sections, nav=nav)


def _differences(summary: Any) -> str:
    if not summary.differences:
        body = ("<p>ranks agree: graphs, compile ids, graph breaks, recompiles, opaque ops, "
                "kernel entries</p>")
    else:
        rows = [[esc(d.what) if i == 0 else "", esc(", ".join(g.ranks)), esc(g.value)]
                for d in summary.differences for i, g in enumerate(d.groups)]
        body = grid_table(["what", "ranks", "value"], rows)
    return f'<section id="ranks"><h2>Where ranks differ</h2>{body}</section>'


def _parts(whole: str) -> tuple[str, str]:
    """A single report's page: its header, and what its `<main>` holds."""
    head = whole.split("<body>\n", 1)[1].split('\n<nav class="toc"', 1)[0]
    body = whole.split("<main>\n", 1)[1].rsplit("\n</main>", 1)[0]
    # The rank's header is a block of its section, not a second page header.
    head = head.replace('<header class="top">', '<div class="top rank-head">', 1).replace("</header>", "</div>", 1)
    return head, body


def _prefixed(html: str, prefix: str) -> str:
    return _ID_REFERENCES.sub(lambda m: f"{m[1]}{prefix}-", html)
