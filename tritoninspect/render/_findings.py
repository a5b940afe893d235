"""Findings and their advice as text: numbered, highest impact first, one line per cause.

Shared by the default view (merged: one finding per cause, its kernels listed) and the detailed
view (`--detail`: each merged finding followed by every finding it holds). Works on any
`Advice` list, whichever rules made it.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from tritoninspect.render._widgets import ALERT, heading
from tritoninspect.model.report import Advice

#: Findings of at least this impact are shown in the alert style (broken, hidden from Inductor).
ALERT_IMPACT = 50


def findings_block(advice: Sequence[Advice], *, detail: bool = False) -> list[RenderableType]:
    """"Findings, by impact (N)": one numbered line per finding; with `detail`, a merged finding's
    own findings follow it, one per line."""
    if not advice:
        return []
    grid = numbered_grid()
    for i, a in enumerate(advice, 1):
        grid.add_row(f"{i}.", Text(a.finding, style=ALERT if a.impact >= ALERT_IMPACT else ""))
        if detail and a.details:
            listed = numbered_grid()
            for line in a.details:
                listed.add_row("-", Text(line))
            grid.add_row("", listed)
    return [heading("Findings, by impact", len(advice)), grid]


def advice_block(advice: Sequence[Advice]) -> list[RenderableType]:
    """"Advice": what to change for each finding that has an action, numbered as the findings,
    with the torch behaviour it rests on."""
    actions = [(i, a) for i, a in enumerate(advice, 1) if a.action]
    if not actions:
        return []
    grid = numbered_grid()
    for i, a in actions:
        body = Text(a.action)
        body.append(f"\nwhy: {a.because} [{a.cite}]", style="dim")
        grid.add_row(f"{i}.", body)
    return [heading("Advice"), grid]


def numbered_grid() -> Table:
    """Two columns: the number, and the text wrapped at spaces with a hanging indent."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(overflow="fold")
    return grid
