"""Lookups over a capture's nodes and output code, built once per capture.

The analyses ask "the nodes of this kernel in this compile", "the output code of this
compile" once per kernel, node or compile: scanning every node or module for each made
them quadratic in the number of compiles (a trace of a deep model holds thousands). Each
index is built on first use and kept while the lists it indexes are the same objects of
the same lengths (the capture is filled before it is analysed, never changed during it).
"""

from __future__ import annotations

from typing import Any

from tritoninspect.model.records import Capture, NodeRecord, OutputCodeRecord

_CACHE: dict[tuple[str, int], tuple[tuple[int, int], Any]] = {}


def _cached(name: str, items: list[Any], build: Any) -> Any:
    key, stamp = (name, id(items)), (id(items), len(items))
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    if len(_CACHE) > 64:
        _CACHE.clear()
    value = build(items)
    _CACHE[key] = (stamp, value)
    return value


def _nodes_by_compile(nodes: list[NodeRecord]) -> dict[str, list[NodeRecord]]:
    found: dict[str, list[NodeRecord]] = {}
    for n in nodes:
        found.setdefault(n.compile_id, []).append(n)
    return found


def _nodes_by_kernel_compile(nodes: list[NodeRecord]) -> dict[tuple[str | None, str], list[NodeRecord]]:
    found: dict[tuple[str | None, str], list[NodeRecord]] = {}
    for n in nodes:
        found.setdefault((n.kernel_id, n.compile_id), []).append(n)
    return found


def _codes_by_compile(codes: list[OutputCodeRecord]) -> dict[str, list[OutputCodeRecord]]:
    found: dict[str, list[OutputCodeRecord]] = {}
    for c in codes:
        found.setdefault(c.compile_id, []).append(c)
    return found


def nodes_of_compile(capture: Capture, cid: str) -> list[NodeRecord]:
    """The nodes of compile `cid`, in capture order."""
    return _cached("nodes-cid", capture.nodes, _nodes_by_compile).get(cid, [])


def nodes_of_kernel(capture: Capture, kernel_id: str | None, cid: str) -> list[NodeRecord]:
    """The nodes of kernel `kernel_id` in compile `cid`, in capture order."""
    return _cached("nodes-kid-cid", capture.nodes, _nodes_by_kernel_compile).get((kernel_id, cid), [])


def codes_of_compile(capture: Capture, cid: str) -> list[OutputCodeRecord]:
    """The output code modules of compile `cid`, in capture order."""
    return _cached("codes-cid", capture.output_code, _codes_by_compile).get(cid, [])
