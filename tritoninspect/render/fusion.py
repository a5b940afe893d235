"""`--show fusion`: what Inductor did around each kernel: launches, neighbours, clones and copies."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from tritoninspect.render import _format as fmt
from tritoninspect.render._console import console_text, make_console
from tritoninspect.render._safe import safe_record
from tritoninspect.render._widgets import ALERT, add_row, entries_text, table
from tritoninspect.model.report import Clones, Graph, Kernel, Mode, Neighbour, Neighbourhood, Occurrence, Report

#: Gutter for the kernel's own line in a launch table (as `--show` marks kernel lines).
MARK = "► "
#: An Inductor kernel's fused ops when neither Inductor's records nor its output code name them.
UNKNOWN_OPS = "unknown"

_FLOW_TEXT = {
    "producer": "writes {buffer}, which the kernel reads as {arg}",
    "consumer": "reads {buffer}, which the kernel wrote as {arg}",
    "reads_same": "also reads {buffer} ({arg})",
}
_EXTERN_FLOW_TEXT = {
    "producer": "computes {buffer}, the op's input {arg}",
    "consumer": "reads {buffer}, the op's result",
    "reads_same": "also reads {buffer} (input {arg})",
}


def kernels_description(report: Report) -> str:
    """Which kernels Inductor generated around the user's: C++ in compile-only mode, Triton on a GPU."""
    if report.meta.mode == Mode.COMPILE_ONLY.value:
        return "CPU (C++) kernels in compile-only mode"
    if report.meta.mode == Mode.GPU.value:
        return "Triton kernels"
    if report.meta.mode == Mode.TRACE.value:
        return f"{'Triton' if 'cuda' in report.meta.device else 'CPU (C++)'} kernels of the traced run"
    return f"{report.meta.mode} kernels"


def render_fusion(report: Report, *, color: bool | None = None, width: int | None = None) -> str:
    """The fusion view: each compiled graph's launches, then each kernel's neighbourhood and clones."""
    report = safe_record(report)
    console = make_console(width=width, color=color)
    cwd = Path.cwd()
    blocks = [_intro(report), *_graph_blocks(report), *(_kernel_block(report, k, cwd) for k in report.kernels)]
    for i, block in enumerate(blocks):
        if i:
            console.print()
        console.print(block)
    return console_text(console)


def _intro(report: Report) -> RenderableType:
    title = Text.assemble(("Fusion neighbourhood", "bold underline"), f"  Inductor's kernels: {kernels_description(report)}")
    lines: list[RenderableType] = [title]
    if report.meta.mode == Mode.COMPILE_ONLY.value:
        lines.append(Text("Inductor fuses differently for GPU (Triton) code: read this as the graph's shape, "
                          "not as GPU behaviour.", style="dim"))
    if not any(g.stage == "output_code" for g in report.graphs):
        lines.append(Text(f"no output code was captured (stage: {report.meta.stage})", style="yellow"))
    return Group(*lines)


# --- graphs ---------------------------------------------------------------------


def _graph_blocks(report: Report) -> list[RenderableType]:
    codes = sorted((g for g in report.graphs if g.stage == "output_code"), key=lambda g: fmt.compile_id_key(g.compile_id))
    return [_graph_block(report, g) for g in codes]


def _graph_block(report: Report, graph: Graph) -> RenderableType:
    title = Text.assemble((f"[{graph.compile_id}] output code", "bold"), f" ({graph.part}): ", _totals(graph))
    if not graph.code_calls:
        return Group(title, Text("  no launches found in call()", style="dim"))
    marked = _marked_calls(report, graph)
    t = table("", "#", "launch", "kind", "fused ops", "reads", "writes")
    for i, call in enumerate(graph.code_calls):
        style = "bold" if i in marked else ""
        kind = call.kind + (" (copy)" if call.copy else "")
        name = call.name if call.function == "call" else f"{call.name} [{call.function}]"
        add_row(t, Text(MARK if i in marked else "", style=style), str(i), Text(name, style=style), kind,
                _ops_text(call.ops, call.ops_source), ", ".join(call.reads) or fmt.NONE, ", ".join(call.writes) or fmt.NONE)
    return Group(title, Padding(t, (0, 0, 0, 2)))


def _ops_text(ops: tuple[str, ...], source: str) -> Text:
    """A kernel's fused ops; "unknown" where neither Inductor nor its output code said them."""
    if source == "unknown":
        return Text(UNKNOWN_OPS, style="dim")
    return Text(", ".join(ops) or fmt.NONE)


