"""A table that never splits a word: names (kernels, nodes, ops) stay whole.

Rich folds a cell wider than its column mid-word ("scale_bias_kerne" / "l") even while
another column holds only "-". As render/overview.py does for the kernel table: each
column is at least as wide as its longest word, so Rich wraps only between words; where
even that does not fit the console, each row becomes a block of "header: value" lines.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

#: Spaces between columns: the cell's right padding and the box's column divider.
GAP = 2


class WordTable:
    """Headers, then rows of str or Text cells; rendered as a table or, too narrow, as blocks."""

    def __init__(self, *headers: str) -> None:
        self.headers = headers
        self.rows: list[tuple[Text, ...]] = []

    def add_row(self, *cells: str | Text) -> None:
        # Text, never markup: report text is full of brackets ("[0/0]", "key=[n]").
        self.rows.append(tuple(Text(c) if isinstance(c, str) else c for c in cells))

    def min_widths(self) -> list[int]:
        """Each column's width without splitting a word: its longest word, header included."""
        return [max([_longest_word(Text(h))] + [_longest_word(row[i]) for row in self.rows])
                for i, h in enumerate(self.headers)]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = self.min_widths()
        spare = options.max_width - sum(widths) - GAP * len(widths)
        if spare >= 0:
            yield self._table(_share(widths, self._max_widths(), spare))
            return
        for row in self.rows:  # too narrow for whole words side by side: one block per row
            first = row[0].copy()
            first.stylize("bold")
            yield first
            for header, cell in zip(self.headers[1:], row[1:]):
                yield Text.assemble(f"  {header or 'kind'}: ", cell)

    def _max_widths(self) -> list[int]:
        return [max([len(h)] + [row[i].cell_len for row in self.rows]) for i, h in enumerate(self.headers)]

    def _table(self, widths: Iterable[int]) -> Table:
        # Fixed widths: Rich's own collapsing would shrink a column below its longest word.
        t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold",
                  padding=(0, GAP - 1, 0, 0))
        for header, width in zip(self.headers, widths):
            t.add_column(header, width=width, overflow="fold")
        for row in self.rows:
            t.add_row(*row)
        return t


def _share(widths: list[int], wanted: list[int], spare: int) -> list[int]:
    """`widths` grown towards `wanted` with `spare` columns, evenly among the columns still short."""
    widths = list(widths)
    while spare > 0:
        short = [i for i, (w, want) in enumerate(zip(widths, wanted)) if w < want]
        if not short:
            break
        for i in short:
            if spare == 0:
                break
            widths[i] += 1
            spare -= 1
    return widths


def _longest_word(cell: Text) -> int:
    return max((len(word) for word in cell.plain.split()), default=0)
