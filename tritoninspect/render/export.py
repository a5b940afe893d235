"""The terminal sections of an export report (`tritoninspect export`): program, kernels, package, findings."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from rich.console import RenderableType
from rich.text import Text

from tritoninspect.render import _format as fmt
from tritoninspect.render._failure import STAGE_WORDS, failure_section
from tritoninspect.render._widgets import ALERT, ENTRY_STYLES, heading
from tritoninspect.render._wordtable import WordTable
from tritoninspect.model.report import Mode, Report
from tritoninspect.model.report_export import AotiPackage, ExportFinding

#: Lines of AOTInductor's generated code shown per kernel (the whole code is in the JSON and --dump).
CODE_LINES_PER_KERNEL = 6


def _summary(report: Report, cwd: Path) -> list[RenderableType]:
    info = report.export
    if info is None:
        return []
    mode = "strict" if info.strict else "non-strict"
    taken = f"{info.export_time_s:.1f} s" if info.export_time_s is not None else "did not finish"
    dynamic = {"none": "none (static shapes)", "auto": "Dim.AUTO on every dimension",
               "target": "the target's export_dynamic_shapes()"}.get(info.dynamic_shapes, info.dynamic_shapes)
    return [
        heading("torch.export"),
        Text.assemble("mode: ", (mode, "bold"), f" ({info.strict_source}) · dynamic shapes: {dynamic} · "
                      f"export: {taken}"),
    ]


def _signature(report: Report, cwd: Path) -> list[RenderableType]:
    info = report.export
    if info is None or not info.signature:
        return []
    t = WordTable("", "kind", "name", "target", "tensor")
    for entry in info.signature:
        style = "yellow" if "MUTATION" in entry.kind else ""
        t.add_row(entry.direction, Text(entry.kind, style=style), entry.name, entry.target or fmt.NONE,
                entry.tensor or "")
    out: list[RenderableType] = [heading("Graph signature", len(info.signature)), t]
    mutations = [e for e in info.decomposed_signature if "MUTATION" in e.kind]
    known = {(e.kind, e.target) for e in info.signature}
    added = [e for e in mutations if (e.kind, e.target) not in known]
    if added:
        out.append(Text("after run_decompositions() (the functional program AOTInductor lowers), kernel writes "
                        "become mutation outputs:", style="dim"))
        for e in added:
            out.append(Text.assemble("  output  ", (e.kind, "yellow"), f"  {e.name} -> {e.target or fmt.NONE}"))
    return out


def _program(report: Report, cwd: Path) -> list[RenderableType]:
    graphs = [g for g in report.graphs if g.stage == "export"]
    if not graphs:
        return []
    text = Text()
    for line in graphs[0].code.rstrip().splitlines():
        marked = "triton_kernel_wrapper" in line or _calls_custom_op(report, line)
        text.append(("▶ " if marked else "  ") + line + "\n", style="bold" if marked else "dim")
    return [heading("Exported program"), text]


def _calls_custom_op(report: Report, line: str) -> bool:
    ops = {k.op for k in report.export.kernels if k.op} if report.export else set()
    return any(f"torch.ops.{op.replace('::', '.')}" in line for op in ops)


def _kernels(report: Report, cwd: Path) -> list[RenderableType]:
    info = report.export
    if info is None or not info.kernels:
        return []
    t = WordTable("kernel", "entry", "in the exported program", "node", "op", "writes", "in AOTI code")
    for k in info.kernels:
        appears = {"hop": f"HOP, kernel_idx={k.kernel_idx}", "triton_op": "triton_op call (not decomposed)",
                   "custom_op": "opaque custom_op call", "absent": "absent (export did not finish)"}[k.appears_as]
        in_code = fmt.NONE if k.in_aoti_code is None else ("yes" if k.in_aoti_code else "no")
        writes = fmt.NONE if k.writes is None else (", ".join(k.writes) or "nothing")
        t.add_row(Text(k.name, style="bold"), Text(k.entry, style=ENTRY_STYLES.get(k.entry, "")), appears,
                k.node or fmt.NONE, k.op or fmt.NONE, writes, in_code)
    return [heading("Kernels", len(info.kernels)), t]


def _dynamic(report: Report, cwd: Path) -> list[RenderableType]:
    info = report.export
    if info is None or not info.dynamic_dims:
        return []
    t = WordTable("dimension", "asked", "example", "exported", "range")
    for d in info.dynamic_dims:
        exported = Text(f"{d.exported} (specialised)", style=ALERT) if d.specialised else Text(d.exported)
        t.add_row(f"{d.input}.size({d.dim})", d.requested, str(d.example), exported, d.range or fmt.NONE)
    out: list[RenderableType] = [heading("Dynamic dimensions", len(info.dynamic_dims)), t]
    if info.constraints:
        c = WordTable("kernel", "argument", "kind", "value", "equals", "effect")
        for a in info.constraints:
            effect = Text(a.effect, style=ALERT if a.effect == "specialised" else "")
            c.add_row(a.kernel, a.arg, a.kind, a.value, a.dim, effect)
        out += [Text("kernel arguments carrying those sizes", style="dim"), c]
    return out


def _aoti(report: Report, cwd: Path) -> list[RenderableType]:
    info = report.export
    if info is None or info.aoti is None:
        return []
    package = info.aoti
    lines: list[RenderableType] = [heading("AOTInductor"), _status_line(report, package)]
    lines += [Text(f"note: {note}", style="yellow") for note in package.notes]
    names = [k.name for k in info.kernels] + [k.op.replace("::", ".") for k in info.kernels if k.op]
    if any(k.appears_as == "custom_op" for k in info.kernels):
        names.append("proxy_executor_call_function")  # how the C++ wrapper calls a custom op
    for graph in (g for g in report.graphs if g.stage == "aoti_output_code"):
        title, _, code = graph.code.partition("\n")
        lines.append(Text(f"generated code {title.lstrip('/# ')}: lines naming a kernel or its op", style="dim"))
        lines.append(_code_excerpt(code, names))
    return lines


def _status_line(report: Report, package: AotiPackage) -> Text:
    if package.status == "skipped":
        return Text("not run (--stage export)", style="dim")
    where = package.device or "?"
    if report.meta.mode == Mode.COMPILE_ONLY.value:
        where += ": not a GPU package"
    parts = [f"package: {package.status} for {where}"]
    if package.build_time_s is not None:
        verb = "built in" if package.status == "built" else "gave up after"
        parts.append(f"{verb} {package.build_time_s:.1f} s")
    if package.loaded is not None:
        parts.append("loaded" if package.loaded else "did not load")
    if package.matches_eager is not None:
        diff = f" (max abs diff {package.max_abs_diff:g})" if package.max_abs_diff is not None else ""
        parts.append(("matches eager" if package.matches_eager else "DIFFERS from eager") + diff)
    style = ALERT if package.status == "failed" or package.matches_eager is False else ""
    return Text(" · ".join(parts), style=style)


def _code_excerpt(code: str, names: Sequence[str]) -> Text:
    text = Text()
    lines = code.splitlines()
    for name in dict.fromkeys(names):
        hits = [i for i, line in enumerate(lines) if name in line]
        for i in hits[:CODE_LINES_PER_KERNEL]:
            text.append(f"{i + 1:>6}  {lines[i].strip()[:160]}\n")
        if len(hits) > CODE_LINES_PER_KERNEL:
            text.append(f"        ... {len(hits) - CODE_LINES_PER_KERNEL} more lines naming {name}\n", style="dim")
    return text if text.plain else Text("        (no line names a kernel or its op)\n", style="dim")


def _findings(report: Report, cwd: Path) -> list[RenderableType]:
    info = report.export
    if info is None or not info.findings:
        return []
    lines: list[RenderableType] = [heading("Findings", len(info.findings))]
    for f in info.findings:
        lines.extend(_finding(f))
    return lines


_SEVERITY_STYLE = {"error": ALERT, "warning": "yellow", "note": "dim"}


def _finding(f: ExportFinding) -> list[RenderableType]:
    where = f"[{f.stage}]" + (f" {f.kernel}" if f.kernel else "")
    out: list[RenderableType] = [Text.assemble((f.severity, _SEVERITY_STYLE.get(f.severity, "")), f" {where}: ",
                                               f.message)]
    if f.hint:
        out.append(Text(f"  hint: {f.hint}"))
    if f.issue:
        out.append(Text(f"  see: {f.issue}", style="dim"))
    return out


def _header(report: Report, cwd: Path) -> list[RenderableType]:
    meta = report.meta
    if meta.mode == Mode.COMPILE_ONLY.value:
        # As the graph report says it: nothing here is GPU behaviour.
        mode = Text("mode: compile-only (CPU; kernels ran in Triton's interpreter; no GPU package)",
                    style="bold black on yellow")
    else:
        mode = Text(f"mode: {meta.mode} ({meta.device})", style="bold green" if meta.mode == "gpu" else "bold")
    lines: list[RenderableType] = [
        Text.assemble((f"{meta.tool} {meta.tool_version} export", "bold"), "  target: ", (meta.target, "bold")),
        mode, Text(f"torch {meta.torch} · triton {meta.triton or 'unknown'} · python {meta.python}", style="dim"),
    ]
    if meta.inputs:
        lines.append(Text("inputs: " + ", ".join(meta.inputs), style="dim"))
    return lines


def _diagnostics(report: Report, cwd: Path) -> list[RenderableType]:
    if not report.diagnostics:
        return []
    lines = [Text.assemble((d.severity, _SEVERITY_STYLE.get(d.severity, "")), f" {d.source}: ",
                           fmt.first_line(d.message)) for d in report.diagnostics]
    return [heading("Diagnostics", len(report.diagnostics)), *lines]


#: Where a sentence ends: ". " before a capital letter, except after "e.g" and "i.e".
_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)\.\s+(?=[A-Z])")


def _relative(frame: str) -> str:
    cwd = str(Path.cwd()) + os.sep
    return frame[len(cwd):] if frame.startswith(cwd) else frame


#: Characters of torch's message kept in the `error:` line (the whole message is in the report).
ERROR_HEADLINE_CHARS = 120


def export_failure_line(report: Report) -> str:
    """One short line for stderr: the stage, the first sentence of torch's message, the user's line,
    and our hint for it (torch's own advice, e.g. "wrap into an opaque custom op", stays in the report)."""
    failure = report.failure
    if failure is None:
        return ""
    head = _SENTENCE_END.split(failure.headline())[0].rstrip(".")
    if len(head) > ERROR_HEADLINE_CHARS:
        head = head[:ERROR_HEADLINE_CHARS - 1].rstrip() + "…"
    at = f" at {_relative(failure.user_frame)}" if failure.user_frame else ""
    where = STAGE_WORDS["eager"] if failure.stage == "eager" else f"in {failure.stage}"
    line = f"export failed {where}: {failure.exc_type}: {head}{at}"
    findings = report.export.findings if report.export else ()
    hinted = [f for f in findings if f.severity == "error" and f.hint]
    hinted.sort(key=lambda f: f.stage != failure.stage)
    if hinted:
        line += f"; hint: {hinted[0].hint}"
    return line + " (the report has the full message)"


#: The export report's sections, in order.
EXPORT_SECTIONS = (_header, failure_section, _summary, _signature, _program, _kernels, _dynamic, _aoti, _findings,
                   _diagnostics)


def render_export(report: Report, *, color: bool | None = None, width: int | None = None) -> str:
    """An export report as text: every non-empty section, blank lines between (as the terminal renderer)."""
    from tritoninspect.render._console import console_text, make_console
    from tritoninspect.render._safe import safe_record

    console = make_console(width=width, color=color)
    report = safe_record(report)
    cwd = Path.cwd()
    blocks = [renderables for section in EXPORT_SECTIONS if (renderables := section(report, cwd))]
    for i, renderables in enumerate(blocks):
        if i:
            console.print()
        for renderable in renderables:
            console.print(renderable)
    return console_text(console)
