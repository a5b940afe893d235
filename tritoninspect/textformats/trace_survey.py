"""Where each segment's events lie in a log: one pass over its event lines, no payload read (issue 26).

A long log is read a segment of compiles at a time (analyse/trace_segments.py): the compiles in the order
their first events come, `size` a segment. A compile's events are not always together in the log:
AOTAutograd compiles a graph's backward at its first backward call, after the forward compiles of every frame
that ran before it (its `bwd_compilation_metrics` closes it there). So the survey finds, for each segment, the
runs of lines that hold its compiles' events, and a segment is read by seeking to them. What it keeps is a few
numbers a segment and one entry per recompile: a compile's id is held only while the survey reads.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field

from tritoninspect.textformats.breaks import replaced_compile
from tritoninspect.textformats.log_text import changed_log
from tritoninspect.textformats.torch_trace import SURVEYED, TraceEvent, TraceLog, stream_trace


@dataclass
class Survey:
    """Where the events of each segment of one log lie."""

    #: Compiles a segment holds.
    size: int
    #: Compiles in the log (events of no compile count as one).
    compiles: int = 0
    #: Each segment's runs of lines, three numbers each: the first line's byte offset, its number, and the
    #: offset where the run ends; in the log's order, adjacent runs joined.
    segments: list[array] = field(default_factory=list)
    #: The stack file names the log interns (`str` events), for reading a segment whose runs hold none of them.
    strings: dict[int, str] = field(default_factory=dict)
    #: The line of the log's last event.
    last_line: int = 0
    #: Compile id -> the last segment holding a recompile that compares with it (analyse/breaks.py): its launch
    #: nodes are needed until that segment has been read.
    needed: dict[str, int] = field(default_factory=dict)
    #: The file surveyed: (device, inode), and the bytes read. A job may go on appending to its log; a log
    #: replaced or cut short since is refused (`check`).
    identity: tuple[int, int] = (0, 0)
    end: int = 0

    def check(self, path: str | os.PathLike[str]) -> None:
        """Raise the changed-log error when `path` is no longer the file surveyed, or is shorter."""
        try:
            stat = os.stat(path)
        except OSError as exc:
            raise changed_log(path) from exc
        if (stat.st_dev, stat.st_ino) != self.identity or stat.st_size < self.end:
            raise changed_log(path)

    def runs(self, segment: int) -> list[tuple[int, int, int]]:
        runs = self.segments[segment]
        return [(runs[i], runs[i + 1], runs[i + 2]) for i in range(0, len(runs), 3)]


def survey(log: TraceLog, size: int) -> Survey | None:
    """The survey of `log` in segments of `size` compiles; `log` gets what a whole read gives it (`unreadable`,
    `started`, `ended`, ...). None for a log that cannot be read in parts (a .gz, or one read as text: its
    events have no byte offsets)."""
    stat = os.stat(log.path)
    found = Survey(size, identity=(stat.st_dev, stat.st_ino))
    segment_of: dict[str | None, int] = {}  # compile id -> its segment, while the survey reads
    replaced: list[tuple[str, str]] = []  # (compile replaced, the recompile)
    current: str | None = None
    start = line = -1
    for event in stream_trace(log, SURVEYED, strings=found.strings):
        if event.at < 0:
            return None
        found.last_line = event.line
        _note_recompile(replaced, event)
        if start >= 0 and event.compile_id == current:
            continue
        if start >= 0:
            _run(found, segment_of[current], start, line, event.at)
        current, start, line = event.compile_id, event.at, event.line
        if current not in segment_of:
            segment_of[current] = len(segment_of) // size
            if segment_of[current] == len(found.segments):
                found.segments.append(array("q"))
    found.end = log.read_to  # where the survey stopped: what a job appended since is not read
    if start >= 0:
        _run(found, segment_of[current], start, line, found.end)
    found.compiles = len(segment_of)
    found.check(log.path)  # replaced while surveyed
    for old, new in replaced:
        if old in segment_of and new in segment_of:
            found.needed[old] = max(found.needed.get(old, 0), segment_of[new])
    return found


def _run(found: Survey, segment: int, start: int, line: int, end: int) -> None:
    runs = found.segments[segment]
    if runs and runs[-1] == start:
        runs[-1] = end  # the segment's previous run ends where this one starts: one run
    else:
        runs.extend((start, line, end))


def _note_recompile(replaced: list[tuple[str, str]], event: TraceEvent) -> None:
    reason = event.meta.get("recompile_reason") if event.name == "compilation_metrics" else None
    if reason and event.compile_id and not event.meta.get("fail_type"):
        old = replaced_compile(event.compile_id, str(reason))
        if old is not None:
            replaced.append((old, event.compile_id))
