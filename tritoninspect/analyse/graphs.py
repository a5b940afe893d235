"""Graphs and output-code modules, from records only."""

from __future__ import annotations

import re

from tritoninspect.model.records import Capture, extended
from tritoninspect.model.report import Graph
from tritoninspect.model.stored import stored_text
from tritoninspect.textformats.memo import TextMemo

#: Triton launches (GPU), C++ kernel calls (CPU), custom ops and extern kernels.
_LAUNCH_RE = re.compile(r"\.run\(|\bcpp_fused_\w+\(|\btorch\.ops\.\w+\.\w+\.\w+\(|\bextern_kernels\.\w+\(")


def analyse_graphs(capture: Capture) -> dict[str, tuple]:
    """Every captured graph and output-code module, in capture order."""
    # A record made as a `Graph` already (a trace's: analyse/trace.py) is its own row: records never change.
    graphs = [g if type(g) is Graph else extended(g, Graph) for g in capture.graphs]
    for code in capture.output_code:
        graphs.append(Graph(code.compile_id, "output_code", code.part, stored_text(code), CALL_COUNTS(code.code)))
    return {"graphs": tuple(graphs)}


def _calls(code: str) -> int:
    """Kernel launches and extern calls in the output code's `call()`."""
    body = code.split("def call(", 1)[-1]
    return len(_LAUNCH_RE.findall(body))


#: Each distinct module's count, made once per process (the ranks of a job share modules: textformats/memo.py).
CALL_COUNTS = TextMemo(_calls, devices=True)
