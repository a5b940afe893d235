"""A Rich Console that renders into a string, deterministic when colour is off."""

from __future__ import annotations

import io
import shutil
import sys

from collections.abc import Callable, Iterable, Sequence

from rich.console import Console, RenderableType

#: Width used whenever output is not coloured (a file, a pipe, a golden test).
PLAIN_WIDTH = 100


def resolve_color(color: bool | None) -> bool:
    """`None` means: colour only when stdout is a terminal."""
    if color is not None:
        return color
    return sys.stdout.isatty()


def make_console(*, width: int | None, color: bool | None) -> Console:
    """A Console writing to a StringIO; read it back with `console_text`.

    Without colour the width is fixed (100 unless given) so the same report
    always renders to the same bytes, whatever the terminal or $COLUMNS say.
    """
    on = resolve_color(color)
    if width is None:
        width = shutil.get_terminal_size((PLAIN_WIDTH, 24)).columns if on else PLAIN_WIDTH
    return Console(
        file=io.StringIO(),
        width=width,
        color_system=_color_system(color, on),
        force_terminal=on,
        force_interactive=False,
        markup=False,  # report text (reasons, code, `key=[n]`) must never be parsed as markup
        highlight=False,  # Rich's number/path highlighter would colour arbitrary report text
        emoji=False,
        soft_wrap=False,
        legacy_windows=False,
    )


def _color_system(color: bool | None, on: bool) -> str | None:
    # An explicit --color wins over $TERM detection (TERM=dumb would give none);
    # every style here uses the 16 standard colours, so "standard" loses nothing.
    if not on:
        return None
    return "auto" if color is None else "standard"


def console_text(console: Console) -> str:
    """What was printed, without the final newline (like `Report.to_json`; the caller adds one).

    Trailing blanks are stripped from plain output so gold files stay clean.
    """
    text = console.file.getvalue()  # type: ignore[attr-defined]
    if console.color_system is not None:
        return text.removesuffix("\n")
    return "\n".join(line.rstrip() for line in text.splitlines())


def print_blocks(console: Console, blocks: Iterable[Sequence[RenderableType]], *, first: bool = True,
                 print_one: Callable[[RenderableType], None] | None = None) -> None:
    """Print each non-empty block, blocks separated by one blank line (none before the first when
    `first`); `print_one` prints a renderable (default: `console.print`)."""
    show = print_one or console.print
    for block in blocks:
        if not block:
            continue
        if not first:
            console.print()
        first = False
        for renderable in block:
            show(renderable)
