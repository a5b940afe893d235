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
from typing import Any

from tritoninspect.analyse.hazards import HAZARDS, family_of
from tritoninspect.model.records import NodeRecord
from tritoninspect.model.spill import CHUNK, Rows, Spill, chained
from tritoninspect.model.report import SEVERITIES, STAGES, Entry, Finding, Kernel, Report

_LATER_STAGES = {"output_code": 1, "runtime": 2}


def join(parts: Sequence[Report], kernel_order: Sequence[str]) -> Report:
    """The report of the whole capture from `parts`, its segments' reports in compile order.
    `kernel_order`: kernel ids in the order the capture met them (its `kernels` dict)."""
    if len(parts) == 1:
        return parts[0]
    joiner = Joiner(kernel_order)
    for part in parts:
        joiner.add(part)
    return joiner.report()


#: Every field of a report that holds rows.
_ROWS = ("graphs", "graph_breaks", "recompiles", "recompile_limits", "kernels", "opaque_ops",
         "mutation_fallbacks_unattributed", "diagnostics", "decompiled", "findings", "libraries", "cudagraphs",
         "epilogues", "advice")

#: Fields whose rows are the segments' rows one after the other.
_CONCATENATED = ("graph_breaks", "recompiles", "recompile_limits", "opaque_ops", "diagnostics", "decompiled",
                 "cudagraphs", "epilogues")


class Joiner:
    """`join`, a segment at a time: each segment's rows go to a `Spill` file as it is added, so that what is
    held does not grow with the number of segments (a kernel's header and its small lists do)."""

    def __init__(self, kernel_order: Sequence[str]) -> None:
        self._spill = Spill()
        self._place = {kernel: i for i, kernel in enumerate(kernel_order)}
        self._first: Report | None = None
        self._failure = None
        self._graphs, self._codes = self._spill.rows(), self._spill.rows()
        self._rows = {name: self._spill.rows() for name in _CONCATENATED}
        self._kernels: dict[str, list[Any]] = {}
        self._findings: dict[tuple[int, int, int], Rows] = {}
        self._fallbacks: dict[Any, None] = {}
        self._libraries: dict[str, Any] = {}

    @property
    def spill(self) -> Spill:
        return self._spill

    def add(self, part: Report) -> None:
        if self._first is None:  # the meta and what no segment adds to: its rows are not kept in memory
            self._first = dataclasses.replace(part, **{f: () for f in _ROWS})
        self._failure = self._failure or part.failure
        self._graphs.extend(g for g in part.graphs if g.stage != "output_code")
        self._codes.extend(g for g in part.graphs if g.stage == "output_code")
        for name, rows in self._rows.items():
            rows.extend(getattr(part, name))
        for kernel in part.kernels:
            self._add_kernel(kernel)
        self._add_findings(part)
        self._fallbacks.update(dict.fromkeys(part.mutation_fallbacks_unattributed))
        self._libraries.update((lib.name, lib) for lib in part.libraries)
        # Rows waiting for a full chunk are written now: kept in memory from one segment to the next, they pinned
        # the allocator's arenas of every segment, and the process grew by some MiB over a 100 MiB log.
        for rows in self._all_rows():
            rows.flush()

    def _all_rows(self) -> list[Rows]:
        kernels = [r for kept in self._kernels.values() for r in kept[1:6]]
        return [self._graphs, self._codes, *self._rows.values(), *kernels, *self._findings.values()]

    def _add_kernel(self, kernel: Kernel) -> None:
        kept = self._kernels.get(kernel.id)
        if kept is None:
            rows = (self._spill.rows() for _ in range(5))  # occurrences by stage, missing ids, dropped nodes
            header = dataclasses.replace(kernel, occurrences=(), missing_from_output_code=(), dropped_nodes=(),
                                         guards=(), symbolic_args=())
            kept = self._kernels[kernel.id] = [header, *rows, {}, {}, {}]
        _, nodes, outputs, runs, missing, dropped, entries, guards, args = kept
        for rows, stage in ((nodes, 0), (outputs, 1), (runs, 2)):
            rows.extend(o for o in kernel.occurrences if _LATER_STAGES.get(o.stage, 0) == stage)
        entries.update(dict.fromkeys(kernel.entries))
        missing.extend(kernel.missing_from_output_code)
        dropped.extend(kernel.dropped_nodes)
        guards.update(dict.fromkeys(kernel.guards))
        args.update(dict.fromkeys(kernel.symbolic_args))

    def _add_findings(self, part: Report) -> None:
        families = list(HAZARDS)
        names = {k.name: k.id for k in part.kernels}
        by_key: dict[tuple[int, int, int], list[Finding]] = {}
        for finding in part.findings:
            place = self._place.get(names.get(finding.kernel or "", ""), -1)
            key = SEVERITIES.index(finding.severity), families.index(family_of(finding.rule)), place
            by_key.setdefault(key, []).append(finding)
        for key, found in by_key.items():
            self._findings.setdefault(key, self._spill.rows()).extend(found)

    def report(self) -> Report:
        """The joined report, its advice made from it."""
        from tritoninspect.analyse.advice import with_advice

        assert self._first is not None, "no segment added"
        findings = chained(self._spill, (self._findings[key] for key in sorted(self._findings)))
        joined = dataclasses.replace(
            self._first, failure=self._failure, graphs=self._graphs.joined(self._codes),
            kernels=tuple(sorted((self._kernel(k) for k in self._kernels.values()),
                                 key=lambda k: (k.file or "", k.line or 0, k.name))),
            mutation_fallbacks_unattributed=tuple(sorted(self._fallbacks, key=lambda f: (f.compile_id, f.cause))),
            findings=findings, libraries=tuple(self._libraries.values()), advice=(),
            **{name: rows for name, rows in self._rows.items()})
        return with_advice(joined)

    @staticmethod
    def _kernel(kept: list[Any]) -> Kernel:
        first, nodes, outputs, runs, missing, dropped, entries, guards, args = kept
        return dataclasses.replace(
            first, entries=tuple(e.value for e in Entry if e.value in entries),
            occurrences=nodes.joined(outputs).joined(runs), missing_from_output_code=_small(missing),
            dropped_nodes=_small(dropped), guards=tuple(guards), symbolic_args=tuple(args))


def _small(rows: Rows) -> tuple | Rows:
    """`rows` as a tuple when they fit in one chunk (most kernels' missing compiles and dropped nodes: none)."""
    return tuple(rows) if len(rows) <= CHUNK else rows


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
