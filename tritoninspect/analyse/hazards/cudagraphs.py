"""Findings 6 and 7: CUDA graphs under mode="reduce-overhead" (`graph --cudagraphs`), each skip tied to the
kernel responsible, and epilogues Inductor did not fuse into a user kernel with the fusion on. The facts
come from `analyse/cudagraphs.py` (which also fills `Report.cudagraphs` and `Report.epilogues`); these
turn the ones worth acting on into findings (warnings: speed suffers, results do not change).
"""

from __future__ import annotations

from tritoninspect.analyse.cudagraphs import (
    CUDAGRAPH_BASIS,
    CUDAGRAPH_CITE,
    CUDAGRAPH_RULE,
    EPILOGUE_ACTION,
    EPILOGUE_BASIS,
    EPILOGUE_CITE,
    EPILOGUE_RULE,
    analyse_cudagraphs,
    analyse_epilogues,
    refused_epilogues,
    skip_action,
    skip_summary,
    skipped_graphs,
)
from tritoninspect.analyse.hazards._common import torch_version
from tritoninspect.model.records import Capture
from tritoninspect.model.report import CudagraphReason, Evidence, Finding

RULE = CUDAGRAPH_RULE
EPILOGUE = EPILOGUE_RULE
CUDAGRAPH_VERSIONS = ("every torch with CUDA-graph trees (measured on torch 2.11, H200; predicted on 2.13 in "
                      "compile-only mode)")
EPILOGUE_VERSIONS = ("torch 2.12+ (UserDefinedTritonKernel.can_fuse_epilogue, off by default); not available on "
                     "2.11; wrap_triton(..., output_tile=...) is in neither 2.13 nor 2.14.1")


def cudagraph_skips(capture: Capture) -> list[Finding]:
    """A warning per compiled graph run (or predicted to run) without CUDA graphs."""
    uses = analyse_cudagraphs(capture).get("cudagraphs", ())
    return [Finding(rule=RULE, severity="warning", kernel=first.kernel, summary=skip_summary(use, first),
                    action=skip_action(first), evidence=tuple(_evidence(use.compile_id, use.basis, r)
                                                              for r in use.reasons if r.when != "partition"),
                    basis=CUDAGRAPH_BASIS, cite=CUDAGRAPH_CITE, versions=CUDAGRAPH_VERSIONS,
                    torch=torch_version(capture), compile_ids=(use.compile_id,))
            for use, first in skipped_graphs(uses)]


def _evidence(compile_id: str, basis: str, reason: CudagraphReason) -> Evidence:
    file, _, line = (reason.site or "").rpartition(":")
    text = f"{reason.text} ({reason.kind}, {basis})"
    return Evidence("launch" if reason.kernel else "torch", text, compile_id=compile_id,
                    stage="runtime" if basis == "measured" and reason.when == "run" else "post_grad_final",
                    param=reason.param, node=reason.input, file=file or None,
                    line=int(line) if line.isdigit() else None)


def epilogues_refused(capture: Capture) -> list[Finding]:
    """A warning per user-kernel launch, with the fusion on, whose epilogue Inductor did not fuse."""
    fusions = analyse_epilogues(capture).get("epilogues", ())
    return [Finding(rule=EPILOGUE, severity="warning", kernel=fusion.kernel, summary=text, action=EPILOGUE_ACTION,
                    evidence=tuple(Evidence("lowering", f"{n.node} ({', '.join(n.ops)}): "
                                            f"{ {True: 'fused', False: 'refused', None: 'not considered'}[n.fused]}"
                                            + (f": {n.reason}" if n.reason else ""), compile_id=fusion.compile_id)
                                   for n in fusion.neighbours),
                    basis=EPILOGUE_BASIS, cite=EPILOGUE_CITE, versions=EPILOGUE_VERSIONS,
                    torch=torch_version(capture), compile_ids=(fusion.compile_id,))
            for fusion, text in refused_epilogues(fusions)]
