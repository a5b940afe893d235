"""Diff two reports: facts side by side and normalised graph diffs. Pure functions only.

Two compiles of the same program name things differently (buffers, graph inputs,
numbered names, kernel names, side-table indices, hashes, temp paths): graph texts
are normalised first (`analyse/diff_text.py`), so a diff shows only real changes.

Fields other analyses may add later (Occurrence.clones, Occurrence.neighbourhood,
numeric totals on Graph) are compared when a report has them and skipped when not.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Sequence
from typing import Any

from tritoninspect.analyse.diff_export import export_graph_diffs, export_rows
from tritoninspect.analyse.diff_text import clone_copy_count, normalise_graph, normalise_value, output_code_stats
from tritoninspect.model.diff_report import PARALLEL_NOTE, Bench, DiffReport, GraphDiff, Row, Side, SideBench
from tritoninspect.model.report import STAGES, Graph, Kernel, Report

# --- pairing -----------------------------------------------------------------------------


def _cid_key(compile_id: str | None) -> tuple[Any, ...]:
    parts = re.split(r"(\d+)", compile_id or "")
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p)


def match_kernels(a: Report, b: Report) -> list[tuple[Kernel | None, Kernel | None]]:
    """Kernels paired by id, then by name (the same kernel in two files has two ids)."""
    pairs: list[tuple[Kernel | None, Kernel | None]] = []
    left = list(b.kernels)
    for ka in a.kernels:
        kb = next((k for k in left if k.id == ka.id), None)
        if kb is None:
            same_name = [k for k in left if k.name == ka.name]
            kb = same_name[0] if len(same_name) == 1 else None
        if kb is not None:
            left.remove(kb)
        pairs.append((ka, kb))
    pairs.extend((None, kb) for kb in left)
    return pairs


_PART_ORDER = ("", "forward", "backward", "inference")


def _stage_parts(a: Report, b: Report) -> list[tuple[str, str]]:
    keys = {(g.stage, g.part) for g in (*a.graphs, *b.graphs)}
    return sorted(keys, key=lambda k: (STAGES.index(k[0]) if k[0] in STAGES else 99, _part_index(k[1])))


def _part_index(part: str) -> int:
    return _PART_ORDER.index(part) if part in _PART_ORDER else len(_PART_ORDER)


def stage_label(stage: str, part: str) -> str:
    """ "aot_forward", "post_grad inference": the part unless the stage already names it."""
    return stage if not part or stage.endswith(part) else f"{stage} {part}"


def _graphs(report: Report, stage: str, part: str) -> list[Graph]:
    graphs = [g for g in report.graphs if g.stage == stage and g.part == part]
    return sorted(graphs, key=lambda g: _cid_key(g.compile_id))


# --- graph diffs ---------------------------------------------------------------------------


def diff_graphs(a: Report, b: Report, *, context: int = 3, labels: tuple[str, str] = ("A", "B")) -> tuple[GraphDiff, ...]:
    """One normalised unified diff per stage and part, graphs paired in compile-id order; `labels` name
    the sides in each diff's `---`/`+++` lines (A and C when C is the variant)."""
    diffs = []
    # A compile's report against an export's: their programs are paired instead, and the
    # stages only one pipeline has are not diffed against nothing.
    cross = export_graph_diffs(a, b, context=context)
    for stage, part in _stage_parts(a, b):
        ga, gb = _graphs(a, stage, part), _graphs(b, stage, part)
        if cross and not (ga and gb):
            continue
        for i in range(max(len(ga), len(gb))):
            diffs.append(graph_diff(stage, part, _at(ga, i), _at(gb, i), context=context, labels=labels))
    return (*diffs, *cross)


def _at(items: Sequence[Graph], index: int) -> Graph | None:
    return items[index] if index < len(items) else None


def graph_diff(stage: str, part: str, ga: Graph | None, gb: Graph | None, *, context: int = 3,
               labels: tuple[str, str] = ("A", "B")) -> GraphDiff:
    """The unified diff of two graphs of one stage (either may be missing)."""
    la = normalise_graph(ga.code, stage) if ga else []
    lb = normalise_graph(gb.code, stage) if gb else []
    title = stage_label(stage, part)
    lines = difflib.unified_diff(
        la, lb, fromfile=f"{labels[0]} {title} [{ga.compile_id if ga else 'none'}]",
        tofile=f"{labels[1]} {title} [{gb.compile_id if gb else 'none'}]", lineterm="", n=context,
    )
    changed = la != lb
    return GraphDiff(stage, part, ga.compile_id if ga else None, gb.compile_id if gb else None,
                     tuple(lines) if changed else (), changed)


