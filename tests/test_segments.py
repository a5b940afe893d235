"""A trace's report joined from its segments' reports is the whole capture's (analyse/segments.py)."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest

from tritoninspect.analyse import build_report
from tritoninspect.analyse.segments import first_launches, join
from tritoninspect.analyse.trace import capture_from_trace
from tritoninspect.model.hazard_records import HazardRecords
from tritoninspect.model.records import Capture
from tritoninspect.textformats.torch_trace import ARTIFACTS_READ, TraceLog, log_rank_in_name, stream_trace

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
LOGS = sorted(FIXTURES.rglob("*.log"))


def _capture(path: Path) -> Capture:
    log = TraceLog(path, log_rank_in_name(path))
    return capture_from_trace(log, str(path), stream_trace(log, ARTIFACTS_READ))


def _compiles(capture: Capture) -> list[str]:
    """Compile ids in the order the capture met them."""
    seen: dict[str, None] = {}
    for rows in (capture.graphs, capture.nodes, capture.output_code, capture.breaks, capture.recompiles):
        for row in rows:
            seen.setdefault(row.compile_id, None)
    return list(seen)


def _only(rows: list, ids: set[str]) -> list:
    return [r for r in rows if getattr(r, "compile_id", None) in ids]


def split(capture: Capture, size: int) -> list[Capture]:
    """`capture` as segments of `size` compiles: each record of a compile in its segment, what spans compiles
    (kernels, sources, meta) in each, and earlier segments' launch nodes as `earlier_nodes`."""
    order = _compiles(capture)
    parts, earlier = [], []
    for start in range(0, max(len(order), 1), size):
        ids = set(order[start:start + size])
        part = copy.copy(capture)
        for f in dataclasses.fields(Capture):
            value = getattr(capture, f.name)
            if isinstance(value, list) and value and hasattr(value[0], "compile_id"):
                setattr(part, f.name, _only(value, ids))
        part.hazards = dataclasses.replace(capture.hazards, **{
            f.name: _only(getattr(capture.hazards, f.name), ids) for f in dataclasses.fields(HazardRecords)
            if isinstance(getattr(capture.hazards, f.name), list) and getattr(capture.hazards, f.name)
            and hasattr(getattr(capture.hazards, f.name)[0], "compile_id")})
        part.earlier_nodes = list(earlier)
        earlier += first_launches(part.nodes)
        parts.append(part)
    return parts


@pytest.mark.parametrize("size", [1, 2])
@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(FIXTURES).parent))
def test_joined_report_is_the_whole_one(path: Path, size: int) -> None:
    capture = _capture(path)
    whole = build_report(capture)
    parts = [build_report(part) for part in split(capture, size)]
    assert join(parts, list(capture.kernels)).to_json() == whole.to_json()


def test_every_rule_has_its_family() -> None:
    from tritoninspect.analyse.hazards import HAZARDS, RULE_IDS, family_of

    assert {family_of(rule) for rule in RULE_IDS} <= set(HAZARDS)


def test_a_recompile_in_a_later_segment_reads_the_earlier_compile() -> None:
    """recompile_constexpr: each recompile's changed arguments come from the compile it replaced, which a
    segment of one compile does not hold; without `earlier_nodes` the changes would be empty."""
    capture = _capture(next(p for p in LOGS if p.parent.name == "recompile_constexpr"))
    parts = split(capture, 1)
    assert any(part.recompiles for part in parts[1:])
    changed = [r for part in parts for r in build_report(part).recompiles if r.changes]
    assert changed
    for part in parts:
        part.earlier_nodes = []
    assert not [r for part in parts for r in build_report(part).recompiles if r.changes]
