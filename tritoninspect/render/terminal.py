"""The terminal renderer: the report as Rich text, one section per kind of finding."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.text import Text

from tritoninspect.render import _format as fmt
from tritoninspect.render._console import console_text, make_console, print_blocks
from tritoninspect.render._failure import failure_section, recompile_limit_section
from tritoninspect.render._hazards import findings_section
from tritoninspect.render._findings import advice_block, findings_block
from tritoninspect.render._safe import safe_record
from tritoninspect.render.cudagraphs import cudagraph_section, epilogue_section
from tritoninspect.render._kernels import kernel_details, kernel_table, verdicts
from tritoninspect.render._widgets import ALERT, add_row, heading, table
from tritoninspect.model.report import DEVICE_PROBE_MEANING, Mode, Report

#: Label per graph stage for the counts line, in pipeline order.
STAGE_LABELS = {
    "dynamo": "Dynamo graphs",
    "aot_forward": "AOT forward",
    "aot_backward": "AOT backward",
    "aot_inference": "AOT inference",
    "post_grad": "post-grad",
    "output_code": "output code",
}

#: A section turns the report into renderables; an empty list omits the section.
Section = Callable[[Report, Path], Sequence[RenderableType]]


class TerminalRenderer:
    """Renders a report for a human: header, counts, kernels, then breaks and diagnostics."""

    def __init__(self, width: int | None = None, color: bool | None = None) -> None:
        self.width = width
        self.color = color

    def render(self, report: Report) -> str:
        """The whole report as text (ANSI-coloured only when colour is on)."""
        console = make_console(width=self.width, color=self.color)
        self.print_to(console, report)
        return console_text(console)

    def print_to(self, console: Console, report: Report) -> None:
        """Print every non-empty section to `console`, separated by blank lines."""
        report = safe_record(report)
        # Resolved once so every location in one report is relative to the same place.
        cwd = Path.cwd()
        print_blocks(console, (section(report, cwd) for section in SECTIONS))


def header(report: Report, cwd: Path) -> list[RenderableType]:
    """The report's first lines: tool and target, mode, versions, options, inputs."""
    meta = report.meta
    lines: list[RenderableType] = [
        Text.assemble((f"{meta.tool} {meta.tool_version}", "bold"), "  target: ", (meta.target, "bold")),
        mode_line(report),
    ]
    versions = [f"torch {meta.torch}", f"triton {meta.triton or 'unknown'}", f"python {meta.python}"]
    options = [f"stage: {meta.stage}", f"dynamic: {_dynamic(meta.dynamic)}", f"backward: {fmt.backward_text(meta)}"]
    lines.append(Items(versions, style="dim"))
    lines.append(Items(options, style="dim"))
    if meta.inputs:
        calls = f" (first of {meta.calls} calls)" if meta.calls > 1 else ""
        lines.append(Text("inputs: " + ", ".join(meta.inputs) + calls, style="dim"))
    return lines


def _dynamic(dynamic: bool | None) -> str:
    return "auto" if dynamic is None else ("yes" if dynamic else "no")


def mode_line(report: Report) -> Text:
    """What produced the report, on one line: gpu, compile-only (said loudly), or a trace."""
    # Compile-only numbers come from Triton's interpreter on CPU: say so loudly,
    # so nobody reads launch counts or outputs as GPU behaviour.
    meta = report.meta
    if meta.mode == Mode.COMPILE_ONLY.value:
        detail = "CPU; kernels ran in Triton's interpreter; no GPU timings"
        return Text(f"mode: compile-only ({detail})", style="bold black on yellow")
    if meta.mode == Mode.GPU.value:
        return Text(f"mode: gpu ({meta.device})", style="bold green")
    if meta.mode == Mode.TRACE.value:
        rank = f", rank {meta.rank}" if meta.rank is not None else ""
        run = "a run (device unknown)" if meta.device == "unknown" else f"a {meta.device} run"
        return Text(f"mode: trace (read from the TORCH_TRACE log of {run}{rank}; "
                    "not run here: no launch counts)", style="bold cyan")
    return Text(f"mode: {meta.mode} ({meta.device})", style="bold")


def count_lines(report: Report, cwd: Path) -> list[RenderableType]:
    """The graphs per stage, graph breaks and recompiles, counted."""
    # Dynamo is always counted (0 is news); later stages only when something was captured.
    counts = {stage: _graph_count(report, stage) for stage in STAGE_LABELS}
    graphs = [f"{label}: {counts[s]}" for s, label in STAGE_LABELS.items() if s == "dynamo" or counts[s]]
    skipped = sum(b.frame_skipped for b in report.graph_breaks)
    probed = sum(bool(b.device_probe) for b in report.graph_breaks)
    after = [f"{skipped} frame skipped"] * bool(skipped) + [f"{probed} after a compile-only device probe"] * bool(probed)
    breaks = f"graph breaks: {len(report.graph_breaks)}" + (f" ({', '.join(after)})" if after else "")
    limits = f" · recompile limit hit: {len(report.recompile_limits)}" if report.recompile_limits else ""
    return [Items(graphs), Text(f"{breaks} · recompiles: {len(report.recompiles)}{limits}")]


class Items:
    """Items joined by " · ", wrapped between two items, never inside one ("output code: 6" stays
    whole at 80 or 100 columns)."""

    def __init__(self, items: Sequence[str], style: str = "") -> None:
        self.items, self.style = list(items), style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        line = ""
        for item in self.items:
            joined = f"{line} · {item}" if line else item
            if line and cell_len(joined) > options.max_width:
                yield Text(line, style=self.style)
                joined = item
            line = joined
        if line:
            yield Text(line, style=self.style)


