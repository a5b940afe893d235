"""Lookups over a capture's nodes and output code, built once per capture.

The analyses ask "the nodes of this kernel in this compile", "the output code of this
compile" once per kernel, node or compile: scanning every node or module for each made
them quadratic in the number of compiles (a trace of a deep model holds thousands). Each
index is built on first use and kept, with the list it indexes, while that list is the
same object of the same length (the capture is filled before it is analysed, never changed
during it); holding the list means its id cannot be reused by a later capture's list.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from tritoninspect.model.records import Capture, NodeRecord, OutputCodeRecord
from tritoninspect.textformats.memo import TextMemo
from tritoninspect.textformats.user_kernels import UserKernelMeta, user_kernel_metas

#: Index name -> (the list indexed, its length then, the index): the latest capture's only.
_LATEST: dict[str, tuple[list[Any], int, Any]] = {}


def _cached(name: str, items: list[Any], build: Any) -> Any:
    hit = _LATEST.get(name)
    if hit is not None and hit[0] is items and hit[1] == len(items):
        return hit[2]
    value = build(items)
    _LATEST[name] = (items, len(items), value)
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


def earlier_nodes_of_kernel(capture: Capture, kernel_id: str | None, cid: str) -> list[NodeRecord]:
    """The launch nodes an earlier segment of a trace left for kernel `kernel_id` in compile `cid`
    (`Capture.earlier_nodes`)."""
    return _cached("earlier-kid-cid", capture.earlier_nodes, _nodes_by_kernel_compile).get((kernel_id, cid), [])


def codes_of_compile(capture: Capture, cid: str) -> list[OutputCodeRecord]:
    """The output code modules of compile `cid`, in capture order."""
    return _cached("codes-cid", capture.output_code, _codes_by_compile).get(cid, [])


#: A user kernel as the output code names it: (name, file, line).
KernelKey = tuple[str, str | None, int | None]


def _user_kernel_defs(codes: list[OutputCodeRecord]) -> dict[KernelKey, list[tuple[OutputCodeRecord, UserKernelMeta]]]:
    found: dict[KernelKey, list[tuple[OutputCodeRecord, UserKernelMeta]]] = {}
    for code in codes:
        if not code.user_kernels:
            continue
        metas = KERNEL_METAS(code.code)  # one parse per module, not one per kernel that asks
        for kernel in code.user_kernels:
            meta = metas.get(kernel.inductor_name)
            if meta is not None:
                found.setdefault((kernel.name, kernel.file, kernel.line), []).append((code, meta))
    return found


def _read_only_metas(code: str) -> Mapping[str, UserKernelMeta]:
    return MappingProxyType(user_kernel_metas(code))


#: Each distinct output module's user-kernel metadata, parsed once per process (the ranks of one job
#: share their modules; textformats/memo.py).
KERNEL_METAS = TextMemo(_read_only_metas, limit=32 << 20, devices=True)


def user_kernel_defs(capture: Capture, key: KernelKey) -> list[tuple[OutputCodeRecord, UserKernelMeta]]:
    """Each output module's definition of the user kernel `key` with its metadata, in capture order."""
    return _cached("user-kernel-defs", capture.output_code, _user_kernel_defs).get(key, [])


def _user_kernel_defs_by_compile(codes: list[OutputCodeRecord]
                                 ) -> dict[tuple[KernelKey, str], list[tuple[OutputCodeRecord, UserKernelMeta]]]:
    found: dict[tuple[KernelKey, str], list[tuple[OutputCodeRecord, UserKernelMeta]]] = {}
    for key, defs in _cached("user-kernel-defs", codes, _user_kernel_defs).items():
        for code, meta in defs:
            found.setdefault((key, code.compile_id), []).append((code, meta))
    return found


def user_kernel_defs_of_compile(capture: Capture, key: KernelKey, cid: str
                                ) -> list[tuple[OutputCodeRecord, UserKernelMeta]]:
    """`user_kernel_defs` of compile `cid` only, in capture order."""
    return _cached("user-kernel-defs-cid", capture.output_code, _user_kernel_defs_by_compile).get((key, cid), [])
