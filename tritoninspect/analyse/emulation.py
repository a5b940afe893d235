"""What compile-only mode emulated for the run, and where its honest "no GPU" answer
(`torch.cuda.is_available()` False) sent the code another way than a GPU run: said in
notes, and marked on the graph breaks that follow such an answer."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tritoninspect.model.records import Capture, DeviceProbeRecord, DeviceQueryRecord
from tritoninspect.model.report import DEVICE_PROBE_MEANING, Diagnostic, GraphBreak, Report
from tritoninspect.textformats.breaks import frame_location, original_function

#: Installed packages: a caller there is shown from the package on (`fla/utils/hardware.py:102`).
_SITE_DIRS = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


def emulation_notes(capture: Capture, cwd: Path | None = None) -> list[Diagnostic]:
    """One note listing the CUDA device queries compile-only mode answered, when any was asked."""
    emulation = capture.emulation
    if emulation is None or not emulation.queries:
        return []
    asked = ", ".join(_query_text(q, cwd or Path.cwd()) for q in emulation.queries)
    return [Diagnostic(
        "note", "compile-only",
        f"emulated CUDA device queries for {emulation.target} ({emulation.like}-like, \"{emulation.device_name}\"): "
        f"{asked}; the values are a data sheet's, not from a GPU, and torch.cuda.is_available() stayed "
        f"{emulation.cuda_available}",
    )]


#: How the diagnostic of `probe_notes` begins (the failure text finds it by this).
PROBE_NOTE = "torch.cuda.is_available() answered False (no GPU here)"
#: What a failure after such an answer may be, as the failure text and the diagnostic say it.
FAILURE_AFTER_PROBE = ("compile-only mode answered torch.cuda.is_available() False before this failure, so the "
                       "code took its no-GPU path: a GPU run may not fail here")


def probe_notes(capture: Capture, graph_breaks: Iterable[GraphBreak] = (), cwd: Path | None = None) -> list[Diagnostic]:
    """One diagnostic listing where `torch.cuda.is_available()` answered False to the user's or a
    library's code: a warning when graph breaks or the run's failure follow such an answer (they
    may be compile-only's own), else a note."""
    emulation = capture.emulation
    if emulation is None or not emulation.probes:
        return []
    cwd = cwd or Path.cwd()
    parts = []
    for traced, label in ((True, "while Dynamo traced"), (False, "run eagerly")):
        places = [_probe_text(p, cwd) for p in emulation.probes if p.traced is traced]
        if places:
            parts.append(f"{label}: {', '.join(places)}")
    marked = [b for b in graph_breaks if b.device_probe]
    tail = (f"; {len(marked)} graph break(s) follow such a probe (each marked: it {DEVICE_PROBE_MEANING})" if marked
            else "; no graph break follows one")
    if capture.failure is not None:
        tail += f"; the run failed after it ({capture.failure.stage}): a GPU run may not fail there"
    return [Diagnostic(
        "warning" if marked or capture.failure is not None else "note", "compile-only",
        f"{PROBE_NOTE} where the GPU compile-only mode stands for "
        f"answers True, so the code after it took its no-GPU path: {'; '.join(parts)}{tail}",
    )]


def failure_follows_probe(report: Report) -> bool:
    """The report's failure came in compile-only mode after `torch.cuda.is_available()` answered
    False to the user's or a library's code: it may be compile-only's own (a GPU run answers True)."""
    return report.failure is not None and any(
        d.source == "compile-only" and d.message.startswith(PROBE_NOTE) for d in report.diagnostics)


def enrich_device_probes(capture: Capture, fields: dict[str, Any]) -> dict[str, Any]:
    """`graph_breaks` with `device_probe` set on each break whose traced user stack runs through a
    function in which Dynamo traced a False `torch.cuda.is_available()` (the first such frame,
    innermost first)."""
    emulation = capture.emulation
    traced = [p for p in emulation.probes if p.traced] if emulation is not None else []
    breaks = fields.get("graph_breaks", ())
    if not traced or not breaks:
        return {}
    return {"graph_breaks": tuple(_marked(b, traced) for b in breaks)}


def _marked(b: GraphBreak, probes: list[DeviceProbeRecord]) -> GraphBreak:
    for frame in reversed(b.user_stack):
        file, _ = frame_location(frame)
        function = original_function(frame.rpartition(" in ")[2])
        for probe in probes:
            if probe.function == function and probe.place.rpartition(":")[0] == file:
                return dataclasses.replace(b, device_probe=f"{probe.place} in {probe.function}")
    return b


def _probe_text(probe: DeviceProbeRecord, cwd: Path) -> str:
    ids = f", compile {', '.join(probe.compile_ids)}" if probe.compile_ids else ""
    return f"{_place(probe.place, cwd)} in {probe.function} (×{probe.calls}{ids})"


def _query_text(query: DeviceQueryRecord, cwd: Path) -> str:
    where = f" ({_place(query.first_caller, cwd)})" if query.first_caller else ""
    return f"{query.function} ×{query.calls}{where}"


def _place(caller: str, cwd: Path) -> str:
    """`file:line`, shortened: from the package on for an installed library, relative to cwd under it."""
    for site in _SITE_DIRS:
        if site in caller:
            return caller.rsplit(site, 1)[1]
    file, _, line = caller.rpartition(":")
    try:
        return f"{Path(file).relative_to(cwd)}:{line}"
    except ValueError:
        return caller
