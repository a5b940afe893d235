"""A long trace log read a segment of compiles at a time (issue 26): what is held does not grow with the log.

The survey (textformats/trace_survey.py) says where each segment's events lie: consecutive compiles, in the
order their first events come. The log is then read twice, a segment at a time, seeking to its events:

1. for what the whole log decides and no segment alone can: the names of its kernels and the ops they are
   attributed to (`KernelEvidence`), the report's meta (devices, how far compiles got, the first compile's
   versions), which failure came first, and which source files changed since it was written;
2. for each segment's capture, built with that evidence, which the usual analyses turn into the segment's
   report (analyse/segments.py joins them).

Each segment's capture is what the whole log's capture holds of its compiles (tests/test_segments.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tritoninspect.analyse.segments import first_launches
from tritoninspect.analyse.trace import capture_of, read_events, stale_note, trace_meta
from tritoninspect.analyse.trace_evidence import KernelEvidence
from tritoninspect.analyse.trace_kernels import KernelIndex
from tritoninspect.analyse.trace_provenance import named_by_provenance
from tritoninspect.model.records import Capture, NodeRecord
from tritoninspect.textformats.torch_trace import ARTIFACTS_READ, TraceLog, stream_trace
from tritoninspect.textformats.trace_damage import NotUtf8
from tritoninspect.textformats.trace_survey import Survey


@dataclass
class _Whole:
    """What a first read of every segment says about the whole log."""

    evidence: KernelEvidence = field(default_factory=KernelEvidence)
    devices: set[str] = field(default_factory=set)
    codes: bool = False
    later_graphs: bool = False
    backward: bool = False
    stale: set[str] = field(default_factory=set)
    #: (line, segment) of the first compile's metrics, and of the first failure (0: none).
    metrics: tuple[int, int] = (0, -1)
    failure: tuple[int, int] = (0, -1)
    #: The meta of the segment that read the first compile's metrics (`trace_meta`).
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Segment:
    """One segment's capture, and its notes by kind (the whole log's notes are those of every segment, kind by
    kind: analyse/trace.py `capture_from_trace`)."""

    capture: Capture
    mappings: list[str]
    index_notes: list[str]
    cut: str


def segments(log: TraceLog, target: str, plan: Survey) -> tuple[str, Iterator[Segment]]:
    """The segments of `log` the survey found (it holds the survey's counts), made one at a time; and the
    note on source files changed since the log was written ("" if none), known once all were read once."""
    whole = _Whole()
    for number in range(len(plan.segments)):
        reader, _ = _read(log, plan, number)
        _learn(whole, log, reader, number, target)
        del reader
        _collect()
    return (stale_note(whole.stale) if whole.stale else ""), _captures(log, plan, whole)


def _captures(log: TraceLog, plan: Survey, whole: _Whole) -> Iterator[Segment]:
    meta = _meta(whole)
    # A compile's first launches, kept from its segment until the last segment that recompiles from it.
    needed = plan.needed
    earlier: dict[str, list[NodeRecord]] = {}
    damage = NotUtf8()
    for number in range(len(plan.segments)):
        reader, cut = _read(log, plan, number, damage)
        capture, index = capture_of(reader, whole.evidence)
        if number != whole.failure[1]:
            capture.failure = None  # a later failure than the log's first (a whole read keeps the first only)
        if number:
            capture.problems = []  # the kernels' problems are the whole log's, said once
        capture.meta = {**meta, "notes": []}
        capture.earlier_nodes = [n for nodes in earlier.values() for n in nodes]
        for node in first_launches(capture.nodes):
            if needed.get(node.compile_id, -1) > number:
                earlier.setdefault(node.compile_id, []).append(node)
        for cid in [c for c in earlier if needed[c] <= number]:
            del earlier[cid]
        yield Segment(capture, index.mapping_notes(reader.graphs), list(index.notes), cut)
        del reader, capture, index
        _collect()
    plan.check(log.path)  # replaced while its last segment was read
    log.not_utf8 = damage


def _read(log: TraceLog, plan: Survey, segment: int, damage: NotUtf8 | None = None) -> tuple[Any, str]:
    """What the events of segment `segment` say. The survey counted the log's lines; `damage` gets the lines
    read that are not UTF-8 (the survey reads no payload, and each event is read in one segment)."""
    plan.check(log.path)
    scratch = TraceLog(log.path, log.rank)
    scratch.ended = log.ended  # the whole log's: whether the last output code's compile ended
    scratch.not_utf8 = damage if damage is not None else scratch.not_utf8
    events = stream_trace(scratch, ARTIFACTS_READ, strings=dict(plan.strings), runs=plan.runs(segment))
    return read_events(log, events, plan.last_line)


def _learn(whole: _Whole, log: TraceLog, reader: Any, number: int, target: str) -> None:
    """What segment `number`'s first read adds to `whole`."""
    whole.evidence.add(reader)
    named = named_by_provenance(reader.graphs, reader.codes, reader.provenance)
    whole.evidence.add_ops(KernelIndex.build(reader.graphs, reader.codes, named), reader.graphs, reader.graph_lines)
    whole.devices |= reader.devices
    whole.codes |= bool(reader.codes)
    whole.later_graphs |= any(g.stage != "dynamo" for g in reader.graphs)
    whole.backward |= any(g.stage == "aot_backward" for g in reader.graphs)
    whole.stale |= reader.stale
    if reader.metrics_line and (not whole.metrics[0] or reader.metrics_line < whole.metrics[0]):
        whole.metrics = (reader.metrics_line, number)
        whole.meta = trace_meta(log, reader, target)
    if reader.failure_line and (not whole.failure[0] or reader.failure_line < whole.failure[0]):
        whole.failure = (reader.failure_line, number)
    if not whole.meta:
        whole.meta = trace_meta(log, reader, target)


def _meta(whole: _Whole) -> dict[str, Any]:
    """`trace_meta` of the whole log: the first compile's versions, every segment's devices and stages."""
    stage = "inductor" if whole.codes else "aot" if whole.later_graphs else "dynamo"
    return {**whole.meta, "device": ", ".join(sorted(whole.devices)) or "unknown", "stage": stage,
            "backward": whole.backward}


def _collect() -> None:
    """What a segment left in reference cycles, freed before the next is read: `ast.literal_eval` (launch
    arguments, constexprs) leaves four closures in a cycle per call, which otherwise wait for a full
    collection while later segments' objects are placed around them. The young generations only: they
    hold the segment's cycles, and a full collection walks every module's objects (2 s over a 100 MiB log,
    for 0.2 MiB less peak memory)."""
    import gc

    gc.collect(1)
