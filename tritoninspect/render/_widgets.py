"""Small Rich building blocks shared by the terminal sections: tables, headings, entry colours."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from tritoninspect.render._format import NONE

#: One colour per way a kernel enters torch.compile, from most to least visible to Inductor.
ENTRY_STYLES = {"hop": "green", "triton_op": "cyan", "custom_op": "yellow", "eager": "red"}

#: Style for findings that cost performance or correctness (MISSING, fallbacks, skipped frames).
ALERT = "bold red"


def table(*columns: str) -> Table:
    """A borderless table with an underlined header; long cells fold instead of being cut."""
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", padding=(0, 1, 0, 0))
    for column in columns:
        t.add_column(column, overflow="fold")
    return t


def heading(title: str, count: int | None = None) -> Text:
    """A section title, with the number of items when there is one."""
    label = title if count is None else f"{title} ({count})"
    return Text(label, style="bold underline")


def entries_text(entries: Sequence[str]) -> Text:
    """Entry kinds, comma-joined, each in its colour."""
    if not entries:
        return Text(NONE)
    text = Text()
    for i, entry in enumerate(entries):
        if i:
            text.append(", ")
        text.append(entry, style=ENTRY_STYLES.get(entry, ""))
    return text


def add_row(t: Table, *cells: str | RenderableType) -> None:
    """Add a row, wrapping plain strings in Text.

    Rich would parse a str cell as markup on a caller's Console with markup on,
    and report text is full of brackets ("[0/0]", "key=[n]").
    """
    t.add_row(*(Text(c) if isinstance(c, str) else c for c in cells))
