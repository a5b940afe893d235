"""What compile-only mode emulated for the run: said in a note, so no one mistakes it for a GPU run."""

from __future__ import annotations

import os
from pathlib import Path

from tritoninspect.capture.records import Capture, DeviceQueryRecord
from tritoninspect.report import Diagnostic

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
        f"{asked}; the values are a data sheet's, not from a GPU, and torch.cuda.is_available() stayed False",
    )]


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
