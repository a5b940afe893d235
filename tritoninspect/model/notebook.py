"""Reports in a notebook: the short text `__repr__` and the slot `_repr_html_` draws the page through.

The page is render/'s (the same HTML as `-o report.html`), and the model imports nothing
above it (tests/test_layers.py counts an import inside a method too). So the model reads
the page from a renderer registered here, and the package root, `tritoninspect/__init__.py`,
registers one: the root is always imported before any module of the package, so any report,
however it was made (the Python API, `Report.from_json`, the pytest plugin), finds it; and the
function it registers imports render/ only when a notebook first shows a report.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: The one registered page renderer: (report or diff report) -> HTML for Jupyter's `_repr_html_`.
_PAGE: dict[str, Callable[[Any], str]] = {}


def register_page(render: Callable[[Any], str]) -> None:
    """Set the renderer `_repr_html_` uses (the package root does, once)."""
    _PAGE["html"] = render


def page_html(document: Any) -> str | None:
    """`document` as notebook HTML; None (Jupyter then shows the text) when none is registered."""
    render = _PAGE.get("html")
    return None if render is None else render(document)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def report_repr(report: Any) -> str:
    """One line: target, mode, stage, kernels with their entries, breaks, graphs, a failure."""
    m = report.meta
    kernels = ", ".join(f"{k.name} ({'/'.join(k.entries) or 'no entry'})" for k in report.kernels[:4])
    more = f", +{len(report.kernels) - 4}" if len(report.kernels) > 4 else ""
    graphs = len({g.compile_id for g in report.graphs if g.stage == "dynamo"})
    parts = [m.target or "(no target)", m.mode, f"stage {m.stage}",
             plural(len(report.kernels), "kernel") + (f": {kernels}{more}" if kernels else ""),
             plural(len(report.graph_breaks), "graph break"), plural(graphs, "Dynamo graph")]
    if report.failure is not None:
        parts.append(f"failed: {report.failure.summary()}")
    return f"<Report {' · '.join(parts)}>"


def diff_repr(diff: Any) -> str:
    """One line: the sides compared, what changed."""
    sides = " vs ".join(f"{s.label}: {s.source}" for s in (diff.a, diff.b, *(o.b for o in diff.others)))
    changed = plural(sum(len(c.changed_rows) for c in diff.comparisons), "changed fact")
    summary = f" · {diff.summary}" if diff.summary else ""
    return f"<DiffReport {sides} · {changed}{summary}>"
