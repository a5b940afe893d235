"""The `tritoninspect` command line: builds the Typer app and registers the commands.

Each command is one module of `tritoninspect/commands/`; they share option aliases
(`commands/_options.py`), one error path and capture step (`commands/_edge.py`), and
one way out (`render/emit.py`). Heavy imports (torch, triton, the capture layer)
happen inside commands, so `tritoninspect --help` starts fast.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from tritoninspect import __version__
from tritoninspect.commands import breaks, check, diff, graph

EXIT_CODES = (
    "Exit codes: 0 ok · 1 findings (--strict, check) · 2 usage · 3 target or inputs · "
    "4 your code raised · 5 environment (no GPU, no Triton) · 6 internal error · 7 unreadable saved report."
)

app = typer.Typer(
    name="tritoninspect",
    help="See what torch.compile did with your user-defined Triton kernels.",
    epilog=EXIT_CODES,
    rich_markup_mode="rich",
    no_args_is_help=True,
    # No shell-completion options: detecting the shell costs start-up time on every call.
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tritoninspect {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        Optional[bool], typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = None,
) -> None:
    """See what torch.compile did with your user-defined Triton kernels."""


for _command in (graph.graph, diff.diff, breaks.breaks, check.check):
    app.command()(_command)


def main() -> None:
    """Console-script entry point."""
    from tritoninspect.capture.scratch import scratch_inductor_cache

    # Before torch is imported: what Inductor writes goes to a directory removed at exit.
    with scratch_inductor_cache():
        app()
