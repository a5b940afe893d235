"""A compile's guards on sizes and what its symbols stand for, as plain records (issue 22, item 3)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from tritoninspect.capture import compat
from tritoninspect.model.records import Capture, GuardRecord, SymbolRecord


def record_shapes(capture: Capture, gm: torch.fx.GraphModule, cid: str, note: Callable[[str, str], None]) -> None:
    """Add compile `cid`'s guards on sizes and its symbols' sources to `capture`. Called when the
    backend returns (or fails): AOTAutograd and Inductor have added their guards by then, and
    Dynamo installs them after it. What cannot be read is a `note(source, message)`, never an
    exception (the caller is a `finally`)."""
    try:
        _record(capture, gm, cid)
    except Exception as exc:  # noqa: BLE001 - never mask the compile's own error
        first = next(iter(str(exc).strip().splitlines()), "")
        note("guards", f"[{cid}] the guards on sizes could not be read ({type(exc).__name__}: {first})")


def _record(capture: Capture, gm: torch.fx.GraphModule, cid: str) -> None:
    for guard in compat.shapes.shape_guards():
        file, line, code = guard.place()
        capture.guards.append(GuardRecord(cid, guard.expression, guard.symbolic, guard.symbols, file, line, code))
    for symbol, source in compat.shapes.symbol_sources().items():
        capture.symbols.append(SymbolRecord(cid, symbol, source))
    for symbol, (source, where) in compat.shapes.unbacked_sources(gm).items():
        capture.symbols.append(SymbolRecord(cid, symbol, source, where))
