"""Recompile risks a kernel's specialisation adds: the guards on sizes tied to its launch, and the
symbolic sizes (backed or unbacked) in its arguments, from records only.

An enricher. torch guards every size a launch turns into a Python value: a `@triton.heuristics`
value computed from a size (`x.size(0) % 16 == 0`), a size passed to a `tl.constexpr` parameter
or used to compute one (`x.size(1) == 48`). A later call whose sizes fail the guard recompiles.
Each guard of a compile (`GuardRecord`, the ShapeEnv's, with where torch added it) is tied to the
kernel launched at that place:

- added on the launch's own line (the HOP node's stack trace): a constexpr or argument of that
  launch; the parameters whose value the guard names are the likely cause;
- added inside Triton's `Heuristics.run` (triton/runtime/autotuner.py): a heuristics value of a
  kernel of that compile that has `@triton.heuristics`.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from tritoninspect.model.records import Capture, GuardRecord, NodeRecord, SymbolRecord
from tritoninspect.model.report import Kernel, KernelGuard, SymbolicArg

#: Where Triton evaluates heuristics (Dynamo inlines `Heuristics.run`), as torch's user location names it.
_HEURISTICS_FILE = re.compile(r"triton/runtime/autotuner\.py$")
_SYMBOL = re.compile(r"\b[su]\d+\b")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")


def enrich_guards(capture: Capture, fields: dict[str, Any]) -> dict[str, Any]:
    """`kernels` with their guards and symbolic arguments."""
    kernels = tuple(_kernel(capture, k) for k in fields.get("kernels", ()))
    return {"kernels": kernels}


def _kernel(capture: Capture, kernel: Kernel) -> Kernel:
    nodes = [n for n in capture.nodes if n.kernel_id == kernel.id and n.stage == "dynamo" and n.form != "op"]
    guards = tuple(g for node in nodes for g in _guards_of(capture, kernel, node))
    args = tuple(a for node in nodes for a in _symbolic_args(capture, node))
    if not guards and not args:
        return kernel
    return dataclasses.replace(kernel, guards=tuple(dict.fromkeys(guards)), symbolic_args=tuple(dict.fromkeys(args)))


# --- guards -----------------------------------------------------------------------------------


def _guards_of(capture: Capture, kernel: Kernel, node: NodeRecord) -> list[KernelGuard]:
    found = []
    for guard in capture.guards:
        if guard.compile_id != node.compile_id or guard.file is None:
            continue
        if _same_place(guard, node.source):
            params = _named_params(guard, node)
            cause = "constexpr" if params and set(params) <= set(node.constexprs or {}) else "launch"
            found.append(_record(guard, cause, params))
        elif _HEURISTICS_FILE.search(guard.file) and kernel.heuristics and _only_heuristics_launch(capture, node):
            found.append(_record(guard, "heuristics", kernel.heuristics))
    return found


def _record(guard: GuardRecord, cause: str, params: tuple[str, ...]) -> KernelGuard:
    where = f"{guard.file}:{guard.line}" if guard.line is not None else guard.file
    return KernelGuard(guard.compile_id, guard.expression, guard.symbolic, cause, params, where)  # type: ignore[arg-type]


def _same_place(guard: GuardRecord, source: str | None) -> bool:
    """Is the guard's place (torch shortens its file to the path's end) the launch's "file:line"?"""
    if source is None or guard.line is None or guard.file is None:
        return False
    file, _, line = source.rpartition(":")
    return line == str(guard.line) and file.endswith(guard.file.lstrip("."))


def _named_params(guard: GuardRecord, node: NodeRecord) -> tuple[str, ...]:
    """The launch's constexprs and scalars whose value the guard's expression names (`N_COLS=48`
    for `x.size(1) == 48`), constexprs first; symbolic scalars named by the guard's symbols."""
    numbers = set(_NUMBER.findall(guard.symbolic))
    symbols = set(guard.symbols)
    names = []
    for values in (node.constexprs or {}, node.scalars or {}):
        for name, value in values.items():
            text = str(value)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and text in numbers:
                names.append(name)
            elif isinstance(value, str) and symbols & set(_SYMBOL.findall(text)):
                names.append(name)
    return tuple(dict.fromkeys(names))


def _only_heuristics_launch(capture: Capture, node: NodeRecord) -> bool:
    """Is this the one launch of a `@triton.heuristics` kernel in its compile? (Then a guard added in
    Triton's `Heuristics.run` is its.) With several, a guard there cannot be told apart: none is tied."""
    def has_heuristics(n: NodeRecord) -> bool:
        record = capture.kernels.get(n.kernel_id or "")
        return bool(record and record.heuristics)

    launches = [n for n in capture.nodes if n.compile_id == node.compile_id and n.stage == "dynamo"
                and n.form != "op" and has_heuristics(n)]
    return len(launches) == 1


# --- symbolic arguments -----------------------------------------------------------------------


def _symbolic_args(capture: Capture, node: NodeRecord) -> list[SymbolicArg]:
    sources = {s.symbol: s for s in capture.symbols if s.compile_id == node.compile_id}
    values: list[tuple[str, str]] = [(k, v) for k, v in (node.scalars or {}).items() if isinstance(v, str)]
    grids = dict.fromkeys(str(x) for grid in node.grid or () for x in grid if isinstance(x, str))
    values += [("grid", g) for g in grids]
    found = []
    for param, value in values:
        symbols = tuple(dict.fromkeys(_SYMBOL.findall(value)))
        if symbols:
            said = tuple(_said(symbol, sources.get(symbol)) for symbol in symbols)
            found.append(SymbolicArg(node.compile_id, param, value, said, any(s.startswith("u") for s in symbols)))
    return found


def _said(symbol: str, source: SymbolRecord | None) -> str:
    """`s77 = x.size(0)`; `u0 = count.item() (model.py:41)`; `s3` when its source is unknown."""
    if source is None:
        return symbol
    where = f" ({source.where})" if source.where else ""
    return f"{symbol} = {source.source}{where}"