# --- rows --------------------------------------------------------------------------------------

#: Row names for graph counts per stage, in pipeline order.
STAGE_COUNT_NAMES = {
    "dynamo": "Dynamo graphs",
    "aot_forward": "AOT forward graphs",
    "aot_backward": "AOT backward graphs",
    "aot_inference": "AOT inference graphs",
    "post_grad": "post-grad graphs",
    "post_grad_final": "final post-grad graphs",
    "output_code": "output-code modules",
}
_AOT_STAGES = ("aot_forward", "aot_backward", "aot_inference", "post_grad", "post_grad_final")


def _row(section: str, name: str, a: Any, b: Any, unit: str = "") -> Row:
    return Row(section, name, a, b, changed=(a != b) if unit != "s" else False, unit=unit)


def _one_sided(section: str, name: str, a: Any, b: Any) -> Row:
    """A fact from a field other analyses fill: a side without it (an older report, or
    nothing there) shows None and does not count as a difference."""
    a, b = a if a not in ("", None) else None, b if b not in ("", None) else None
    return Row(section, name, a, b, changed=a is not None and b is not None and a != b)


def graph_rows(a: Report, b: Report) -> list[Row]:
    """Graphs per stage, breaks, recompiles, kernels and opaque ops."""
    rows = []
    for stage, name in STAGE_COUNT_NAMES.items():
        ca, cb = _graph_count(a, stage), _graph_count(b, stage)
        if stage == "dynamo" or ca or cb:
            rows.append(_row("graphs", name, ca, cb))
    for name, count in (
        ("graph breaks", lambda r: len(r.graph_breaks)),
        ("frames skipped", lambda r: sum(x.frame_skipped for x in r.graph_breaks)),
        ("recompiles", lambda r: len(r.recompiles)),
        ("user Triton kernels", lambda r: len(r.kernels)),
        ("opaque op nodes", lambda r: len(r.opaque_ops)),
    ):
        rows.append(_row("graphs", name, count(a), count(b)))
    ops_a, ops_b = _opaque_names(a), _opaque_names(b)
    if ops_a or ops_b:
        rows.append(_row("graphs", "opaque ops", ops_a or "none", ops_b or "none"))
    return rows


def _graph_count(report: Report, stage: str) -> int:
    graphs = [g for g in report.graphs if g.stage == stage]
    return len({g.compile_id for g in graphs}) if stage == "dynamo" else len({(g.compile_id, g.part) for g in graphs})


def _opaque_names(report: Report) -> str:
    return ", ".join(dict.fromkeys(op.op for op in report.opaque_ops))


def kernel_rows(a: Report, b: Report) -> list[Row]:
    """Per kernel (matched by id, then name): entries, op, output code, launches."""
    rows = []
    for ka, kb in match_kernels(a, b):
        name = (ka or kb).name  # type: ignore[union-attr]
        rows.append(_row("kernels", f"{name}: entries", _entries(ka), _entries(kb)))
        rows.append(_row("kernels", f"{name}: in op", _ops(ka), _ops(kb)))
        rows.append(_row("kernels", f"{name}: in output code", _in_output_code(a, ka), _in_output_code(b, kb)))
        rows.append(_row("kernels", f"{name}: run-time launches", _launches(a, ka), _launches(b, kb)))
    return rows


def _entries(kernel: Kernel | None) -> str | None:
    return None if kernel is None else (", ".join(kernel.entries) or "none")


def _ops(kernel: Kernel | None) -> str | None:  # "none": "-" is what a side without the kernel shows
    if kernel is None:
        return None
    return ", ".join(dict.fromkeys(o.custom_op for o in kernel.occurrences if o.custom_op)) or "none"


def _in_output_code(report: Report, kernel: Kernel | None) -> str | None:
    if kernel is None:
        return None
    if kernel.missing_from_output_code:
        return "MISSING"
    if any(o.stage == "output_code" and o.in_output_code for o in kernel.occurrences):
        return "yes"
    if kernel.entries and all(e == "custom_op" for e in kernel.entries):
        # Not a bug: Inductor calls the op, and the op launches the kernel at run time.
        return "inside custom_op"
    return "no" if any(g.stage == "output_code" for g in report.graphs) else "n/a"


