"""The facts of one cloned kernel argument (`ClonedArg`), from its AOT node's records.

What the clone advice rests on (analyse/advice_clones.py): how the kernel's body uses the argument,
where it comes from in the AOT graph (capture/buffers.py), and whether the compiler merged it with
another argument.
"""

from __future__ import annotations

import dataclasses

from tritoninspect.model.records import Capture, NodeRecord
from tritoninspect.model.report import ClonedArg


def cloned_arg(arg: str, reason: str, node: NodeRecord, final: NodeRecord | None, after: tuple[str, ...] | None,
               merged: set[str]) -> ClonedArg:
    """One argument of `tensors_to_clone`: whether Inductor still clones it (`after`: what re-inplacing
    left, None when unknown), what a clone copies, how the kernel uses it and where it comes from."""
    cloned = None if after is None else arg in after
    size = (final.inductor_clones or {}).get(arg) if cloned and final else (node.tensor_bytes or {}).get(arg)
    plain = ClonedArg(arg, reason, (node.tensor_types or {}).get(arg), cloned, size, uses=(node.uses or {}).get(arg, ()))
    buffer = next((b for b in node.buffers or () if b.arg == arg), None)
    if buffer is None:
        return plain
    return dataclasses.replace(
        plain, made_by=buffer.made_by, view=buffer.view, fill=buffer.fill, shares_with=buffer.shares_base_with,
        merged=arg in merged, read_after=buffer.read_after, written_back=buffer.written_back,
    )


def merged_args(capture: Capture, kernel_id: str, node: NodeRecord) -> set[str]:
    """Arguments of `node` that share a tensor with another argument in the AOT graph although no
    Dynamo graph of the compile ever gave that kernel one tensor for both: the compiler merged them."""
    # Only the very same tensor (not views of one: those the user made, in Dynamo's graph too).
    whole = {b.arg for b in node.buffers or () if not b.view}
    sharing = {b.arg: set(b.shares_base_with) & whole for b in node.buffers or () if b.arg in whole}
    sharing = {arg: others for arg, others in sharing.items() if others}
    if not sharing:
        return set()
    dynamo = [n for n in capture.nodes
              if (n.kernel_id, n.compile_id, n.stage) == (kernel_id, node.compile_id, "dynamo") and n.buffers]
    if not dynamo:
        return set()  # no Dynamo graph to compare with: not said
    together = {(b.arg, other) for n in dynamo for b in n.buffers or () for other in b.shares_base_with}
    return {arg for arg, others in sharing.items() if all((arg, o) not in together for o in others)}
