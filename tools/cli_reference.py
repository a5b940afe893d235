"""Writes docs/reference/cli.md, the CLI reference, from the Typer app itself.

`python -m tools.cli_reference` (from the checkout) regenerates the page; `--check` exits 1 when the
committed page differs from what the app generates (tests/test_docs.py does the same). It walks
the Click command tree Typer builds (`typer.main.get_command`) through Click's public API only (commands,
parameters, `get_help_record`, usage), so every command, argument, option, default and help text on the
page is the one `--help` prints. Typer's own `typer tritoninspect.cli utils docs` was tried (typer 0.29):
it leaves the epilogs' Rich markup (`[bold]Examples[/]`) in the page and drops `-h`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "cli.md"
COMMAND = "python -m tools.cli_reference"

HEADER = f"""# CLI reference

<!-- Generated from the Typer app (tritoninspect/cli.py) by `{COMMAND}`; do not edit by hand.
     tests/test_docs.py fails when this page no longer matches the app. -->

Every command, argument and option of `tritoninspect`, with its default and its help, as `--help` prints
them. The command pages ([graph](../commands/graph.md), [breaks](../commands/breaks.md),
[check](../commands/check.md), [diff](../commands/diff.md), [export](../commands/export.md)) say more about
each; [exit codes](../commands/index.md#exit-codes) are listed in full there.
"""

#: The extras Click appends to an option's help: `  [default: auto]`, `  [required]`, `  [x>=0]`.
_EXTRA = re.compile(r"\s+\[([^\[\]]+)\]$")


def generate() -> str:
    """The page's Markdown, from the app as it is now."""
    import typer.main

    from tritoninspect.cli import app

    group = typer.main.get_command(app)
    root = group.context_class(group, info_name="tritoninspect", **group.context_settings)
    names = group.list_commands(root)
    parts = [HEADER, _root_section(group, root, names)]
    for name in names:
        command = group.get_command(root, name)
        ctx = command.context_class(command, info_name=name, parent=root, **command.context_settings)
        parts.append(_command_section(name, command, ctx))
    return "\n".join(parts).rstrip("\n") + "\n"


def _root_section(group: Any, ctx: Any, names: list[str]) -> str:
    rows = "\n".join(f"| [`{n}`](#{n}) | {_cell(group.get_command(ctx, n).get_short_help_str(limit=200))} |"
                     for n in names)
    return "\n".join([
        "## tritoninspect", "", _plain(group.help or ""), "", _usage(group, ctx), "",
        "| command | what it does |", "| --- | --- |", rows, "", _options(group, ctx), "",
        _plain(group.epilog or ""), "",
    ])


def _command_section(name: str, command: Any, ctx: Any) -> str:
    lines = [f"## {name}", "", _plain(command.help or ""), "", _usage(command, ctx), ""]
    arguments = [p for p in command.get_params(ctx) if p.param_type_name == "argument"]
    if arguments:
        lines += ["| argument | help | required |", "| --- | --- | --- |"]
        lines += [_row(names, help_text) for names, help_text in _records(arguments, ctx)]
        lines.append("")
    lines += [_options(command, ctx), "", _examples(command.epilog or "")]
    return "\n".join(lines)


def _usage(command: Any, ctx: Any) -> str:
    return f"```text\n{' '.join(command.get_usage(ctx).split())}\n```"


def _options(command: Any, ctx: Any) -> str:
    options = [p for p in command.get_params(ctx) if p.param_type_name == "option"]
    rows = ["| option | help | default, range |", "| --- | --- | --- |"]
    rows += [_row(names, help_text) for names, help_text in _records(options, ctx)]
    return "\n".join(rows)


def _records(params: list[Any], ctx: Any) -> list[tuple[str, str]]:
    """(names and metavar, help) of each shown parameter, as `--help` gets them."""
    records = [p.get_help_record(ctx) for p in params if not getattr(p, "hidden", False)]
    return [(names, help_text or "") for names, help_text in filter(None, records)]


def _row(names: str, help_text: str) -> str:
    """One table row: the names, the help, and the extras Click appends to the help in brackets."""
    extras: list[str] = []
    while match := _EXTRA.search(help_text):  # before the markup is read: `[default: x]` is not a style
        extras.insert(0, match.group(1))
        help_text = help_text[: match.start()]
    return f"| `{_code(names)}` | {_cell(_plain(help_text))} | {'; '.join(f'`{_code(e)}`' for e in extras)} |"


def _examples(epilog: str) -> str:
    """An epilog's `Examples` (indented command lines) as a code block, the rest as text."""
    code, text = [], []
    for paragraph in _plain(epilog, join=False).split("\n\n"):
        if paragraph.strip() == "Examples":
            continue
        (code if paragraph.startswith("  ") else text).append(paragraph.strip())
    block = ["**Examples**", "", "```sh", *code, "```", ""] if code else []
    return "\n".join([*block, *(f"{t}\n" for t in text)])


def _plain(markup: str, *, join: bool = True) -> str:
    """Rich markup (Typer's `rich_markup_mode="rich"`) as plain text; paragraphs kept."""
    from rich.text import Text

    text = Text.from_markup(markup.replace("\b\n", "")).plain.strip("\n")
    if not join:
        return text
    return "\n\n".join(" ".join(p.split()) for p in text.split("\n\n"))


def _cell(text: str) -> str:
    """Text for a table cell: one line, Markdown's table and HTML characters escaped."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;").replace("*", "\\*")


def _code(text: str) -> str:
    return text.replace("|", "\\|")


def main(argv: list[str]) -> int:
    page = generate()
    if "--check" in argv:
        if PAGE.read_text(encoding="utf-8") != page:
            print(f"{PAGE} is stale: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(page, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