def _launches(report: Report, kernel: Kernel | None) -> int | str | None:
    if kernel is None:
        return None
    if report.meta.mode == "trace":  # a trace holds the compile, not the run
        return "unknown (trace)"
    return sum(o.launches or 0 for o in kernel.occurrences if o.stage == "runtime")


def op_rows(a: Report, b: Report) -> list[Row]:
    """Graph.op_count summed per stage and part (output code: its calls)."""
    return [
        _row("ops per stage", stage_label(stage, part), _ops_in(a, stage, part), _ops_in(b, stage, part))
        for stage, part in _stage_parts(a, b)
    ]


def _ops_in(report: Report, stage: str, part: str) -> int | None:
    graphs = _graphs(report, stage, part)
    return sum(g.op_count for g in graphs) if graphs else None


def clone_rows(a: Report, b: Report) -> list[Row]:
    """What the functional HOP clones per kernel, Occurrence.clones when present,
    and clone/copy calls per stage."""
    rows = []
    for ka, kb in match_kernels(a, b):
        name = (ka or kb).name  # type: ignore[union-attr]
        rows.append(_row("clones and copies", f"{name}: tensors_to_clone", _to_clone(ka), _to_clone(kb)))
        for label, summarise in CLONE_FACTS.items():
            va, vb = _facts(ka, "clones", summarise), _facts(kb, "clones", summarise)
            if va or vb:
                rows.append(_one_sided("clones and copies", f"{name}: {label}", va, vb))
    for stage, part in _stage_parts(a, b):
        if stage != "dynamo":
            name = f"copies, {stage_label(stage, part)}"
            rows.append(_row("clones and copies", name, _copies(a, stage, part), _copies(b, stage, part)))
    return rows


def _to_clone(kernel: Kernel | None) -> str | None:
    if kernel is None:
        return None
    found = [o.tensors_to_clone for o in kernel.occurrences
             if o.stage in _AOT_STAGES and o.tensors_to_clone is not None]
    if not found:
        return "n/a (in no AOT graph)"
    return ", ".join(sorted({name for names in found for name in names})) or "none"


def _facts(kernel: Kernel | None, field_name: str, summarise: Any) -> str:
    """`summarise(value)` of every occurrence's `field_name`, distinct ones joined;
    "" when no occurrence has the field (an older report) or it is empty."""
    if kernel is None:
        return ""
    texts: dict[str, None] = {}
    for o in kernel.occurrences:
        value = getattr(o, field_name, None)
        items = value if isinstance(value, tuple) else (value,)
        for item in items:
            text = summarise(item) if item not in (None, "", (), [], {}) else None
            if text:
                texts.setdefault(normalise_value(text), None)
    return "; ".join(texts)


def _names(values: Any) -> str | None:
    return None if values is None else (", ".join(values) or "none")


#: Row label -> summary of one Occurrence.clones (a report.Clones); None skips it.
CLONE_FACTS = {
    "still cloned": lambda c: _names(getattr(c, "after_reinplace", None)),
    "bytes cloned per call": lambda c: None if getattr(c, "bytes", None) is None else str(c.bytes),
    "copies in output code": lambda c: _names(getattr(c, "copies", None)),
}


_OP_CALL_NAME = re.compile(r"^torch\.ops\.(?P<ns>\w+)\.(?P<op>\w+)\.\w+$")


def _call_name(name: str) -> str:
    """`torch.ops.ns.op.default` as `ns::op`; kernel names as they are."""
    match = _OP_CALL_NAME.match(name)
    return f"{match['ns']}::{match['op']}" if match else name


def _neighbour(n: Any) -> str:
    name = getattr(n, "name", None)
    return _call_name(name) if name else "start/end"


def _between(n: Any) -> str | None:
    if not hasattr(n, "call"):
        return None
    return f"{_neighbour(n.before)} → [{_call_name(n.call)}] → {_neighbour(n.after)}"


#: Row label -> summary of one Occurrence.neighbourhood entry (a report.Neighbourhood).
NEIGHBOURHOOD_FACTS = {
    "launched between": _between,
    "shares buffers with": lambda n: _names([_call_name(r.name) for r in getattr(n, "related", ())]),
    "epilogue fusion": lambda n: getattr(n, "epilogue_fusion", None),
}


