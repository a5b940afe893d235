"""Small Rich building blocks shared by the terminal sections: tables, headings, entry colours."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from tritoninspect.render._format import NONE

#: One colour per way a kernel enters torch.compile, from most to least visible to Inductor.
ENTRY_STYLES = {"hop": "green", "triton_op": "cyan", "custom_op": "yellow", "eager": "red"}

#: Style for findings that cost performance or correctness (MISSING, fallbacks, skipped frames).
ALERT = "bold red"


def table(*columns: str) -> Table:
    """A borderless table with an underlined header; long cells fold instead of being cut; too
    narrow for its words side by side, one block of "header: value" lines per row (`StackingTable`)."""
    t = StackingTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold",
                      padding=(0, 1, 0, 0))
    for column in columns:
        t.add_column(column, overflow="fold")
    return t


class StackingTable(Table):
    """A Table that, on a console narrower than its columns' longest words side by side, shows each
    row as a block instead: the first cell in bold, then "  header: cell" per other column. At 50
    columns the kernel table folded "source" into "sour / ce" and a path into four-letter pieces."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if options.max_width >= self._least_width():
            yield from super().__rich_console__(console, options)
            return
        rows = list(zip(*(list(c.cells) for c in self.columns)))
        headers = [str(c.header) for c in self.columns]
        for row in rows:
            first = row[0].copy() if isinstance(row[0], Text) else Text(str(row[0]))
            if headers[0]:
                first = Text.assemble(f"{headers[0]} ", first)
            first.stylize("bold")
            yield first
            for header, cell in zip(headers[1:], row[1:]):
                if isinstance(cell, Text):
                    yield Text.assemble(f"  {header or 'kind'}: ", cell)
                else:
                    yield Text(f"  {header or 'kind'}:")
                    yield Padding(cell, (0, 0, 0, 4))

    def _least_width(self) -> int:
        """The columns' longest words side by side, with the gaps between them."""
        words = [max([_longest_word(str(c.header))] + [_longest_word(cell.plain) for cell in c.cells
                                                         if isinstance(cell, Text)]) for c in self.columns]
        return sum(words) + 2 * max(len(words) - 1, 0)


def _longest_word(text: str) -> int:
    return max((len(word) for word in text.split()), default=0)


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