def _totals(graph: Graph) -> Text:
    parts = [
        fmt.plural(graph.inductor_kernels or 0, "Inductor kernel"),
        fmt.plural(graph.user_kernels or 0, "user kernel"),
        fmt.plural(graph.extern_calls or 0, "extern call"),
        fmt.plural(graph.copies or 0, "copy", "copies"),
    ]
    return Text(", ".join(parts))


def _marked_calls(report: Report, graph: Graph) -> set[int]:
    """Indices of the user-kernel launches and opaque-op calls the report's kernels own."""
    return {
        n.index
        for k in report.kernels
        for o in k.occurrences
        for n in (o.neighbourhood or ())
        if (n.compile_id, n.part) == (graph.compile_id, graph.part)
    }


# --- kernels -------------------------------------------------------------------------


def _kernel_block(report: Report, kernel: Kernel, cwd: Path) -> RenderableType:
    where = fmt.location(kernel.file, kernel.line, cwd=cwd)
    parts: list[RenderableType] = [Text.assemble((kernel.name, "bold"), f"  {where}  ", entries_text(kernel.entries))]
    traced = report.meta.mode == Mode.TRACE.value
    body = [*_dropped(kernel), *_neighbourhoods(kernel, traced), *_clones(kernel, cwd)]
    if not body:
        body = [Text(_nothing_to_show(report, kernel), style="dim")]
    parts += [Padding(b, (0, 0, 0, 2)) for b in body]
    return Group(*parts)


def _nothing_to_show(report: Report, kernel: Kernel) -> str:
    if report.meta.stage != "inductor":
        return f"no output code (stage: {report.meta.stage})"
    if kernel.entries == ("eager",):
        return "launched eagerly, outside compiled graphs: nothing was fused around it"
    return "not found in any output code"


def _dropped(kernel: Kernel) -> list[RenderableType]:
    lines = []
    for d in kernel.dropped_nodes:
        part = f" {d.part}" if d.part else ""
        lines.append(Text.assemble(
            ("REMOVED", ALERT),
            f" [{d.compile_id}]{part}: node {d.node} (last in the {d.last_stage} graph) has no launch in the output code",
        ))
    return lines


def _neighbourhoods(kernel: Kernel, traced: bool = False) -> list[RenderableType]:
    blocks: list[RenderableType] = []
    for o in kernel.occurrences:
        for n in o.neighbourhood or ():
            blocks.append(_neighbourhood(o, n, traced))
    return blocks


def _neighbourhood(o: Occurrence, n: Neighbourhood, traced: bool = False) -> RenderableType:
    opaque = o.stage == "runtime" and o.custom_op is not None
    what = f"inside opaque {o.custom_op}: extern call {n.call}" if opaque else f"launch {n.call}"
    lines: list[RenderableType] = [Text.assemble((f"[{n.compile_id}] {n.part}", "bold"), f": {what} (#{n.index})",
                                                 _function_text(n))]
    facts = table("", "")
    facts.show_header = False
    for label, neighbour in (("before", n.before), ("after", n.after)):
        add_row(facts, label, _neighbour_text(neighbour, opaque) if neighbour else Text("no Inductor kernel", style="dim"))
    if n.function != "call":
        # The sub-graph runs where the calling function calls it: what runs around that.
        for label, neighbour in (("called after", n.caller_before), ("called before", n.caller_after)):
            if neighbour is not None:
                add_row(facts, label, Text.assemble((neighbour.name, "bold"), f" (#{neighbour.index}, {neighbour.kind}"
                                                    + (f": {', '.join(neighbour.ops)})" if neighbour.ops else ")")))
    adjacent = {x.index for x in (n.before, n.after) if x}
    for r in n.related:
        if r.index not in adjacent:
            add_row(facts, "shares", _neighbour_text(r, opaque))
    lines.append(Padding(facts, (0, 0, 0, 2)))
    lines += [Padding(line, (0, 0, 0, 2)) for line in _verdict(o, n, opaque, traced)]
    return Group(*lines)


def _function_text(n: Neighbourhood) -> str:
    """` in true_graph_0 (a torch.cond branch, called from 1 place)`; ` (recomputes the forward's)`."""
    text = ""
    if n.function != "call":
        kind = f"a {n.function_kind}, " if n.function_kind else ""
        text = f" in {n.function} ({kind}called from {fmt.plural(n.call_sites, 'place')})"
    return text + (" (recomputes the forward's: activation checkpointing)" if n.recompute else "")