def _copies(report: Report, stage: str, part: str) -> int | None:
    graphs = _graphs(report, stage, part)
    return sum(clone_copy_count(g.code, stage) for g in graphs) if graphs else None


def inductor_rows(a: Report, b: Report) -> list[Row]:
    """Kernels and calls in the output code, per part (summed over compile ids)."""
    rows = []
    parts = [p for s, p in _stage_parts(a, b) if s == "output_code"]
    for part in parts:
        sa, sb = _code_stats(a, part), _code_stats(b, part)
        for key in (sa or sb):  # type: ignore[union-attr]
            rows.append(_row("inductor kernels", f"{part}: {key}", _get(sa, key), _get(sb, key)))
    return rows


def _code_stats(report: Report, part: str) -> dict[str, int] | None:
    graphs = _graphs(report, "output_code", part)
    if not graphs:
        return None
    total: dict[str, int] = {}
    for g in graphs:
        for key, value in output_code_stats(g.code).items():
            total[key] = total.get(key, 0) + value
    return total


def _get(stats: dict[str, int] | None, key: str) -> int | None:
    return None if stats is None else stats.get(key)


def neighbourhood_rows(a: Report, b: Report) -> list[Row]:
    """Where each kernel (or its opaque op) is launched among Inductor's kernels,
    from Occurrence.neighbourhood when either report has it."""
    rows = []
    for ka, kb in match_kernels(a, b):
        name = (ka or kb).name  # type: ignore[union-attr]
        for label, summarise in NEIGHBOURHOOD_FACTS.items():
            va, vb = _facts(ka, "neighbourhood", summarise), _facts(kb, "neighbourhood", summarise)
            if va or vb:
                rows.append(_one_sided("neighbourhood", f"{name}: {label}", va, vb))
    return rows


#: Graph fields this module knows; any other numeric field is a total another analysis added.
_KNOWN_GRAPH_FIELDS = {"compile_id", "stage", "part", "code", "op_count", "subgraphs", "compile_time_s", "code_calls"}


def graph_total_rows(a: Report, b: Report) -> list[Row]:
    """Numeric Graph fields added by other analyses (e.g. output-code totals), summed per stage."""
    rows = []
    for stage, part in _stage_parts(a, b):
        ta, tb = _totals(a, stage, part), _totals(b, stage, part)
        # Output-code totals are per part, as in the "inductor kernels" section.
        label = (part or stage) if stage == "output_code" else stage_label(stage, part)
        for key in dict.fromkeys([*ta, *tb]):
            rows.append(_one_sided("graph totals", f"{label}: {key}", ta.get(key), tb.get(key)))
    return rows


def _totals(report: Report, stage: str, part: str) -> dict[str, float]:
    total: dict[str, float] = {}
    for graph in _graphs(report, stage, part):
        for f in dataclasses.fields(graph):
            if f.name not in _KNOWN_GRAPH_FIELDS:
                for key, value in _numbers(f.name, getattr(graph, f.name)):
                    total[key] = total.get(key, 0) + value
    return total


def _numbers(name: str, value: Any) -> list[tuple[str, float]]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)):
        return [(name, value)]
    if isinstance(value, dict):
        return [pair for key, inner in value.items() for pair in _numbers(f"{name}.{key}", inner)]
    return []


def compile_time_rows(a: Report, b: Report) -> list[Row]:
    """Graph.compile_time_s per stage and part, and the backend total."""
    rows = []
    for stage, part in _stage_parts(a, b):
        ta, tb = _seconds(a, stage, part), _seconds(b, stage, part)
        if ta is None and tb is None:
            continue
        name = "backend (AOT + Inductor)" if stage == "dynamo" else f"Inductor, {part} part"
        rows.append(_row("compile time", name, ta, tb, unit="s"))
    return rows


def _seconds(report: Report, stage: str, part: str) -> float | None:
    times = [g.compile_time_s for g in _graphs(report, stage, part) if g.compile_time_s is not None]
    return sum(times) if times else None


def backend_seconds(report: Report) -> float | None:
    """Total backend compile time of a capture: its Dynamo graphs' compile_time_s."""
    times = [g.compile_time_s for g in report.graphs if g.stage == "dynamo" and g.compile_time_s is not None]
    return sum(times) if times else None


