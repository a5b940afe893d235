"""`--show STAGE`: print every captured graph of one stage, user-kernel lines marked."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.syntax import Syntax
from rich.text import Text

from tritoninspect.render import _format as fmt
from tritoninspect.render._console import console_text, make_console, resolve_color
from tritoninspect.render._safe import safe_record, safe_text
from tritoninspect.model.report import STAGES, Graph, Report

#: `--show` names and the report stages each one covers.
SHOW_STAGES: dict[str, tuple[str, ...]] = {
    "dynamo": ("dynamo",),
    "aot": ("aot_forward", "aot_backward", "aot_inference"),
    "post-grad": ("post_grad", "post_grad_final"),
    "code": ("output_code",),
    # `tritoninspect export` reports: torch.export's program and AOTInductor's generated code.
    "export": ("export",),
    "aoti": ("aoti_output_code",),
}

#: Gutter for marked lines in plain output (Syntax draws its own pointer when coloured).
MARK = "► "

#: Every node or launch of a user kernel in a graph goes through one of these HOPs.
_HOP_PREFIX = "triton_kernel_wrapper_"


def available_stages(report: Report) -> list[str]:
    """The `--show` names that have at least one graph in this report."""
    present = {g.stage for g in report.graphs}
    return [name for name, stages in SHOW_STAGES.items() if present.intersection(stages)]


def stage_graphs(report: Report, show: str) -> list[Graph]:
    """Graphs for one `--show` name, by compile id then pipeline order."""
    if show not in SHOW_STAGES:
        raise ValueError(f"unknown stage {show!r}; choose one of: {', '.join(SHOW_STAGES)}")
    stages = SHOW_STAGES[show]
    graphs = [g for g in report.graphs if g.stage in stages]
    return sorted(graphs, key=lambda g: (fmt.compile_id_key(g.compile_id), STAGES.index(g.stage)))


def missing_stage_message(report: Report, show: str) -> str:
    """What to tell the user when a report has no graph of the stage they asked for."""
    have = available_stages(report)
    listing = ", ".join(have) if have else "none (no graphs were captured)"
    return safe_text(f"this report has no {show} graphs; stages it has: {listing}")


def render_stage(report: Report, stage: str, *, color: bool | None = None, width: int | None = None) -> str:
    """Every graph of `stage` with a `== stage part [id] ==` heading and user-kernel lines marked.

    Returns `missing_stage_message` when the report has no such graph; callers
    that need to tell the two apart check `available_stages` first.
    """
    report = safe_record(report)
    graphs = stage_graphs(report, stage)
    if not graphs:
        return missing_stage_message(report, stage)
    pattern = kernel_line_pattern(report)
    console = make_console(width=width, color=color)
    coloured = resolve_color(color)
    for i, graph in enumerate(graphs):
        if i:
            console.print()
        console.print(Text(_heading(graph), style="bold"))
        marked = marked_lines(graph.code, pattern)
        if coloured:
            console.print(_syntax(graph.code, marked))
        else:
            # Code is printed unwrapped and uncropped, so it can be copied back out.
            console.print(_plain(graph.code, marked), no_wrap=True, overflow="ignore", crop=False)
    return console_text(console)


def _heading(graph: Graph) -> str:
    # "aot_forward forward" says the same thing twice: drop the part when the stage names it.
    part = "" if fmt.graph_name(graph.stage, graph.part) == graph.stage else f" {graph.part}"
    return f"== {graph.stage}{part} [{graph.compile_id}] =="


def kernel_line_pattern(report: Report) -> re.Pattern[str]:
    """A regex matching any line that mentions a user kernel, its op or its Inductor name."""
    alternatives = [re.escape(_HOP_PREFIX)]
    alternatives += [rf"(?<!\w){re.escape(k.name)}(?:_\d+)?(?!\w)" for k in report.kernels]
    alternatives += [rf"(?<!\w){re.escape(name)}(?!\w)" for name in sorted(_inductor_names(report))]
    # An op "ns::name" appears in FX and output code as torch.ops.ns.name.default.
    alternatives += [rf"(?<!\w){re.escape(op.replace('::', '.'))}(?!\w)" for op in sorted(_op_names(report))]
    return re.compile("|".join(alternatives))


def _inductor_names(report: Report) -> set[str]:
    return {o.inductor_name for k in report.kernels for o in k.occurrences if o.inductor_name}


def _op_names(report: Report) -> set[str]:
    names = {op.op for op in report.opaque_ops}
    names |= {o.custom_op for k in report.kernels for o in k.occurrences if o.custom_op}
    return names


def marked_lines(code: str, pattern: re.Pattern[str]) -> set[int]:
    """1-based numbers of the lines of `code` that `pattern` matches."""
    return {n for n, line in enumerate(code.splitlines(), start=1) if pattern.search(line)}


def _plain(code: str, marked: Iterable[int]) -> Text:
    marked = set(marked)
    lines = code.splitlines()
    text = Text()
    for n, line in enumerate(lines, start=1):
        gutter = MARK if n in marked else " " * len(MARK)
        text.append(gutter + line + ("\n" if n < len(lines) else ""), style="bold" if n in marked else "")
    return text


def _syntax(code: str, marked: set[int]) -> Syntax:
    return Syntax(
        code,
        "python",
        theme="ansi_dark",
        background_color="default",
        line_numbers=True,  # Rich draws its highlight pointer in the line-number gutter
        highlight_lines=marked,
        word_wrap=True,  # wrap rather than crop: output code has very long lines
    )
