"""Where each compile's events lie in a log: one pass over its event lines, no payload read (issue 26).

A long log is read a segment of compiles at a time (analyse/trace_segments.py). A compile's events are not
always together in the log: AOTAutograd compiles a graph's backward at its first backward call, after the
forward compiles of every frame that ran before it (its `bwd_compilation_metrics` closes it there). So each
compile's events are found first, as runs of lines, and a segment is read by seeking to its compiles' runs.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field

from tritoninspect.textformats.breaks import replaced_compile
from tritoninspect.textformats.torch_trace import SURVEYED, TraceEvent, TraceLog, stream_trace


@dataclass
class Survey:
    """Where the events of each compile of one log lie."""

    #: Compile ids in the order of their first event (None: events of no compile).
    order: list[str | None] = field(default_factory=list)
    #: Compile id -> its runs of lines, three numbers each: the first line's byte offset, its number, and the
    #: offset where the run ends (the next event of another compile).
    runs: dict[str | None, array] = field(default_factory=dict)
    #: The stack file names the log interns (`str` events), for reading a segment whose runs hold none of them.
    strings: dict[int, str] = field(default_factory=dict)
    #: The line of the log's last event.
    last_line: int = 0
    #: Compile id -> the recompiles that compare with it (analyse/breaks.py): its launch nodes are needed
    #: until the last of them has been read.
    replaced_by: dict[str, list[str]] = field(default_factory=dict)

    def runs_of(self, compiles: list[str | None]) -> list[tuple[int, int, int]]:
        """The runs of `compiles`, in the log's order."""
        found = [tuple(self.runs[c][i:i + 3]) for c in compiles for i in range(0, len(self.runs[c]), 3)]
        return sorted(found)  # type: ignore[arg-type]


def survey(log: TraceLog) -> Survey | None:
    """The survey of `log`, which gets what a whole read gives it (`unreadable`, `started`, `ended`, ...); None
    for a log that cannot be read in parts (a .gz, or one read as text: its events have no byte offsets)."""
    found = Survey()
    current: str | None = None
    run_start = run_line = -1
    for event in stream_trace(log, SURVEYED, strings=found.strings):
        if event.at < 0:
            return None
        found.last_line = event.line
        _note_recompile(found, event)
        if run_start >= 0 and event.compile_id == current:
            continue
        if run_start >= 0:
            found.runs[current].extend((run_start, run_line, event.at))
        current, run_start, run_line = event.compile_id, event.at, event.line
        if current not in found.runs:
            found.order.append(current)
            found.runs[current] = array("q")
    if run_start >= 0:
        found.runs[current].extend((run_start, run_line, os.path.getsize(log.path)))
    return found


def _note_recompile(found: Survey, event: TraceEvent) -> None:
    reason = event.meta.get("recompile_reason") if event.name == "compilation_metrics" else None
    if reason and event.compile_id and not event.meta.get("fail_type"):
        replaced = replaced_compile(event.compile_id, str(reason))
        if replaced is not None:
            found.replaced_by.setdefault(replaced, []).append(event.compile_id)
