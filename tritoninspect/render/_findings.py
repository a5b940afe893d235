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
    same: dict[tuple[str, str, str], list[int]] = {}
    for i, a in enumerate(advice, 1):
        if a.action:  # findings with the same action and reason get it once (eleven breaks, one text)
            same.setdefault((a.action, a.because, a.cite), []).append(i)
    if not same:
        return []
    grid = numbered_grid()
    said: set[str] = set()
    for (action, because, cite), numbers in same.items():
        body = Text(action)
        body.append("\nwhy: as above" if because in said else f"\nwhy: {because} [{cite}]", style="dim")
        said.add(because)
        grid.add_row(f"{numbered(numbers)}.", body)
    return [heading("Advice"), grid]


def numbered(numbers: Sequence[int]) -> str:
    """`1-6, 9`: ascending finding numbers, runs joined."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}-{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)


def numbered_grid() -> Table:
    """Two columns: the number, and the text wrapped at spaces with a hanging indent."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(overflow="fold")
    return grid
