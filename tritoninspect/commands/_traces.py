"""`graph` on a TORCH_TRACE folder of several ranks: a report per rank, and where the ranks differ."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from tritoninspect.model.errors import UsageError
from tritoninspect.render._safe import safe_text

if TYPE_CHECKING:
    from tritoninspect.source.parse import TraceLogs


def emit_ranks(logs: TraceLogs, *, json_out: bool, output: Path | None, view: str = "text",
               kernel: str | None = None, dump: Path | None = None, strict: bool = False,
               err: Console | None = None, quiet: bool = False) -> None:
    """A report per rank and where the ranks differ, as text or (`--json`) one document.

    `view` is how the text shows each rank ("text", "detail", "show:code"...); `kernel`
    narrows the printed ranks to that kernel (an error when no rank has it); `strict`
    exits 1 when any rank's report has warnings or errors; with `-o`, stdout gets each
    rank's short summary unless `quiet`. `--dump` writes one report's files: refused here
    (name one rank's log)."""
    import dataclasses

    import typer

    from tritoninspect.analyse.ranks import RankSummary
    from tritoninspect.model.errors import ExitCode
    from tritoninspect.render import SUFFIXES
    from tritoninspect.render.emit import emit
    from tritoninspect.run.traces import ranks_summary

    if dump is not None:
        raise UsageError(f"--dump {dump}: a dump holds one report's files, and {logs.text} holds several ranks",
                         hint="name one rank's log: tritoninspect graph LOG --dump DIR")
    # When nothing but the JSON document is written, each rank's facts and text come back, not its report.
    facts_only = json_out and kernel is None and (output is None or SUFFIXES.get(output.suffix.lower()) == "json")
    summary = ranks_summary(logs, facts_only=facts_only, json_text=json_out)
    if isinstance(summary, RankSummary):
        # As for one report: -o gets the whole document, stdout the view asked for.
        shown = dataclasses.replace(summary if kernel is None else summary.narrowed(kernel), view=view)
        whole = dataclasses.replace(summary, view="detail" if view == "detail" else "text")
    else:
        shown = whole = summary
    emit(whole, None, output, text="ranks")
    if json_out or not output or view.startswith("show:"):
        emit(summary if json_out else shown, "json" if json_out else "ranks")
    elif not quiet:  # -o: the file has the document, stdout each rank's short summary (as for one report)
        emit(dataclasses.replace(shown, view="summary"), "ranks")
    problems = summary.problems
    if strict and problems:
        where = ", ".join(dict.fromkeys(name for name, _ in problems))
        if err is not None:
            err.print(f"[yellow]--strict: {len(problems)} diagnostic(s) ({escape(safe_text(where))})[/]")
        raise typer.Exit(ExitCode.FINDINGS)