def _neighbour_text(n: Neighbour, opaque: bool) -> Text:
    text = Text.assemble((n.name, "bold"), f" (#{n.index}, {n.kind}")
    if n.ops_source == "unknown":
        text.append(f": ops {UNKNOWN_OPS})")
    else:
        text.append(f": {', '.join(n.ops)})" if n.ops else ")")
    flows = _EXTERN_FLOW_TEXT if opaque else _FLOW_TEXT
    shared = [flows[s.flow].format(buffer=s.buffer, arg=_arg_name(s.arg, opaque)) for s in n.shared]
    text.append(": " + "; ".join(shared) if shared else ": shares no buffer", style="" if shared else "dim")
    return text


def _arg_name(arg: str, opaque: bool) -> str:
    if opaque and arg.isdigit():
        return f"#{arg}"
    return arg


def _verdict(o: Occurrence, n: Neighbourhood, opaque: bool, traced: bool = False) -> list[Text]:
    split = [x for x in (n.before, n.after) if x and x.shared]
    if opaque:
        if len(split) == 2:
            ops = " and ".join(", ".join(x.ops) or x.name for x in split)
            return [Text(f"the opaque op splits Inductor's work: {ops} compiled as separate kernels around it",
                         style="yellow")]
        return [Text("Inductor cannot fuse into or across the opaque op", style="yellow")]
    lines = []
    if n.epilogue_fusion == "fused":
        lines.append(Text("epilogue fused: Inductor rewrote the kernel to apply the following op itself", style="green"))
    elif n.epilogue_fusion == "off" and n.after and any(s.flow == "consumer" for s in n.after.shared):
        lines.append(Text("not fused: epilogue fusion into user kernels is off "
                          "(torch._inductor.config.epilogue_fusion_user_defined_triton_kernel)", style="dim"))
    elif n.epilogue_fusion is None and traced:
        lines.append(Text("epilogue fusion: not known from a trace (it does not hold the kernel's own source)",
                          style="dim"))
    elif n.epilogue_fusion is None:
        lines.append(Text("not fused: this torch cannot fuse into user kernels", style="dim"))
    return lines


# --- clones ---------------------------------------------------------------------------


def _clones(kernel: Kernel, cwd: Path) -> list[RenderableType]:
    blocks: list[RenderableType] = []
    for o in kernel.occurrences:
        if o.clones is not None and o.clones.before_reinplace:
            blocks.append(_clone_block(o, o.clones, cwd))
    return blocks


def _clone_block(o: Occurrence, c: Clones, cwd: Path) -> RenderableType:
    title = Text.assemble((f"[{o.compile_id}] {o.part or ''}", "bold"), f": clones for node {o.node}")
    if c.after_reinplace == () and not c.fallback:
        # The common, free case: one line.
        args = ", ".join(a.arg for a in c.arguments)
        return Text.assemble(title, f": {args} (written by the kernel) re-inplaced by Inductor, no copy",
                             style="")
    t = table("argument", "tensor", "why cloned", "after re-inplacing", "bytes")
    for a in c.arguments:
        after = "unknown" if a.cloned is None else ("CLONED" if a.cloned else "re-inplaced, no copy")
        why = "written by the kernel" if a.reason == "written" else "assumed written (fallback)"
        add_row(t, a.arg, a.tensor or fmt.NONE, Text(why, style=ALERT if a.reason == "assumed" else ""),
                Text(after, style=ALERT if a.cloned else ""), _bytes(a.bytes))
    lines: list[RenderableType] = [title, Padding(t, (0, 0, 0, 2))]
    lines.append(Padding(_copies_line(c), (0, 0, 0, 2)))
    if c.fallback:
        where = f" at {fmt.location(c.fallback_file, c.fallback_line, cwd=cwd)}" if c.fallback_file else ""
        lines.append(Padding(Text.assemble(("mutation analysis fell back", ALERT), f"{where}: {c.fallback}"), (0, 0, 0, 2)))
    return Group(*lines)


def _copies_line(c: Clones) -> Text:
    if c.copies is None:
        return Text("copies in the output code: unknown (no output code)", style="dim")
    copied = f"; {_bytes(c.bytes)} copied per call" if c.bytes else ""
    if not c.copies:
        return Text(f"copies in the output code: none{copied}", style="dim")
    return Text(f"copies in the output code: {_names(c.copies)}{copied}", style=ALERT)


def _names(names: Iterable[str]) -> str:
    return ", ".join(names)


def _bytes(size: int | None) -> str:
    if size is None:
        return "?"
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"
