"""Diff a compile's report (`graph`) against an export report (`export`) of the same target.

The two pipelines name their stages differently, so the generic diff pairs nothing across
them. Here the program each captured is paired (the Dynamo graph with the exported program)
and, per kernel, how it entered each: the node it became, the op it ran in, whether the
generated code (Inductor's output code, AOTInductor's package code) launches it. Pure.
"""

from __future__ import annotations

from tritoninspect.analyse.diff_text import normalise_graph
from tritoninspect.model.diff_report import GraphDiff, Row
from tritoninspect.model.report import Graph, Kernel, Report

SECTION = "torch.compile vs export"

#: How a kernel appears in a Dynamo graph (its occurrence's entry) and in an exported program.
COMPILE_NODE = {"hop": "HOP node", "triton_op": "triton_op call", "custom_op": "opaque custom_op call",
                "eager": "not in the graph (eager)"}
EXPORT_NODE = {"hop": "HOP node", "triton_op": "triton_op call", "custom_op": "opaque custom_op call",
               "absent": "not in the program (export failed)"}


def _pair(a: Report, b: Report) -> tuple[Report, Report, bool] | None:
    """(the compile's report, the export report, swapped) when exactly one side is an export."""
    if (a.export is None) == (b.export is None):
        return None
    return (a, b, False) if b.export is not None else (b, a, True)


def export_rows(a: Report, b: Report) -> list[Row]:
    """Per kernel: entry, node, op, and whether the generated code launches it, in each pipeline."""
    pair = _pair(a, b)
    if pair is None:
        return []
    compiled, exported, swapped = pair
    info = exported.export
    assert info is not None
    mode = "strict" if info.strict else "non-strict"
    rows = [_row("pipeline", "torch.compile", f"torch.export ({mode}) + AOTInductor", swapped)]
    for ek in info.kernels:
        kernel = compiled.kernel(ek.name)
        rows.append(_row(f"{ek.name}: entry", _entries(kernel), ek.entry, swapped))
        rows.append(_row(f"{ek.name}: in the graph as", _compile_node(compiled, kernel), EXPORT_NODE[ek.appears_as], swapped))
        rows.append(_row(f"{ek.name}: op", _op(kernel), ek.op or "-", swapped))
        rows.append(_row(f"{ek.name}: launched by generated code", _in_output_code(compiled, kernel),
                         _yes_no(ek.in_aoti_code), swapped))
    return rows


def _row(name: str, compiled: object, exported: object, swapped: bool) -> Row:
    a, b = (exported, compiled) if swapped else (compiled, exported)
    return Row(SECTION, name, a, b, changed=a != b)


def _entries(kernel: Kernel | None) -> str:
    return "absent" if kernel is None else ", ".join(kernel.entries) or "none"


def _compile_node(report: Report, kernel: Kernel | None) -> str:
    """How the Dynamo graph holds the kernel: its node's entry; a kernel inside an opaque op has
    no node of its own (only the op's), so it is seen launching from inside that op."""
    if kernel is None:
        return "absent"
    entries = [o.entry for o in kernel.occurrences if o.stage == "dynamo"]
    opaque = {op.op for op in report.opaque_ops if op.stage == "dynamo"}
    if not entries and any(o.custom_op in opaque for o in kernel.occurrences):
        entries = ["custom_op"]
    return ", ".join(dict.fromkeys(COMPILE_NODE.get(e, e) for e in entries)) or COMPILE_NODE["eager"]


def _op(kernel: Kernel | None) -> str:
    if kernel is None:
        return "absent"
    return ", ".join(dict.fromkeys(o.custom_op for o in kernel.occurrences if o.custom_op)) or "-"


def _in_output_code(report: Report, kernel: Kernel | None) -> str:
    if kernel is None or not any(g.stage == "output_code" for g in report.graphs):
        return "n/a"
    if any(o.stage == "output_code" and o.in_output_code for o in kernel.occurrences):
        return "yes"
    opaque = {op.op for op in report.opaque_ops}
    return "yes (inside its op)" if any(o.custom_op in opaque for o in kernel.occurrences) else "no"


def _yes_no(value: bool | None) -> str:
    return "n/a" if value is None else ("yes" if value else "no")


def export_graph_diffs(a: Report, b: Report, *, context: int = 3) -> tuple[GraphDiff, ...]:
    """The Dynamo graph paired with the exported program (first of each), names normalised."""
    pair = _pair(a, b)
    if pair is None:
        return ()
    compiled, exported, swapped = pair
    dynamo = _first(compiled, "dynamo")
    program = _first(exported, "export")
    if dynamo is None or program is None:
        return ()
    ga, gb = (program, dynamo) if swapped else (dynamo, program)
    return (_diff("dynamo | export", ga, gb, context),)


def _first(report: Report, stage: str) -> Graph | None:
    return next((g for g in report.graphs if g.stage == stage), None)


def _diff(label: str, ga: Graph, gb: Graph, context: int) -> GraphDiff:
    import difflib

    la, lb = normalise_graph(ga.code, "dynamo"), normalise_graph(gb.code, "dynamo")
    lines = difflib.unified_diff(la, lb, fromfile=f"A {ga.stage} [{ga.compile_id}]",
                                 tofile=f"B {gb.stage} [{gb.compile_id}]", lineterm="", n=context)
    return GraphDiff(label, "", ga.compile_id, gb.compile_id, tuple(lines) if la != lb else (), la != lb)