ROW_BUILDERS = (graph_rows, kernel_rows, op_rows, clone_rows, inductor_rows, neighbourhood_rows,
                graph_total_rows, compile_time_rows, export_rows)


# --- the whole diff ----------------------------------------------------------------------------


def side(label: str, report: Report, *, source: str, saved: bool) -> Side:
    m = report.meta
    return Side(label, source, saved, m.target, m.mode, m.device, m.torch, m.triton, m.stage, m.dynamic,
                m.backward, tuple(m.inputs), failure=_failure_line(report), grad=m.grad)


def _failure_line(report: Report) -> str | None:
    return None if report.failure is None else report.failure.summary()


def comparison_notes(a: Side, b: Side) -> tuple[str, ...]:
    """Caveats when the two sides were not captured alike."""
    notes = []
    for what, va, vb in (
        ("modes", a.mode, b.mode), ("devices", a.device, b.device), ("torch versions", a.torch, b.torch),
        ("triton versions", a.triton, b.triton), ("stages", a.stage, b.stage),
        ("dynamic settings", a.dynamic, b.dynamic), ("backward settings", a.backward, b.backward),
        ("grad settings", a.forward_grad, b.forward_grad), ("inputs", ", ".join(a.inputs), ", ".join(b.inputs))):
        if va != vb:  # a setting as the headers print it (None: torch's default, "auto")
            va, vb = ({None: "auto", True: "yes", False: "no"}.get(v, v) for v in (va, vb))
            notes.append(f"{a.label} and {b.label} differ in {what} ({va} vs {vb}): "
                         "not every difference below is the model's")
    return tuple(notes)


def diff_reports(
    a: Report,
    b: Report,
    *,
    sources: tuple[str, str] = ("", ""),
    saved: tuple[bool, bool] = (False, False),
    bench: Bench | None = None,
    context: int = 3,
    labels: tuple[str, str] = ("A", "B"),
    parallel: bool = False,
) -> DiffReport:
    """Compare two reports: every row section, every stage's graph diff, and `bench` as given.

    `parallel`: a side's capture overlapped another's (they shared the CPU), so compile times
    are not comparable: the summary leaves the ratio out and a note says why."""
    from tritoninspect.analyse.diff_summary import summary_line

    side_a = side(labels[0], a, source=sources[0] or a.meta.target, saved=saved[0])
    side_b = side(labels[1], b, source=sources[1] or b.meta.target, saved=saved[1])
    rows = [row for build in ROW_BUILDERS for row in build(a, b)]
    return DiffReport(
        a=side_a, b=side_b, rows=tuple(rows), graph_diffs=diff_graphs(a, b, context=context, labels=labels),
        bench=bench, notes=comparison_notes(side_a, side_b) + ((PARALLEL_NOTE,) if parallel else ()),
        summary=summary_line(a, b, labels[1], compile_ratio=not parallel),
    )


# --- bench ----------------------------------------------------------------------------------------

#: Why compile-only mode measures compile times only.
COMPILE_ONLY_BENCH_NOTE = (
    "run times not measured: compile-only mode runs the kernels in Triton's interpreter on the CPU, "
    "which says nothing about GPU speed; compile times only"
)


def ratio(a: float | None, b: float | None) -> float | None:
    """b / a, or None when either is missing or a is 0."""
    if a is None or b is None or a == 0:
        return None
    return b / a


def bench_pair(mode: str, device: str, method: str, a: SideBench, b: SideBench) -> Bench:
    """Both sides' measurements with their B/A ratios."""
    ratios = {
        "eager": ratio(_median(a.eager), _median(b.eager)),
        "compiled": ratio(_median(a.compiled), _median(b.compiled)),
        "pipelined": ratio(_pipelined(a.compiled), _pipelined(b.compiled)),
        "compile_s": ratio(a.compile_s, b.compile_s),
        "first_call_s": ratio(a.first_call_s, b.first_call_s),
    }
    note = COMPILE_ONLY_BENCH_NOTE if mode != "gpu" else None
    return Bench(mode, device, method, a, b, ratios, note)


def _median(timing: Any) -> float | None:
    return timing.median_ms if timing is not None else None


def _pipelined(timing: Any) -> float | None:
    return timing.pipelined_ms if timing is not None else None
