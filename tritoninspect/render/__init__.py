"""Renderers over a saved report: terminal text, JSON, `--show` stages and `--dump` files.

Nothing here imports torch: reports are rendered offline, on any machine.
"""

from __future__ import annotations

from pathlib import Path

from tritoninspect.render.dump import dump_artifacts
from tritoninspect.render.fusion import render_fusion
from tritoninspect.render.json import JSONRenderer
from tritoninspect.render.stage import SHOW_STAGES, available_stages, missing_stage_message, render_stage
from tritoninspect.render.terminal import TerminalRenderer
from tritoninspect.report import Report

#: Output formats `render` accepts. "html" is reserved for a later renderer.
FORMATS = ("text", "json")


def render(
    report: Report,
    fmt: str,
    *,
    show: str | None = None,
    width: int | None = None,
    color: bool | None = None,
) -> str:
    """Render `report` as `fmt` ("text" or "json").

    With `show`, the text output is that stage's graphs instead of the report.
    Raises ValueError for an unknown or unsupported format, `show` with JSON,
    or a `show` stage the report has no graphs for (the message lists the
    stages it has; print it to stderr).
    """
    _check_format(fmt)
    if fmt == "json":
        if show is not None:
            raise ValueError("--show prints graphs as text; it cannot be combined with JSON output")
        return JSONRenderer().render(report)
    if show == "fusion":
        return render_fusion(report, color=color, width=width)
    if show is not None:
        if show in SHOW_STAGES and show not in available_stages(report):
            raise ValueError(missing_stage_message(report, show))
        return render_stage(report, show, color=color, width=width)
    return TerminalRenderer(width=width, color=color).render(report)


def _check_format(fmt: str) -> None:
    if fmt == "html":
        raise ValueError("html output is not supported yet")
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; choose one of: {', '.join(FORMATS)}")


def guess_format_from_path(path: str | Path | None) -> str:
    """The format an output file asks for: ".json" is JSON, anything else (or stdout) text.

    Raises ValueError for ".html", which is reserved but not implemented yet.
    """
    if path is None:
        return "text"
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix in (".html", ".htm"):
        raise ValueError("html output is not supported yet")
    return "text"


__all__ = [
    "FORMATS",
    "JSONRenderer",
    "SHOW_STAGES",
    "TerminalRenderer",
    "available_stages",
    "dump_artifacts",
    "guess_format_from_path",
    "render",
    "render_stage",
]
