"""A whole trace capture split into segments of compiles, as analyse/trace_segments.py reads a long log:
what tests/test_segments.py holds the analyses and the join to, without the reader."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator

from tritoninspect.analyse.segments import first_launches
from tritoninspect.model.hazard_records import HazardRecords
from tritoninspect.model.records import Capture, NodeRecord


def _compiles(capture: Capture) -> list[str]:
    """Compile ids in the order the capture met them."""
    seen: dict[str, None] = {}
    for rows in (capture.graphs, capture.nodes, capture.output_code, capture.breaks, capture.recompiles):
        for row in rows:
            seen.setdefault(row.compile_id, None)
    return list(seen)


def _only(rows: list, ids: set[str], known: set[str] | None) -> list:
    """The rows of compiles `ids`; with `known`, those of no compile in it too (an eager launch's)."""
    return [r for r in rows if r.compile_id in ids or (known is not None and r.compile_id not in known)]


def split(capture: Capture, size: int) -> Iterator[Capture]:
    """`capture` as segments of `size` compiles, made one at a time: each record of a compile in its segment
    (records of no compile in the first), what spans compiles (kernels, sources, meta) in each, and earlier
    segments' launch nodes as `earlier_nodes`."""
    order = _compiles(capture)
    known, earlier = set(order), list[NodeRecord]()
    for start in range(0, max(len(order), 1), size):
        ids, others = set(order[start:start + size]), known if start == 0 else None
        part = copy.copy(capture)
        for f in dataclasses.fields(Capture):
            value = getattr(capture, f.name)
            if isinstance(value, list) and value and hasattr(value[0], "compile_id"):
                setattr(part, f.name, _only(value, ids, others))
        hazards = capture.hazards
        part.hazards = dataclasses.replace(hazards, **{
            f.name: _only(getattr(hazards, f.name), ids, others) for f in dataclasses.fields(HazardRecords)
            if isinstance(getattr(hazards, f.name), list) and getattr(hazards, f.name)
            and hasattr(getattr(hazards, f.name)[0], "compile_id")})
        part.earlier_nodes = list(earlier)
        earlier += first_launches(part.nodes)
        yield part
