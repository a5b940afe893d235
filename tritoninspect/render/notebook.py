"""A report in a notebook: the HTML page `-o report.html` writes, inside an `<iframe srcdoc>`.

The frame is what keeps the page to itself. Its stylesheet sets `body`, `h2`, `table` and
`*{box-sizing}` and its script listens on the whole document; inline in a notebook they
would restyle the notebook and every other output, and the notebook's styles would reach
into the page. In a frame of its own the page is exactly the file (its search, its
expand/collapse, its pictures), as folium and pandas-profiling show theirs. Two additions:
`<base href="about:srcdoc">`, so the page's `#section` links scroll the frame (otherwise they
resolve against the notebook's URL and load the notebook into the frame), and the frame's
height follows the page up to 85% of the window (then it scrolls; it can be resized).
"""

from __future__ import annotations

import html
from typing import Any

#: Where the frame starts (before its onload fits it to the page), and the most it grows to.
HEIGHT = "640px"
MAX_VIEWPORT = 0.85
#: Fits the frame to its page; the notebook keeps it only where outputs may run script (a
#: trusted notebook, JupyterLab, VS Code); elsewhere the frame keeps `HEIGHT` and scrolls.
_FIT = ("try{var d=this.contentDocument.documentElement;"
        f"this.style.height=Math.min(d.scrollHeight+4,window.innerHeight*{MAX_VIEWPORT})+'px'}}catch(e){{}}")


def notebook_html(document: Any) -> str:
    """`document` (a report, a diff report or a `DiffPage`) as the frame Jupyter shows."""
    from tritoninspect.render import render_as

    page = render_as(document, "html").replace("<head>\n", '<head>\n<base href="about:srcdoc">\n', 1)
    title = html.escape(getattr(getattr(document, "meta", None), "target", "") or "tritoninspect report")
    return (f'<iframe class="tritoninspect-report" title="{title}" srcdoc="{html.escape(page, quote=True)}" '
            f'style="width:100%;height:{HEIGHT};border:1px solid #d1d9e0;border-radius:6px;resize:vertical" '
            f'onload="{html.escape(_FIT, quote=True)}"></iframe>')
