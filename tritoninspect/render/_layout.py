"""A layered (Sugiyama-style) layout for small directed graphs, in pure Python.

The pictures of the HTML report hold tens of nodes, so the classic four steps are enough
and run in milliseconds (docs/html-report.md compares this with Graphviz `dot`):

1. layers: longest path from the sources (edges that point back are drawn reversed);
2. long edges get one dummy point per layer they cross;
3. order within layers: barycentre sweeps down and up, keeping the order with the fewest
   crossings;
4. x: each node pulled toward the mean of its neighbours, then packed without overlap.

Input: node ids with their sizes and edges between ids (in a meaningful order: ties keep it).
Output: node centres and one polyline per edge. Deterministic; no randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Layout", "layout"]

#: Space between nodes in a layer, between layers, and around the picture (pixels).
GAP_X = 28
GAP_Y = 56
MARGIN = 16
SWEEPS = 12


@dataclass(frozen=True)
class Layout:
    #: Node id -> (centre x, centre y).
    centres: dict[str, tuple[float, float]]
    #: One polyline per input edge, in input order: from the source's bottom to the target's top.
    routes: list[list[tuple[float, float]]]
    width: float
    height: float


def layout(nodes: Sequence[tuple[str, float, float]], edges: Sequence[tuple[str, str]]) -> Layout:
    """Place `nodes` (id, width, height) top to bottom so that `edges` (src, dst) point down."""
    ids = [n for n, _, _ in nodes]
    size = {n: (w, h) for n, w, h in nodes}
    forward = _acyclic(ids, [(a, b) for a, b in edges if a in size and b in size and a != b])
    rank = _layers(ids, forward)
    chains, size = _dummies(forward, rank, size)
    layers = _order(_initial_layers(ids, rank, size), chains)
    xs = _x_positions(layers, chains, size)
    ys = _y_positions(layers, size)
    centres = {n: (xs[n], ys[n]) for n in size}
    routes = [_route(a, b, forward, chains, centres, size) for a, b in edges]
    width = max((xs[n] + size[n][0] / 2 for n in size), default=0) + MARGIN
    height = max((ys[n] + size[n][1] / 2 for n in size), default=0) + MARGIN
    return Layout({n: centres[n] for n in ids}, routes, width, height)


def _acyclic(ids: list[str], edges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Edges with each one that closes a cycle reversed (found by depth-first search in input order)."""
    out: dict[str, list[str]] = {n: [] for n in ids}
    for a, b in edges:
        out[a].append(b)
    state: dict[str, int] = {}
    back: set[tuple[str, str]] = set()
    for root in ids:
        if root in state:
            continue
        stack = [(root, iter(out[root]))]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                back.add((node, child))
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(out[child])))
    return list(dict.fromkeys((b, a) if (a, b) in back else (a, b) for a, b in edges))


