"""How the HTML report's pictures are laid out: our pure-Python layered layout against Graphviz `dot`.

    python benchmarks/bench_html_layout.py [REPORT.json ...] [--dot PATH ...]

For every picture of every kernel in the reports (default: tests/fixtures/gpu/*.json), plus
synthetic layered graphs of 20 and 40 nodes (the picture's node cap, `analyse/pictures.MAX_NODES`),
it lays the picture out with `render/_layout.py` and with each `dot` given (Debian's
`/usr/bin/dot` by default when present; a wheel's binary, e.g. graphviz-pure's, by path) and
prints per engine: total time, the slowest picture, edge crossings, edges pointing up, and the
drawing's area. docs/html-report.md records a run and the choice it led to.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tritoninspect.analyse.pictures import PEdge, Picture, PNode, kernel_pictures  # noqa: E402
from tritoninspect.render._layout import layout  # noqa: E402
from tritoninspect.render._svg import _clip, _size  # noqa: E402
from tritoninspect.model.report import read_report  # noqa: E402

Segment = tuple[tuple[float, float], tuple[float, float]]


def pictures(paths: list[Path]) -> list[Picture]:
    found = []
    for path in paths:
        report = read_report(path)
        found += [p for k in report.kernels for p in kernel_pictures(report, k)]
    return found + [synthetic(20, 30, 1), synthetic(40, 64, 2)]


def synthetic(nodes: int, edges: int, seed: int) -> Picture:
    """A layered DAG like a big neighbourhood: edges go from earlier to later nodes, mostly nearby."""
    rng = random.Random(seed)
    ids = [f"n{i}" for i in range(nodes)]
    pairs = set()
    while len(pairs) < edges:
        a = rng.randrange(nodes - 1)
        pairs.add((a, min(nodes - 1, a + 1 + int(rng.expovariate(0.4)))))
    pnodes = tuple(PNode(i, f"aten.op_{i}", "op", "f32[64, 128]") for i in ids)
    pedges = tuple(PEdge(ids[a], ids[b]) for a, b in sorted(pairs))
    return Picture(f"synthetic{nodes}", "hop", "0/0", "post_grad_final", "", ids[nodes // 2], pnodes, pedges)


def sizes(picture: Picture) -> list[tuple[str, float, float]]:
    return [(n.id, *_size(_clip(n.label), _clip(n.sublabel))) for n in picture.nodes]


def ours(picture: Picture) -> tuple[dict[str, tuple[float, float]], list[list[tuple[float, float]]], float]:
    placed = layout(sizes(picture), [(e.src, e.dst) for e in picture.edges])
    return placed.centres, placed.routes, placed.width * placed.height


def dot(binary: str, picture: Picture) -> tuple[dict[str, tuple[float, float]], list[list[tuple[float, float]]], float]:
    """The same nodes (same sizes) through `dot -Tplain`: positions and spline control points."""
    index = {n.id: f"n{i}" for i, n in enumerate(picture.nodes)}
    lines = ["digraph G { rankdir=TB; nodesep=0.39; ranksep=0.78; node [shape=box fixedsize=true label=\"\"];"]
    lines += [f"{index[n]} [width={w / 72:.3f} height={h / 72:.3f}];" for n, w, h in sizes(picture)]
    lines += [f"{index[e.src]} -> {index[e.dst]};" for e in picture.edges]
    out = subprocess.run([binary, "-Tplain"], input="\n".join(lines + ["}"]), capture_output=True, text=True,
                         check=True).stdout
    back = {v: k for k, v in index.items()}
    centres, routes, area = {}, [], 0.0
    for row in out.splitlines():
        f = row.split()
        if f[0] == "graph":
            area = float(f[2]) * float(f[3]) * 72 * 72
        elif f[0] == "node":
            centres[back[f[1]]] = (float(f[2]) * 72, -float(f[3]) * 72)
        elif f[0] == "edge":
            n = int(f[3])
            routes.append([(float(f[4 + 2 * i]) * 72, -float(f[5 + 2 * i]) * 72) for i in range(n)])
    return centres, routes, area


def crossings(routes: list[list[tuple[float, float]]]) -> int:
    """Pairs of edges whose polylines cross (edges that share an end point are not counted there)."""
    segs = [[(a, b) for a, b in zip(r, r[1:])] for r in routes if len(r) > 1]
    count = 0
    for i in range(len(segs)):
        for j in range(i + 1, len(segs)):
            if _ends(segs[i]) & _ends(segs[j]):
                continue
            if any(_cross(s, t) for s in segs[i] for t in segs[j]):
                count += 1
    return count


def _ends(segments: list[Segment]) -> set[tuple[int, int]]:
    return {tuple(round(c) for c in segments[0][0]), tuple(round(c) for c in segments[-1][1])}  # type: ignore[misc]


def _cross(s: Segment, t: Segment) -> bool:
    def orient(p, q, r) -> float:  # type: ignore[no-untyped-def]
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    (p1, p2), (q1, q2) = s, t
    return orient(p1, p2, q1) * orient(p1, p2, q2) < 0 and orient(q1, q2, p1) * orient(q1, q2, p2) < 0


def upward(picture: Picture, centres: dict[str, tuple[float, float]]) -> int:
    return sum(1 for e in picture.edges if centres[e.src][1] >= centres[e.dst][1])


def measure(name: str, engine, items: list[Picture]) -> None:  # type: ignore[no-untyped-def]
    """One line per engine: times over all pictures; crossings on the real ones and on each synthetic one."""
    total, worst, up, area = 0.0, 0.0, 0, 0.0
    cross: list[int] = []
    for picture in items:
        start = time.perf_counter()
        centres, routes, a = engine(picture)
        took = time.perf_counter() - start
        total, worst = total + took, max(worst, took)
        cross.append(crossings(routes))
        up += upward(picture, centres)
        area += a
    print(f"{name:<22} total {total * 1000:7.1f} ms  slowest {worst * 1000:6.1f} ms  crossings: real pictures "
          f"{sum(cross[:-2]):2d}, synthetic 20/40 nodes {cross[-2]:2d}/{cross[-1]:2d}  upward edges {up}  "
          f"area {area / 1e6:5.2f} Mpx²")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("reports", nargs="*", type=Path)
    parser.add_argument("--dot", action="append", default=[], help="a dot binary to compare (repeatable)")
    args = parser.parse_args()
    paths = args.reports or sorted((REPO / "tests" / "fixtures" / "gpu").glob("*.json"))
    items = pictures(paths)
    print(f"{len(items)} pictures ({len(items) - 2} from {len(paths)} reports, 2 synthetic); "
          f"largest {max(len(p.nodes) for p in items)} nodes")
    measure("pure-Python layered", ours, items)
    binaries = args.dot or ([shutil.which("dot")] if shutil.which("dot") else [])
    for binary in binaries:
        measure(f"dot ({Path(binary).name})", lambda p, b=binary: dot(b, p), items)


if __name__ == "__main__":
    main()
