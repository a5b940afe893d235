"""One report from the reports of a capture's segments: consecutive groups of its compiles (issue 26).

A long trace is to be read a segment of compiles at a time, so that what is held does not grow with the
log: each segment's capture is analysed as usual (`build_report`) and the segments' reports are joined
here into the report the whole capture gives. That holds because every analysis but a few reads one compile
at a time, and rows come out compile by compile; the exceptions, and how the join restores them:

- `graphs`: the graphs of every compile, then the output-code modules of every compile (analyse/graphs.py).
- `kernels`: one row per kernel, its occurrences graph nodes first, then output-code launches, then run-time
  launches (analyse/kernels.py); the rows sorted by file, line and name.
- `findings`: worst first, then by hazard, and within a hazard kernel by kernel (analyse/hazards/), each
  kernel's in compile order; the kernels in the order the capture met them (`kernel_order`).
- recompiles compare with a compile of an earlier segment: the segment's capture carries that compile's
  launch nodes (`Capture.earlier_nodes`), so each segment's rows are already whole.
- `advice` reads the whole report: made again from the joined one.

tests/test_segments.py holds every trace fixture to it: the joined report's JSON is the whole one's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from tritoninspect.analyse.hazards import HAZARDS, family_of
from tritoninspect.model.records import NodeRecord
from tritoninspect.model.report import SEVERITIES, STAGES, Entry, Finding, Kernel, Report

_LATER_STAGES = {"output_code": 1, "runtime": 2}


def join(parts: Sequence[Report], kernel_order: Sequence[str]) -> Report:
    """The report of the whole capture from `parts`, its segments' reports in compile order.
    `kernel_order`: kernel ids in the order the capture met them (its `kernels` dict)."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    joined = dataclasses.replace(
        first,
        failure=next((p.failure for p in parts if p.failure is not None), None),
        graphs=_graphs(parts),
        graph_breaks=_all(parts, "graph_breaks"),
        recompiles=_all(parts, "recompiles"),
        recompile_limits=_all(parts, "recompile_limits"),
        kernels=_kernels(parts),
        opaque_ops=_all(parts, "opaque_ops"),
        mutation_fallbacks_unattributed=tuple(sorted(set(_all(parts, "mutation_fallbacks_unattributed")),
                                                     key=lambda f: (f.compile_id, f.cause))),
        diagnostics=_all(parts, "diagnostics"),
        decompiled=_all(parts, "decompiled"),
        findings=_findings(parts, kernel_order),
        libraries=tuple({lib.name: lib for p in parts for lib in p.libraries}.values()),
        cudagraphs=_all(parts, "cudagraphs"),
        epilogues=_all(parts, "epilogues"),
        advice=(),
    )
    from tritoninspect.analyse.advice import with_advice

    return with_advice(joined)


def _all(parts: Sequence[Report], name: str) -> tuple:
    return tuple(row for part in parts for row in getattr(part, name))


def _graphs(parts: Sequence[Report]) -> tuple:
    rows = _all(parts, "graphs")
    return (*(g for g in rows if g.stage != "output_code"), *(g for g in rows if g.stage == "output_code"))


def _kernels(parts: Sequence[Report]) -> tuple[Kernel, ...]:
    by_id: dict[str, list[Kernel]] = {}
    for part in parts:
        for kernel in part.kernels:
            by_id.setdefault(kernel.id, []).append(kernel)
    kernels = [_kernel(rows) for rows in by_id.values()]
    return tuple(sorted(kernels, key=lambda k: (k.file or "", k.line or 0, k.name)))


def _kernel(rows: list[Kernel]) -> Kernel:
    if len(rows) == 1:
        return rows[0]
    occurrences = sorted((o for k in rows for o in k.occurrences), key=lambda o: _LATER_STAGES.get(o.stage, 0))
    order = [e for k in rows for e in k.entries]
    entries = tuple(e.value for e in Entry if e.value in order)
    return dataclasses.replace(
        rows[0],
        entries=entries,
        occurrences=tuple(occurrences),
        missing_from_output_code=tuple(c for k in rows for c in k.missing_from_output_code),
        dropped_nodes=tuple(d for k in rows for d in k.dropped_nodes),
        guards=tuple(dict.fromkeys(g for k in rows for g in k.guards)),
        symbolic_args=tuple(dict.fromkeys(a for k in rows for a in k.symbolic_args)),
    )


def _findings(parts: Sequence[Report], kernel_order: Sequence[str]) -> tuple[Finding, ...]:
    families = list(HAZARDS)
    place = {kernel: i for i, kernel in enumerate(kernel_order)}
    names = {k.name: k.id for part in parts for k in part.kernels}

    def key(finding: Finding) -> tuple[int, int, int]:
        kernel = place.get(names.get(finding.kernel or "", ""), -1)
        return SEVERITIES.index(finding.severity), families.index(family_of(finding.rule)), kernel

    return tuple(sorted(_all(parts, "findings"), key=key))


def first_launches(nodes: Sequence[NodeRecord]) -> list[NodeRecord]:
    """What a later segment's recompiles read of `nodes` (`Capture.earlier_nodes`): each kernel's launch node
    with a grid in the earliest stage of each compile, as analyse/breaks.py `_launch_node` picks it."""
    best: dict[tuple[str | None, str], NodeRecord] = {}
    for node in nodes:
        if not node.grid:
            continue
        key = (node.kernel_id, node.compile_id)
        if key not in best or _stage_rank(node) < _stage_rank(best[key]):
            best[key] = node
    return list(best.values())


def _stage_rank(node: NodeRecord) -> int:
    return STAGES.index(node.stage) if node.stage in STAGES else len(STAGES)
