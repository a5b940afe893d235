"""Graphs, graph breaks and recompiles, from records only."""

from __future__ import annotations

import re

from tritoninspect.capture.records import Capture
from tritoninspect.report import Graph, GraphBreak, Recompile

#: Triton launches (GPU), C++ kernel calls (CPU), custom ops and extern kernels.
_LAUNCH_RE = re.compile(r"\.run\(|\bcpp_fused_\w+\(|\btorch\.ops\.\w+\.\w+\.\w+\(|\bextern_kernels\.\w+\(")


def analyse_graphs(capture: Capture) -> dict[str, tuple]:
    """Every captured graph and output-code module, in capture order."""
    graphs = [
        Graph(g.compile_id, g.stage, g.part, g.code, g.op_count, g.subgraphs, compile_time_s=g.compile_time_s)
        for g in capture.graphs
    ]
    for code in capture.output_code:
        graphs.append(Graph(code.compile_id, "output_code", code.part, code.code, _calls(code.code)))
    return {"graphs": tuple(graphs)}


def _calls(code: str) -> int:
    """Kernel launches and extern calls in the output code's `call()`."""
    body = code.split("def call(", 1)[-1]
    return len(_LAUNCH_RE.findall(body))


def analyse_breaks(capture: Capture) -> dict[str, tuple]:
    """Graph breaks, each once (Dynamo can log a break again on restart)."""
    seen, breaks = set(), []
    for b in capture.breaks:
        key = (b.compile_id, b.reason, b.file, b.line)
        if key not in seen:
            seen.add(key)
            breaks.append(GraphBreak(b.compile_id, b.reason, b.file, b.line, b.user_stack, b.frame_skipped))
    return {"graph_breaks": tuple(breaks)}


def analyse_recompiles(capture: Capture) -> dict[str, tuple]:
    return {"recompiles": tuple(Recompile(r.compile_id, r.reason) for r in capture.recompiles)}
