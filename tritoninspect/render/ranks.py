"""Text of several ranks' reports: where ranks differ, then each rank's report."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table



def render_ranks(summary: Any, render: Callable[..., str], *, color: bool | None = None,
                 width: int | None = None) -> str:
    """`graph DIR` for a trace of several ranks: the summary, then every report in the summary's
    view, drawn by `render` (render.render_as: passed in, as render/__init__ imports this module)."""
    width = width or 100
    out = io.StringIO()
    console = Console(file=out, width=width, color_system="standard" if color else None, force_terminal=bool(color),
                      highlight=False)
    console.print(f"tritoninspect  trace: {summary.source}", markup=False, style="bold")
    console.print(f"{len(summary.ranks)} logs: {', '.join(summary.ranks)}", markup=False)
    if not summary.differences:
        console.print("ranks agree: graphs, compile ids, graph breaks, recompiles, opaque ops, kernel entries")
    else:
        table = Table(title="Where ranks differ", title_justify="left", box=None, show_edge=False)
        table.add_column("what", no_wrap=True)
        table.add_column("ranks", no_wrap=True)
        table.add_column("value", overflow="fold")
        for difference in summary.differences:
            for i, group in enumerate(difference.groups):
                table.add_row(difference.what if i == 0 else "", ", ".join(group.ranks), group.value)
        console.print(table)
    body = out.getvalue().rstrip("\n")
    kernel = getattr(summary, "kernel", None)
    for name, report in zip(summary.ranks, summary.reports):
        body += f"\n\n{'═' * 8} {name} {'═' * max(0, width - len(name) - 10)}\n"
        if kernel is not None and not report.kernels:  # --kernel NAME, and this rank never launched it
            body += f"{kernel}: not on this rank"
            continue
        body += render(report, summary.view, color=color, width=width)
    return body
