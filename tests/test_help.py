"""Help written for users (commands/_help.py): real metavars, examples and the example_inputs convention."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from tritoninspect.cli import app

COMMANDS = ("graph", "diff", "breaks", "check")


def help_of(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "120", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_no_type_placeholders(command: str | None) -> None:
    text = help_of(*([command] if command else []))
    assert not re.search(r"<(bool|str|path|int|list\[|int range)", text), text
    assert "{" not in text  # no {TARGET} in the usage line


@pytest.mark.parametrize("command", COMMANDS)
def test_examples_and_the_inputs_convention(command: str) -> None:
    text = " ".join(help_of(command).replace("│", " ").split())
    assert "Examples" in text and f"tritoninspect {command} " in text
    assert "staticmethod example_inputs() on the model class, else a module-level example_inputs()" in text


def test_usage_lines() -> None:
    assert "Usage: tritoninspect graph [OPTIONS] TARGET" in help_of("graph")
    assert "Usage: tritoninspect diff [OPTIONS] A B [C ...]" in help_of("diff")
    assert "SPEC" in help_of("graph") and "KERNEL=ENTRY" in help_of("check")


def test_command_annotations_are_not_strings() -> None:
    """typer evaluates string annotations on every start (`--help` too): the command modules keep theirs as
    objects (cli.py's docstring)."""
    import inspect

    from tritoninspect.commands import breaks, check, diff, export, graph

    for command in (graph.graph, diff.diff, breaks.breaks, check.check, export.export):
        strings = [name for name, p in inspect.signature(command).parameters.items() if isinstance(p.annotation, str)]
        assert not strings, f"{command.__name__}: string annotations {strings}"


@pytest.mark.parametrize("command", [*COMMANDS, "export"])
def test_a_paragraph_is_wrapped_to_the_terminal_not_the_source(command: str) -> None:
    """Typer's rich markup keeps a docstring's line breaks: `diff --help` read "...share no state; the" then
    "diff opens ..." on the next line, at any width. At 1000 columns each paragraph of the description fits one
    line."""
    from tritoninspect.cli import app as cli

    result = CliRunner().invoke(cli, [command, "--help"], env={"COLUMNS": "1000", "NO_COLOR": "1"})
    lines = [line.strip() for line in result.output.split("╭")[0].splitlines()]  # before the panels
    description = "\n".join(lines[lines.index(next(x for x in lines if x.startswith("Usage:"))) + 1:])
    paragraphs = [p.strip() for p in description.split("\n\n") if p.strip()]
    assert paragraphs and all("\n" not in p for p in paragraphs), description
