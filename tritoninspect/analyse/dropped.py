"""Kernels that vanished: graph nodes of a kernel whose compile's output code never launches it."""

from __future__ import annotations

from tritoninspect.analyse.indexes import codes_of_compile, nodes_of_kernel
from tritoninspect.model.records import Capture
from tritoninspect.model.report import STAGES, DroppedNode, Kernel


def dropped_nodes(capture: Capture, kernel: Kernel) -> tuple[DroppedNode, ...]:
    """Graph nodes of `kernel` whose compile's output code exists but never launches it."""
    dropped = []
    for cid in dict.fromkeys(c.compile_id for c in capture.output_code):
        nodes = nodes_of_kernel(capture, kernel.id, cid)
        later = [n for n in nodes if n.stage != "dynamo"]
        for part in dict.fromkeys(n.part for n in later):
            if not _launched(capture, kernel, cid, part) and _has_code(capture, cid, part):
                last = max((n for n in later if n.part == part), key=lambda n: STAGES.index(n.stage))
                dropped.append(DroppedNode(cid, part, last.node, last.stage))
        if nodes and not later and not _launched(capture, kernel, cid, None):
            dropped.append(DroppedNode(cid, "", nodes[-1].node, "dynamo"))
    return tuple(dropped)


def _has_code(capture: Capture, cid: str, part: str) -> bool:
    return any(c.part == part for c in codes_of_compile(capture, cid))


def _launched(capture: Capture, kernel: Kernel, cid: str, part: str | None) -> bool:
    for code in codes_of_compile(capture, cid):
        if part is not None and code.part != part:
            continue
        if any((k.name, k.file, k.line) == (kernel.name, kernel.file, kernel.line) and k.launched for k in code.user_kernels):
            return True
    return False