def _layers(ids: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Longest path from the sources; then each source moves down to just above its first target."""
    rank = {n: 0 for n in ids}
    for _ in range(len(ids)):
        changed = False
        for a, b in edges:
            if rank[b] < rank[a] + 1:
                rank[b], changed = rank[a] + 1, True
        if not changed:
            break
    targets: dict[str, list[int]] = {}
    has_input = {b for _, b in edges}
    for a, b in edges:
        targets.setdefault(a, []).append(rank[b])
    for n in ids:
        if n not in has_input and n in targets:
            rank[n] = min(targets[n]) - 1
    return rank


def _dummies(edges: list[tuple[str, str]], rank: dict[str, int],
             size: dict[str, tuple[float, float]]) -> tuple[dict[tuple[str, str], list[str]], dict[str, tuple[float, float]]]:
    """Every edge as a chain of ids one layer apart (dummy points for long ones); sizes with the dummies."""
    chains: dict[tuple[str, str], list[str]] = {}
    size = dict(size)
    for a, b in edges:
        chain = [a]
        for layer in range(rank[a] + 1, rank[b]):
            dummy = f"\0{a}\0{b}\0{layer}"
            size[dummy] = (8.0, 0.0)
            rank[dummy] = layer
            chain.append(dummy)
        chains[(a, b)] = chain + [b]
    return chains, size


def _initial_layers(ids: list[str], rank: dict[str, int], size: dict[str, tuple[float, float]]) -> list[list[str]]:
    depth = max(rank.values(), default=0) + 1
    layers: list[list[str]] = [[] for _ in range(depth)]
    for n in list(ids) + [d for d in size if d not in set(ids)]:
        layers[rank[n]].append(n)
    return layers


def _order(layers: list[list[str]], chains: dict[tuple[str, str], list[str]]) -> list[list[str]]:
    """Barycentre sweeps; the order with the fewest crossings wins (the first one on a tie)."""
    up, down = _adjacency(chains)
    best, best_crossings = [list(layer) for layer in layers], _crossings(layers, down)
    current = [list(layer) for layer in layers]
    for sweep in range(SWEEPS):
        downward = sweep % 2 == 0
        indices = range(1, len(current)) if downward else range(len(current) - 2, -1, -1)
        for i in indices:
            fixed = current[i - 1] if downward else current[i + 1]
            links = up if downward else down
            current[i] = _by_barycentre(current[i], fixed, links)
        crossings = _crossings(current, down)
        if crossings < best_crossings:
            best, best_crossings = [list(layer) for layer in current], crossings
    return best


def _adjacency(chains: dict[tuple[str, str], list[str]]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    up: dict[str, list[str]] = {}
    down: dict[str, list[str]] = {}
    for chain in chains.values():
        for a, b in zip(chain, chain[1:]):
            down.setdefault(a, []).append(b)
            up.setdefault(b, []).append(a)
    return up, down


def _by_barycentre(layer: list[str], fixed: list[str], links: dict[str, list[str]]) -> list[str]:
    position = {n: i for i, n in enumerate(fixed)}

    def key(item: tuple[int, str]) -> tuple[float, int]:
        i, n = item
        near = [position[m] for m in links.get(n, []) if m in position]
        return (sum(near) / len(near) if near else float(i), i)

    return [n for _, n in sorted(enumerate(layer), key=key)]


def _crossings(layers: list[list[str]], down: dict[str, list[str]]) -> int:
    total = 0
    for upper, lower in zip(layers, layers[1:]):
        position = {n: i for i, n in enumerate(lower)}
        pairs = [(i, position[m]) for i, n in enumerate(upper) for m in down.get(n, []) if m in position]
        total += sum(1 for k, (a, b) in enumerate(pairs) for c, d in pairs[k + 1:] if (a - c) * (b - d) < 0)
    return total


def _x_positions(layers: list[list[str]], chains: dict[tuple[str, str], list[str]],
                 size: dict[str, tuple[float, float]]) -> dict[str, float]:
    """Pack each layer, then pull nodes toward their neighbours' mean, keeping order and gaps."""
    up, down = _adjacency(chains)
    x: dict[str, float] = {}
    for layer in layers:
        _pack(layer, {n: 0.0 for n in layer}, size, x)
    for sweep in range(8):
        order = layers if sweep % 2 == 0 else list(reversed(layers))
        for layer in order:
            wanted = {}
            for n in layer:
                near = [x[m] for m in up.get(n, []) + down.get(n, [])]
                wanted[n] = sum(near) / len(near) if near else x[n]
            _pack(layer, wanted, size, x)
    left = min((x[n] - size[n][0] / 2 for n in x), default=0)
    return {n: v - left + MARGIN for n, v in x.items()}


def _pack(layer: list[str], wanted: dict[str, float], size: dict[str, tuple[float, float]],
          x: dict[str, float]) -> None:
    """Each node as near its wanted x as the order and the gaps allow (a forward and a backward pass)."""
    if not layer:
        return
    placed = [wanted[n] for n in layer]
    for i in range(1, len(layer)):
        least = placed[i - 1] + (size[layer[i - 1]][0] + size[layer[i]][0]) / 2 + GAP_X
        placed[i] = max(placed[i], least)
    # Shift the whole run back so its overshoot is shared, not all on the right.
    shift = sum(p - wanted[n] for p, n in zip(placed, layer)) / len(layer)
    placed = [p - max(shift, 0.0) for p in placed]
    for i in range(len(layer) - 2, -1, -1):
        most = placed[i + 1] - (size[layer[i + 1]][0] + size[layer[i]][0]) / 2 - GAP_X
        placed[i] = min(placed[i], most)
    for n, p in zip(layer, placed):
        x[n] = p


def _y_positions(layers: list[list[str]], size: dict[str, tuple[float, float]]) -> dict[str, float]:
    y: dict[str, float] = {}
    top = float(MARGIN)
    for layer in layers:
        height = max((size[n][1] for n in layer), default=0.0)
        for n in layer:
            y[n] = top + height / 2
        top += height + GAP_Y
    return y


def _route(a: str, b: str, forward: list[tuple[str, str]], chains: dict[tuple[str, str], list[str]],
           centres: dict[str, tuple[float, float]], size: dict[str, tuple[float, float]]) -> list[tuple[float, float]]:
    """The edge's polyline from `a` to `b`, through its dummy points."""
    if a == b or a not in centres or b not in centres:
        return []
    reverse = (a, b) not in chains
    chain = chains.get((b, a) if reverse else (a, b))
    if chain is None:
        return []
    points = [centres[n] for n in chain]
    (x0, y0), (x1, y1) = points[0], points[-1]
    points[0] = (x0, y0 + size[chain[0]][1] / 2)
    points[-1] = (x1, y1 - size[chain[-1]][1] / 2)
    return list(reversed(points)) if reverse else points
