"""The CUDA-graph and epilogue sections of the text report: per compiled graph, whether Inductor's CUDA-graph
tree took it and why not (`graph --cudagraphs`); per user kernel, the neighbours fused into it or refused."""

from __future__ import annotations

from pathlib import Path

from rich.console import RenderableType
from rich.text import Text

from tritoninspect.analyse.cudagraphs import launch_place, site_text
from tritoninspect.render._widgets import heading
from tritoninspect.model.report import CudagraphReason, CudagraphUse, EpilogueFusion, Report


def cudagraph_section(report: Report, cwd: Path) -> list[RenderableType]:
    """One block per compiled graph; empty without `--cudagraphs`."""
    if not report.cudagraphs:
        return []
    lines: list[RenderableType] = [heading("CUDA graphs (reduce-overhead)", len(report.cudagraphs))]
    for use in report.cudagraphs:
        lines.append(Text(f"[{use.compile_id}] {use.part}: {_verdict(use)}", style="" if use.cudagraphed else "yellow"))
        for reason in use.reasons:
            lines.append(Text(f"  {reason_text(reason)}"))
    return lines


def _verdict(use: CudagraphUse) -> str:
    if use.basis == "predicted":
        said = "CUDA-graphed" if use.cudagraphed else "not CUDA-graphed"
        return f"{said} (predicted from Inductor's checks; compile-only mode cannot record)"
    said = "CUDA-graphed" if use.cudagraphed else "run without CUDA graphs"
    counts = "" if use.recordings is None else (
        f": {use.recordings} recorded, {use.replays} replayed, {use.warmups} warm-up, {use.eager} without a graph"
        + (f" ({use.functions} functions)" if use.functions and use.functions > 1 else ""))
    return f"{said} (measured){counts}"


def reason_text(reason: CudagraphReason) -> str:
    """One reason on one line: who, where, torch's words, when it was decided."""
    who = ""
    if reason.when == "partition":
        where = f" at {site_text(reason.site)}" if reason.site else ""
        feeds = f"; its value reaches {reason.kernel}" if reason.kernel else ""
        return f"{reason.text}{where}{feeds} [{reason.kind}, the rest is CUDA-graphed]"
    if reason.kernel:
        who = f"{reason.kernel} writes {reason.param} (graph input {reason.input}) in place"
    elif reason.op:
        who = f"{reason.op} writes graph input {reason.input}"
    where = f" at {site_text(reason.site)}" if reason.site else ""
    when = "at compile time" if reason.when == "compile" else "by the CUDA-graph tree at a call"
    head = f"{who}{where}: " if who or where else ""
    return f"{head}{reason.text} [{reason.kind}, {when}]"


def epilogue_section(report: Report, cwd: Path, *, all_kernels: bool = True) -> list[RenderableType]:
    """Each user kernel's candidate epilogues (--detail); the default view shows it only when fusion was on.
    Each launch says its graph (`[0/0 backward]`): one compile id holds a forward and a backward graph,
    and a kernel launched in both has a line for each."""
    shown = [f for f in report.epilogues if all_kernels or (f.available and f.enabled)]
    if not shown:
        return []
    lines: list[RenderableType] = [heading("Epilogue fusion into user kernels", len(shown))]
    for fusion in shown:
        lines.append(Text(f"{launch_place(fusion)} {fusion.kernel}: {_state(fusion)}"))
        for n in fusion.neighbours:
            verdict = {True: "fused", False: "refused", None: "not considered"}[n.fused]
            why = f": {n.reason}" if n.reason else ""
            lines.append(Text(f"  {n.node} ({', '.join(n.ops) or '?'}): {verdict}{why}"))
    return lines


def _state(fusion: EpilogueFusion) -> str:
    if not fusion.available:
        return "not available on this torch (user-kernel epilogue fusion came with torch 2.12, pytorch/pytorch#173662)"
    blocked = f"; blocked: {'; '.join(fusion.blockers)}" if fusion.blockers else "; the kernel could take an epilogue"
    if not fusion.enabled:
        return ("off (torch._inductor.config.epilogue_fusion_user_defined_triton_kernel is False, the default)"
                + blocked)
    return "on" + blocked


def cudagraph_html(report: Report) -> str:
    """The HTML section: one table row per reason (or per graph without one), and the epilogue table."""
    from tritoninspect.render._html import esc, grid_table

    parts = []
    if report.cudagraphs:
        rows = []
        for use in report.cudagraphs:
            verdict = esc(_verdict(use))
            for reason in use.reasons or (None,):
                rows.append([esc(use.compile_id), esc(use.part), verdict,
                             esc(reason_text(reason)) if reason is not None else ""])
        parts.append('<section id="cudagraphs"><h2>CUDA graphs (reduce-overhead)</h2>'
                     + grid_table(("compile id", "graph", "verdict", "reason"), rows) + "</section>")
    if report.epilogues:
        rows = [[esc(f.compile_id), esc(f.part), esc(f.kernel or "?"), esc(_state(f)),
                 esc("; ".join(f"{n.node} ({', '.join(n.ops)}): "
                               f"{ {True: 'fused', False: 'refused', None: 'not considered'}[n.fused]}"
                               + (f" ({n.reason})" if n.reason else "") for n in f.neighbours))]
                for f in report.epilogues]
        parts.append('<section id="epilogues"><h2>Epilogue fusion into user kernels</h2>'
                     + grid_table(("compile id", "graph", "kernel", "state", "neighbours"), rows) + "</section>")
    return "".join(parts)
