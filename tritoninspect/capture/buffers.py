"""Where a functional kernel node's tensor arguments come from, and who reads them after it.

Called from the recorder on each `triton_kernel_wrapper_functional` node of an AOT or post-grad
graph: the facts Inductor's re-inplacing decides on (torch/_inductor/fx_passes/reinplace.py,
`can_inplace`), as plain records: a graph input or not, written back or not, a view or not, a
fresh allocation and how it is filled, shared with another argument, read after the launch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from tritoninspect import textformats
from tritoninspect.capture import compat
from tritoninspect.capture.compat import graph_views
from tritoninspect.capture.plain import first_line
from tritoninspect.model.records import BufferRecord

#: Readers named per argument (the first ones in graph order).
MAX_READERS = 3


class ArgumentFacts:
    """One capture's facts about kernel arguments: where a functional node's tensor arguments come
    from, and how each kernel's body uses its parameters (read once per kernel from its source)."""

    def __init__(self, note_once: Callable[[str, str], None]) -> None:
        self._note_once = note_once
        #: Kernel id -> its JITFunction, and how its body uses each parameter (None: no source).
        self._jits: dict[str, Any] = {}
        self._pointer_uses: dict[str, dict[str, tuple[str, ...]] | None] = {}

    def remember(self, kid: str, jf: Any) -> None:
        """The JITFunction of kernel `kid`, read when a node of it asks for `uses`."""
        self._jits[kid] = jf

    def buffers(self, node: torch.fx.Node, args: dict[str, torch.fx.Node], cid: str) -> tuple[BufferRecord, ...] | None:
        """`buffer_records`; None, and a problem noted, when the graph has a layout this cannot read."""
        try:
            return buffer_records(node, args)
        except Exception as exc:  # noqa: BLE001 - a fact missing, not a failed capture
            self._note_once("buffers", f"[{cid}] where {node.name}'s arguments come from could not be read "
                                       f"({type(exc).__name__}: {first_line(exc)})")
            return None

    def uses(self, kid: str | None, tensors: dict[str, Any]) -> dict[str, tuple[str, ...]] | None:
        """How the kernel's body uses each tensor argument, from its source (once per kernel)."""
        if kid is None or kid not in self._jits:
            return None
        if kid not in self._pointer_uses:
            jf = self._jits[kid]
            source = compat.kernels.kernel_text(jf)
            self._pointer_uses[kid] = textformats.kernel_access.pointer_uses(
                source, lambda name: compat.kernels.called_jit_source(jf, name)) if source else None
        uses = self._pointer_uses[kid]
        return None if uses is None else {k: uses.get(k, ()) for k in tensors}


def buffer_records(node: torch.fx.Node, tensor_args: dict[str, Any]) -> tuple[BufferRecord, ...]:
    """One record per tensor argument of the HOP `node` (`tensor_args`: name -> fx.Node)."""
    chains = {name: _chain(value) for name, value in tensor_args.items()}
    order = {n: i for i, n in enumerate(node.graph.nodes)}
    records = []
    for name, (chain, view) in chains.items():
        base = chain[-1]
        made_by, fill = _made_by(base)
        readers, written_back = _after(node, name, chain, order)
        records.append(BufferRecord(
            arg=name, made_by=made_by, base=base.name, base_op=graph_views.op_name(base), view=view, fill=fill,
            shares_base_with=tuple(other for other, (c, _) in chains.items() if c[-1] is base and other != name),
            read_after=readers, written_back=written_back,
        ))
    return tuple(records)


def _chain(node: torch.fx.Node) -> tuple[list[torch.fx.Node], bool]:
    """The nodes from `node` down to the tensor it is made from: through views, and through an earlier
    kernel's result (`getitem` of a functional HOP: the same tensor, updated); and whether a view was
    crossed."""
    chain, view = [node], False
    while len(chain) < 64:
        below = graph_views.hop_result_of(node)
        if graph_views.is_view(node) and isinstance(node.args[0], torch.fx.Node):
            node, view = node.args[0], True
        elif below is not None:
            node = below
        else:
            break
        chain.append(node)
    return chain, view


def _made_by(base: torch.fx.Node) -> tuple[str, str | None]:
    if base.op in ("placeholder", "get_attr"):
        return "input", None
    allocates, fill = graph_views.allocation_fill(base) if base.op == "call_function" else (False, None)
    return ("alloc", fill) if allocates else ("computed", None)


def _aliases(base: torch.fx.Node) -> set[torch.fx.Node]:
    """`base` and every view made from it, transitively."""
    found, stack = {base}, [base]
    while stack:
        for user in stack.pop().users:
            if user not in found and graph_views.is_view(user) and user.args and user.args[0] in found:
                found.add(user)
                stack.append(user)
    return found


def _after(node: torch.fx.Node, arg: str, chain: list[torch.fx.Node],
           order: dict[torch.fx.Node, int]) -> tuple[tuple[str, ...], bool]:
    """(readers after `node` of the value its argument `arg` had before the launch, whether the graph
    writes the kernel's result back: a `copy_` into the tensor or a `*_scatter` of the result)."""
    aliases = set().union(*(_aliases(n) for n in chain))
    position = order[node]
    readers: dict[str, int] = {}
    written_back = False
    for alias in aliases:
        for user in alias.users:
            if user is node or order.get(user, -1) <= position or user in aliases:
                continue
            if graph_views.is_write_back(user, alias, node, arg):
                written_back = True
                continue
            readers["output" if user.op == "output" else user.name] = order.get(user, 0)
    in_order = sorted(readers, key=readers.__getitem__)
    return tuple(in_order[:MAX_READERS]), written_back
