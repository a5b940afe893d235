"""Building blocks of the HTML pages: the page shell, escaped text, highlighted code, links, the legend.

Every string that reaches the page goes through `esc` (or Pygments' own escaping, then `esc`
on each token): kernel names, file paths and messages come from user code and from saved
reports that anyone can edit. Control characters are shown escaped first (`safe_text`), so a
NUL or an escape sequence cannot reach the page either.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Iterable

from tritoninspect.model import __version__
from tritoninspect.render._html_assets import CSS, JS
from tritoninspect.render._safe import safe_text

#: What `render/emit.py` looks for to know a file is ours (`-o` may replace it).
GENERATOR = f"tritoninspect {__version__}"

#: Node kinds shown in the legend, with what each one means.
LEGEND = (
    ("kernel", "the user kernel"),
    ("inductor", "Inductor kernel (fused ATen ops below its name)"),
    ("op", "ATen op"),
    ("opaque", "opaque custom op: a black box to Inductor"),
    ("copy", "clone / copy"),
    ("input", "graph input / output"),
)

_SAFE_URL = re.compile(r"^https?://[^\s\"'<>]+$")


def esc(text: object) -> str:
    """`text` for HTML text or a quoted attribute: control characters shown escaped, markup escaped."""
    return html.escape(safe_text(str(text)), quote=True)


def anchor(*parts: object) -> str:
    """An id made of `parts`, safe for `id=""` and `#fragment` (only [A-Za-z0-9_-])."""
    return "-".join(re.sub(r"[^A-Za-z0-9_]+", "_", str(p)) for p in parts)


def link(url: str | None, text: str | None = None) -> str:
    """An external link, only for http(s) URLs (a `javascript:` URL from a saved report stays text)."""
    if not url:
        return ""
    if not _SAFE_URL.match(url):
        return esc(text or url)
    return f'<a href="{esc(url)}" rel="noopener noreferrer">{esc(text or url)}</a>'


def page(title: str, header: str, body: Iterable[str], *, nav: Iterable[tuple[str, str]] = ()) -> str:
    """A whole self-contained page: inline style and script, no external loads."""
    links = "".join(f'<a href="#{esc(target)}">{esc(label)}</a>' for target, label in nav)
    tools = ('<span class="tools"><input id="search" type="search" placeholder="filter kernels, graphs…" '
             'aria-label="filter"><button id="expand-all" type="button">expand all</button>'
             '<button id="collapse-all" type="button">collapse all</button></span>')
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
        f'<meta name="generator" content="{esc(GENERATOR)}">\n',
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
        # No network at view time: everything is inline, and the policy makes sure of it.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n",
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        header,
        f'\n<nav class="toc" aria-label="sections">{links}{tools}</nav>\n<main>\n',
        *body,
        f"\n</main>\n<footer>written by {esc(GENERATOR)} · self-contained: opens offline</footer>\n",
        f"<script>{JS}</script>\n</body>\n</html>",
    ])


def banner(mode: str, device: str) -> str:
    """The mode banner: compile-only is said loudly, so nobody reads it as GPU behaviour."""
    if mode == "compile-only":
        return ('<div class="banner compile-only">mode: compile-only (CPU; kernels ran in Triton\'s interpreter; '
                "no GPU timings) · Inductor's own kernels are C++ here, not Triton</div>")
    cls = "gpu" if mode == "gpu" else ""
    return f'<div class="banner {cls}">mode: {esc(mode)} ({esc(device)})</div>'


def legend() -> str:
    items = "".join(f'<span><span class="sw {kind}"></span>{esc(text)}</span>' for kind, text in LEGEND)
    return (f'<div class="legend">{items}<span>→ data · <b style="color:#bf5a00">→</b> written in place by the '
            f"kernel · ┈ launch order</span></div>")


def pills(values: Iterable[str]) -> str:
    return "".join(f'<span class="pill {anchor(v)}">{esc(v)}</span>' for v in values)


def facts(rows: Iterable[tuple[str, str]]) -> str:
    """A two-column table of already-escaped values."""
    body = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in rows if v)
    return f'<table class="facts">{body}</table>' if body else ""


def grid_table(header: Iterable[str], rows: Iterable[Iterable[str]], *, changed: Collection[int] = ()) -> str:
    """A bordered table; cells are already escaped; rows whose index is in `changed` are marked."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    marks = {True: '<tr class="changed">', False: "<tr>"}
    body = "".join(marks[i in changed] + "".join(f"<td>{c}</td>" for c in row) + "</tr>"
                   for i, row in enumerate(rows))
    return f'<table class="grid"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


# --- code -------------------------------------------------------------------------

_TOKEN_CLASS = (("Comment", "tk-c"), ("String", "tk-s"), ("Keyword", "tk-k"), ("Number", "tk-n"),
                ("Name.Function", "tk-f"), ("Name.Class", "tk-f"), ("Operator", "tk-o"))


def code_block(code: str, prefix: str, *, hits: Collection[int] = (), at: Collection[int] = (),
               first: int = 1, language: str = "python", highlight: bool = True,
               anchors: Collection[int] | None = None) -> str:
    """`code` highlighted, one `<span>` per line (numbered by CSS); `hits` marked as kernel lines, `at` as the
    line a finding is about. Lines in `anchors` (all when None) get `id="{prefix}-L{n}"`, a link target:
    ids on every line of a large model's output code would double the page. `highlight=False`: plain
    escaped text (a third of the size, for pages past their highlighting budget)."""
    lines = _highlighted_lines(code, language) if highlight else [esc(line) for line in code.split("\n")]
    out = []
    for offset, line in enumerate(lines):
        n = first + offset
        cls = " ".join(c for c, on in (("hit", n in hits), ("at", n in at)) if on)
        attrs = (f' class="{cls}"' if cls else "") + (f' id="{esc(prefix)}-L{n}"' if anchors is None or n in anchors else "")
        out.append(f"<span{attrs}>{line}</span>")
    start = f' style="counter-reset:ln {first - 1}"' if first != 1 else ""
    return f'<pre class="code"{start}>' + "".join(out) + "</pre>"


def _highlighted_lines(code: str, language: str) -> list[str]:
    """Each line of `code` as escaped HTML with token spans (plain escaped text without Pygments)."""
    code = safe_text(code)
    try:
        from pygments import lex
        from pygments.lexers import get_lexer_by_name
    except ImportError:  # rich brings Pygments; keep working without it all the same
        return [esc(line) for line in code.split("\n")]
    lines: list[list[str]] = [[]]
    for token, value in lex(code, get_lexer_by_name(language, stripnl=False, ensurenl=False)):
        cls = next((c for name, c in _TOKEN_CLASS if name in str(token)), "")
        for i, piece in enumerate(value.split("\n")):
            if i:
                lines.append([])
            if piece:
                lines[-1].append(f'<span class="{cls}">{esc(piece)}</span>' if cls else esc(piece))
    return ["".join(parts) for parts in lines]


def diff_block(lines: Iterable[str]) -> str:
    """A unified diff, its added, removed and hunk lines marked."""
    out = []
    for line in lines:
        cls = ("hunk" if line.startswith("@@") else "add" if line.startswith("+") and not line.startswith("+++")
               else "del" if line.startswith("-") and not line.startswith("---") else "")
        out.append(f'<span class="{cls}">{esc(line)}</span>' if cls else f"<span>{esc(line)}</span>")
    return '<pre class="code diff">' + "".join(out) + "</pre>"
