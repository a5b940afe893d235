"""Renderers over saved documents (reports, diffs, check results), chosen by name.

`RENDERERS` is the one registry of output formats: each name maps to a function
`(document, *, color, width) -> str`. Commands write through `render.emit.emit`,
which looks formats up here; a new format (HTML) is one new entry. Each
renderer's module is imported only when its format is used, so `--json` alone
imports none of them. Nothing here imports torch: documents render offline.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, Protocol


class Renderer(Protocol):
    def __call__(self, document: Any, *, color: bool | None = None, width: int | None = None) -> str: ...


def _report_text(report: Any, *, color: bool | None = None, width: int | None = None) -> str:
    if getattr(report, "export", None) is not None:  # `tritoninspect export`'s report: its own sections
        from tritoninspect.render.export import render_export

        return render_export(report, color=color, width=width)
    from tritoninspect.render.overview import render_overview

    return render_overview(report, color=color, width=width)


def _report_summary(report: Any, *, color: bool | None = None, width: int | None = None) -> str:
    from tritoninspect.render.overview import render_summary

    return render_summary(report, color=color, width=width)


def _report_detail(report: Any, *, color: bool | None = None, width: int | None = None) -> str:
    from tritoninspect.render.terminal import TerminalRenderer

    return TerminalRenderer(width=width, color=color).render(report)


def _json(document: Any, *, color: bool | None = None, width: int | None = None) -> str:
    # Reports, diffs and check results each own their canonical, versioned JSON.
    return _advised(document).to_json()


def _advised(document: Any) -> Any:
    from tritoninspect.model.report import Report

    if isinstance(document, Report) and not document.advice:
        from tritoninspect.analyse.advice import with_advice

        document = with_advice(document)  # a report saved before Report.advice: the JSON still has it
    return document


def _breaks_text(report: Any, *, color: bool | None = None, width: int | None = None) -> str:
    from tritoninspect.render.breaks import render_breaks

    return render_breaks(report, color=color, width=width)


def _diff_text(diff: Any, *, color: bool | None = None, width: int | None = None) -> str:
    from tritoninspect.render.diff import DiffRenderer

    return DiffRenderer(width=width, color=color).render(diff)


def _ranks_text(summary: Any, *, color: bool | None = None, width: int | None = None) -> str:
    from tritoninspect.render.ranks import render_ranks

    return render_ranks(summary, render_as, color=color, width=width)


def _check_text(result: Any, *, color: bool | None = None, width: int | None = None) -> str:
    # One target's check result, or a project's (render/check.py).
    from tritoninspect.render.check import render_check, render_suite

    return render_check(result) if hasattr(result, "conditions") else render_suite(result)


def _junit(suite: Any, *, color: bool | None = None, width: int | None = None) -> str:
    from tritoninspect.render.junit import render_junit

    return render_junit(suite)


def _github(suite: Any, *, color: bool | None = None, width: int | None = None) -> str:
    from tritoninspect.render.annotations import render_annotations

    return render_annotations(suite)


def _html(document: Any, *, color: bool | None = None, width: int | None = None) -> str:
    # One self-contained page: a report's (graph) or a diff's (render/html_diff.py).
    from tritoninspect.model.diff_report import DiffReport
    from tritoninspect.render.html_diff import DiffPage, render_diff_html

    if isinstance(document, (DiffPage, DiffReport)):
        return render_diff_html(document)
    from tritoninspect.analyse.ranks import RankSummary

    if isinstance(document, RankSummary):  # `graph RANKS_DIR -o x.html` (render/html_ranks.py)
        from tritoninspect.render.html_ranks import render_ranks_html

        return render_ranks_html(document)
    from tritoninspect.render.html import render_html

    return render_html(document)


def _html_breaks(report: Any, *, color: bool | None = None, width: int | None = None) -> str:
    # `breaks -o x.html`: the same page, opening on the graph breaks.
    from tritoninspect.render.html import render_html

    return render_html(report, breaks_first=True)


#: `--show` views: a stage's graphs (or the output code), or what Inductor did around each kernel.
SHOW_VIEWS = ("dynamo", "aot", "post-grad", "code", "fusion", "export", "aoti")


def _show(view: str) -> Renderer:
    def render_view(report: Any, *, color: bool | None = None, width: int | None = None) -> str:
        if view == "fusion":
            from tritoninspect.render.fusion import render_fusion

            return render_fusion(report, color=color, width=width)
        from tritoninspect.render.stage import available_stages, missing_stage_message, render_stage

        if view not in available_stages(report):
            raise ValueError(missing_stage_message(report, view))
        return render_stage(report, view, color=color, width=width)

    return render_view


#: Output format -> renderer. "text" is the report as `graph` prints it (one screen: kernels,
#: findings, advice), "summary" the few lines `graph -o FILE` prints (counts and findings),
#: "detail" its stage-by-stage tables (`graph --detail`); "breaks", "diff" and "check" are the other
#: commands' text; "junit" and "github" a check suite's JUnit XML and GitHub Actions annotations;
#: "show:<view>" a `--show` view.
RENDERERS: dict[str, Renderer] = {
    "text": _report_text,
    "summary": _report_summary,
    "detail": _report_detail,
    "json": _json,
    "breaks": _breaks_text,
    "diff": _diff_text,
    "check": _check_text,
    "junit": _junit,
    "github": _github,
    "html": _html,
    "html:breaks": _html_breaks,
    "ranks": _ranks_text,
    **{f"show:{view}": _show(view) for view in SHOW_VIEWS},
}

#: File suffixes that name a format; any other suffix gets the command's text.
SUFFIXES = {".json": "json", ".html": "html", ".htm": "html"}


def render_as(document: Any, fmt: str, *, color: bool | None = None, width: int | None = None) -> str:
    """`document` in format `fmt` (a `RENDERERS` name), without a final newline.

    Raises ValueError for an unknown or not yet supported format, and for a
    `--show` view the report has no graphs for (the message lists the stages it has).
    """
    renderer = RENDERERS.get(fmt)
    if renderer is None:
        _unsupported(fmt)
    return renderer(document, color=color, width=width)


def _write_json(document: Any, write: Callable[[str], Any]) -> None:
    _advised(document).write_json(write)


#: Formats a document that can (`write_json`: a report, the ranks' document) writes in pieces; any other
#: document, or format, is rendered whole (`render_as`).
WRITERS: dict[str, Callable[[Any, Callable[[str], Any]], None]] = {"json": _write_json}


def write_as(document: Any, fmt: str, write: Callable[[str], Any], *, color: bool | None = None) -> None:
    """`render_as(document, fmt, color=color)` handed to `write`: a report's JSON in pieces, never held
    whole (the JSON of a 100 MiB trace is 75 MB: model/jsontext.py `write_json`)."""
    writer = WRITERS.get(fmt)
    if writer is None or not hasattr(document, "write_json"):
        write(render_as(document, fmt, color=color))
        return
    writer(document, write)


def guess_format_from_path(path: str | Path | None, text: str = "text") -> str:
    """The format an output file asks for: its suffix's (`SUFFIXES`), else `text` (also for stdout).

    Raises ValueError for a suffix whose format has no renderer yet (".html").
    """
    if path is None:
        return text
    fmt = SUFFIXES.get(Path(path).suffix.lower(), text)
    if fmt not in RENDERERS:
        _unsupported(fmt)
    return fmt


def _unsupported(fmt: str) -> NoReturn:
    if fmt in SUFFIXES.values():
        raise ValueError(f"{fmt} output is not supported yet")
    raise ValueError(f"unknown output format {fmt!r}; choose one of: {', '.join(RENDERERS)}")


def render(
    report: Any,
    fmt: str,
    *,
    show: str | None = None,
    width: int | None = None,
    color: bool | None = None,
) -> str:
    """Render a report as `fmt` ("text", "json", ...); with `show`, that `--show` view instead of the text.

    Raises ValueError for an unknown or unsupported format, `show` with another
    format than text, or a `show` stage the report has no graphs for (the
    message lists the stages it has; print it to stderr).
    """
    if show is not None:
        if fmt != "text":
            raise ValueError(f"--show prints graphs as text; it cannot be combined with {fmt.upper()} output")
        fmt = f"show:{show}"
    return render_as(report, fmt, color=color, width=width)


#: Renderer classes and helpers, imported from their modules on first use.
_LAZY = {
    "JSONRenderer": "tritoninspect.render.json",
    "TerminalRenderer": "tritoninspect.render.terminal",
    "SHOW_STAGES": "tritoninspect.render.stage",
    "available_stages": "tritoninspect.render.stage",
    "render_stage": "tritoninspect.render.stage",
    "render_fusion": "tritoninspect.render.fusion",
    "dump_artifacts": "tritoninspect.render.dump",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "JSONRenderer",
    "RENDERERS",
    "Renderer",
    "SHOW_STAGES",
    "SHOW_VIEWS",
    "TerminalRenderer",
    "available_stages",
    "dump_artifacts",
    "guess_format_from_path",
    "render",
    "render_as",
    "render_stage",
]