def _graph_count(report: Report, stage: str) -> int:
    graphs = [g for g in report.graphs if g.stage == stage]
    if stage == "dynamo":
        return len({g.compile_id for g in graphs})
    return len({(g.compile_id, g.part) for g in graphs})


def _opaque_ops(report: Report, cwd: Path) -> list[RenderableType]:
    if not report.opaque_ops:
        return []
    t = table("compile id", "stage", "custom op", "node", "kernels launched inside")
    for op in sorted(report.opaque_ops, key=lambda o: fmt.compile_id_key(o.compile_id)):
        unseen = "unknown (not in a trace)" if report.meta.mode == "trace" else "none seen"
        inside = ", ".join(fmt.kernels_inside(report, op)) or unseen
        add_row(t, op.compile_id, op.stage, Text(op.op, style="yellow"), op.node, inside)
    note = Text("custom ops Inductor calls as a black box: it cannot see, fuse or reorder the kernels inside",
                style="dim")
    # One op appears once per stage that holds it: count the ops, not the rows.
    ops = len({(op.compile_id, op.op) for op in report.opaque_ops})
    stages = len({op.stage for op in report.opaque_ops})
    title = f"Opaque ops ({ops}, seen at {fmt.plural(stages, 'stage')})" if stages > 1 else f"Opaque ops ({ops})"
    return [heading(title), note, t]


def _graph_breaks(report: Report, cwd: Path) -> list[RenderableType]:
    """The run's graph breaks; with `--kernel NAME`, not those tied only to other kernels (said in a line)."""
    if not report.graph_breaks:
        return []
    shown = report.breaks_shown()
    left = len(report.graph_breaks) - len(shown)
    title = heading("Graph breaks", len(shown)) if not left else \
        Text.assemble(heading(f"Graph breaks ({len(shown)} of the run's {len(report.graph_breaks)})"),
                      (f": {left} tied only to other kernels left out", "dim"))
    if not shown:
        return [title]
    t = table("compile id", "location", "reason", "frame skipped")
    t.columns[2].ratio = 1  # the reason takes the room left and wraps; the rest stay on one line
    for i in (0, 1, 3):
        t.columns[i].no_wrap = True
    for b in shown:
        skipped = Text("yes: ran eagerly", style=ALERT) if b.frame_skipped else Text("no")
        # The headline names the cause even when the reason opens with how Dynamo handled it.
        headline = Text(b.title())
        if b.device_probe:
            headline.append(f" · {DEVICE_PROBE_MEANING} ({probe_place(b.device_probe, cwd)})", style=ALERT)
        add_row(t, b.trace_id, fmt.location(b.file, b.line, cwd=cwd), headline, skipped)
    return [title, t]


def probe_place(frame: str, cwd: Path) -> str:
    """A device probe's "file:line in function" for a table: an installed library's file from its
    package down (`liger_kernel/utils.py:47 in infer_device`), else as `fmt.location` shows it."""
    location, _, function = frame.rpartition(" in ")
    file, _, line = location.rpartition(":")
    for site in ("/site-packages/", "/dist-packages/"):
        if site in file:
            return f"{file.rsplit(site, 1)[1]}:{line} in {function}"
    return f"{fmt.location(file, int(line) if line.isdigit() else None, cwd=cwd)} in {function}"


def _recompiles(report: Report, cwd: Path) -> list[RenderableType]:
    if not report.recompiles:
        return []
    t = table("compile id", "reason")
    for r in report.recompiles:
        add_row(t, r.compile_id, fmt.first_line(r.reason))
    return [heading("Recompiles", len(report.recompiles)), t]


def _unattributed_fallbacks(report: Report, cwd: Path) -> list[RenderableType]:
    fallbacks = report.mutation_fallbacks_unattributed
    if not fallbacks:
        return []
    lines = [Text(f"[{f.compile_id}] {fmt.first_line(f.cause)}") for f in fallbacks]
    return [heading("Mutation fallbacks, kernel not identified", len(fallbacks)), *lines]


SEVERITY_STYLE = {"error": ALERT, "warning": "yellow", "note": "dim"}


def _findings(report: Report, cwd: Path) -> list[RenderableType]:
    """Every finding, a merged one with each finding it holds, then the advice (as the default view's)."""
    from tritoninspect.analyse.advice import advise

    found = advise(report)
    return [*findings_block(found, detail=True), *([Text("")] if found else []), *advice_block(found)]


def _diagnostics(report: Report, cwd: Path) -> list[RenderableType]:
    if not report.diagnostics:
        return []
    lines = [
        Text.assemble(
            (d.severity, SEVERITY_STYLE.get(d.severity, "")), f" {d.source}: ", fmt.first_line(d.message)
        )
        for d in report.diagnostics
    ]
    return [heading("Diagnostics", len(report.diagnostics)), *lines]


SECTIONS: tuple[Section, ...] = (
    header,
    failure_section,
    count_lines,
    kernel_table,
    kernel_details,
    findings_section,
    _opaque_ops,
    _graph_breaks,
    _recompiles,
    recompile_limit_section,
    _unattributed_fallbacks,
    cudagraph_section,
    epilogue_section,
    _findings,
    _diagnostics,
    verdicts,
)
