"""What names a log's kernels, gathered over its segments (issue 26, analyse/trace_segments.py).

`KernelIndex.build` names each `kernel_idx` from the whole log: the first provenance or output-code launch
that names it, else the launch line most nodes show (analyse/trace_kernels.py), and attributes kernels to
triton_ops over every compile. A log read a segment of compiles at a time is first read once for this
evidence alone; each item is kept with the log line it came from, so that the earliest wins whatever the
segment, as it does in a whole read. Each segment's index is then built with this evidence
(`KernelIndex.build(..., evidence=...)`): the same names, ids and attributions as the whole log's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tritoninspect.analyse.trace_kernels import KernelIndex, defined_kernels, launched_kernels
from tritoninspect.analyse.trace_provenance import named_by_provenance
from tritoninspect.textformats import fx_readable as fx_graph

Named = tuple[str, "str | None", "int | None"]


@dataclass
class KernelEvidence:
    """The evidence of every segment read so far; each entry (line it came from, value)."""

    named: dict[int, tuple[int, Named]] = field(default_factory=dict)
    launched: dict[int, tuple[int, Named]] = field(default_factory=dict)
    #: kernel_idx -> launch-line name -> [nodes that show it, the first one's place (`_place`)].
    votes: dict[int, dict[str, list[int]]] = field(default_factory=dict)
    defined: dict[str, tuple[int, tuple[Any, ...]]] = field(default_factory=dict)
    #: Every kernel_idx a launch node holds.
    idxs: set[int] = field(default_factory=set)
    #: triton_op -> kernel_idx -> the place (`_place`) of the first node that attributes it to the op.
    op_kernels: dict[str, dict[int, int]] = field(default_factory=dict)
    #: (triton_op, kernel_idx -> line) of one compile's call of the op that reached several kernel_idx.
    pending: list[tuple[str, dict[int, int]]] = field(default_factory=list)

    def add(self, reader: Any) -> None:
        """The evidence of one segment, from what its read holds (analyse/trace.py `read_events`): its graphs,
        output codes and provenance artifacts, and the log line of each (`graph_lines`, `code_lines`,
        `provenance_lines`)."""
        graphs, codes, provenance = reader.graphs, reader.codes, reader.provenance
        finals: dict[tuple[str, str], list[Any]] = {}
        for graph in graphs:
            if graph.stage == "post_grad_final":
                finals.setdefault((graph.compile_id, graph.part), []).append(graph)
        for graph, line in zip(graphs, reader.graph_lines):
            self._votes(graph, line)
        for code, line in zip(codes, reader.code_lines):
            pair = finals.get((code.compile_id, code.part), [])
            for idx, value in launched_kernels(pair, [code]).items():
                _offer(self.launched, idx, line, value)
            for name, value in defined_kernels([code]).items():
                _offer(self.defined, name, line, value)
        codes_of: dict[tuple[str, str], list[Any]] = {}
        for code in codes:
            codes_of.setdefault((code.compile_id, code.part), []).append(code)
        for entry, line in zip(provenance, reader.provenance_lines):
            key = (entry[0], entry[1])
            for idx, value in named_by_provenance(finals.get(key, []), codes_of.get(key, []), [entry]).items():
                _offer(self.named, idx, line, value)

    def _votes(self, graph: Any, line: int) -> None:
        for position, hop in enumerate(graph.parsed.hops):
            if hop.kernel_idx is None:
                continue
            self.idxs.add(hop.kernel_idx)
            name = fx_graph.launched_name(hop.source.code) if hop.source else None
            if name:
                at = _place(line, position)
                vote = self.votes.setdefault(hop.kernel_idx, {}).setdefault(name, [0, at])
                vote[0] += 1
                vote[1] = min(vote[1], at)

    def add_ops(self, index: KernelIndex, graphs: list[Any], lines: list[int]) -> None:
        """Which kernel_idx each triton_op reached in one segment, as `KernelIndex._attribute` finds it: the
        op a launch node came from, outside backward graphs, unless the op's call reached several kernels
        in that compile (ambiguous: known only with the whole log's names, so such calls wait in `pending`).
        `index`: the segment's, built from its own evidence (the ops do not depend on kernel names)."""
        reached: dict[tuple[str, str], dict[int, int]] = {}
        for graph, line in zip(graphs, lines):
            for position, hop in enumerate(graph.parsed.hops if graph.part != "backward" else ()):
                op, _ = index.candidate_op(graph.compile_id, hop, graph.stage)
                if op and hop.kernel_idx is not None:
                    seen = reached.setdefault((graph.compile_id, op), {})
                    at = _place(line, position)
                    seen[hop.kernel_idx] = min(seen.get(hop.kernel_idx, at), at)
        for (_, op), seen in reached.items():
            if len(seen) == 1:
                _earliest(self.op_kernels.setdefault(op, {}), seen)
            else:
                self.pending.append((op, seen))

    # --- what KernelIndex.build reads ------------------------------------------------------------

    def names(self) -> tuple[dict[int, Named], dict[int, Named], dict[str, tuple[Any, ...]]]:
        """(provenance names, output-code launch names, definitions), each the earliest in the log."""
        return ({i: v for i, (_, v) in self.named.items()}, {i: v for i, (_, v) in self.launched.items()},
                {n: v for n, (_, v) in self.defined.items()})

    def vote(self, idx: int) -> str | None:
        """The launch-line name most nodes of `idx` show; of equals, the one shown first."""
        names = self.votes.get(idx)
        if not names:
            return None
        return min(names.items(), key=lambda item: (-item[1][0], item[1][1]))[0]

    def kernels_of_op(self, index: KernelIndex, op: str) -> list[str]:
        """The kernel ids attributed to `op` over the whole log, in the order a whole read finds them; `index`
        built with this evidence (the whole log's names)."""
        kids: dict[str, int] = {}
        calls = [self.op_kernels.get(op, {})] + [seen for name, seen in self.pending if name == op
                                                 and len({index.kernel_id(i) for i in seen}) == 1]
        for seen in calls:
            for idx, line in seen.items():
                kid = index.kernel_id(idx)
                if kid is not None:
                    kids[kid] = min(kids.get(kid, line), line)
        return sorted(kids, key=kids.__getitem__)

    def ops(self) -> set[str]:
        return set(self.op_kernels) | {op for op, _ in self.pending}


def _place(line: int, position: int) -> int:
    """A launch node's place in the log: its graph's line, then its place in the graph."""
    return line << 20 | position


def _earliest(into: dict[int, int], seen: dict[int, int]) -> None:
    for idx, line in seen.items():
        into[idx] = min(into.get(idx, line), line)


def _offer(table: dict[Any, tuple[int, Any]], key: Any, line: int, value: Any) -> None:
    if key not in table or line < table[key][0]:
        table[key] = (line, value)
