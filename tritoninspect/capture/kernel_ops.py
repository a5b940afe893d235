"""The ATen ops fused into each kernel Inductor generated, from Inductor's own records of it.

While Inductor writes a graph's code, `compat.inductor.kernel_origin_patches` hands
`KernelOps.add` each generated kernel's scheduled IR nodes and their origins (the FX
nodes each was made from, with their ATen op). When the output code is complete,
`KernelOps.take` turns them into kernel name -> ops, one tuple per call of that
kernel in the order the calls were written (a kernel whose source matches an earlier
one is defined once and called again under the same name).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: (buffer, ((FX node, ATen op), ...)) for each IR node one kernel computes.
Origins = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


class KernelOps:
    """The kernels of the graph Inductor is generating now."""

    def __init__(self) -> None:
        self._kernels: list[tuple[str, Origins]] = []

    def add(self, kernel_name: str, origins: Origins) -> None:
        self._kernels.append((kernel_name, origins))

    def take(self, extern_readers: Mapping[str, Any], positions: Mapping[str, int]) -> dict[str, list[tuple[str, ...]]]:
        """Kernel name -> its ops per call; forgets them, ready for the next graph."""
        result: dict[str, list[tuple[str, ...]]] = {}
        for name, origins in self._kernels:
            result.setdefault(name, []).append(fused_ops(origins, extern_readers, positions))
        self._kernels = []
        return result


def fused_ops(origins: Origins, extern_readers: Mapping[str, Any], positions: Mapping[str, int]) -> tuple[str, ...]:
    """The ATen ops of a kernel's origins, in graph order, each once, without the
    op of an extern kernel that reads the buffer (Inductor counts the op whose
    lowering made a buffer among its origins: an opaque op's input copy)."""
    nodes: dict[str, str] = {}
    for buffer, pairs in origins:
        readers = extern_readers.get(buffer, ())
        for node, op in pairs:
            if node not in readers:
                nodes.setdefault(node, op)
    ordered = sorted(nodes, key=lambda node: positions.get(node, len(positions)))
    return tuple(dict.fromkeys(nodes[node] for node in ordered))
