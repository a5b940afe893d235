"""CUDA graphs and epilogues: the capture's records (`graph --cudagraphs`, Inductor's epilogue fusion) as
report fields, each reason tied to the user kernel responsible, and what is worth saying about them (made
into findings by `analyse/hazards/cudagraphs.py`).

Pure: reads `Capture.cudagraphs` and `Capture.epilogues` (model/cudagraph_records.py), never torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tritoninspect.analyse.summary import short_location
from tritoninspect.model.cudagraph_records import CudagraphCompile, CudagraphRuns, CudagraphSkip, EpilogueRecord
from tritoninspect.model.records import Capture
from tritoninspect.model.report import (
    CudagraphReason,
    CudagraphUse,
    EpilogueFusion,
    EpilogueNeighbour,
)
from tritoninspect.textformats.cudagraphs import found_at, headline

#: Kinds of reason where a graph input is written: the writers of the mutated inputs are responsible.
WRITE_KINDS = ("mutated_inputs", "input_storage_mutation")
#: Reasons compile-only mode gives itself (every tensor is on the CPU there): never predicted.
DEVICE_KIND = "device"

CUDAGRAPH_RULE = "cudagraph_skipped"
EPILOGUE_RULE = "epilogue_refused"
CUDAGRAPH_CITE = ("torch/_inductor/cudagraph_utils.py (check_for_mutation, log_cudagraph_skip_and_bump_counter); "
                  "torch/_inductor/cudagraph_trees.py (CUDAGraphTreeManager: warm-up, record, replay; "
                  "_update_non_cudagraph_managed_mutation)")
EPILOGUE_CITE = ("torch/_inductor/ir.py (UserDefinedTritonKernel.can_fuse_epilogue, config "
                 "epilogue_fusion_user_defined_triton_kernel); pytorch/pytorch#173662 (user kernel epilogue fusion)")


def analyse_cudagraphs(capture: Capture) -> dict[str, Any]:
    """`Report.cudagraphs`: one `CudagraphUse` per compiled graph (none without `--cudagraphs`)."""
    records = capture.cudagraphs
    if records is None:
        return {}
    names = {kid: k.name for kid, k in capture.kernels.items()}
    uses = []
    for compiled in records.compiles:
        run_skips = [s for cid, part, s in records.run_skips if (cid, part) == (compiled.compile_id, compiled.part)]
        runs = _runs_of(compiled, records.compiles, records.runs)
        uses.append(_use(compiled, run_skips, runs, names))
    return {"cudagraphs": tuple(uses)}


def _runs_of(compiled: CudagraphCompile, compiles: Sequence[CudagraphCompile],
             runs: Sequence[CudagraphRuns]) -> CudagraphRuns | None:
    """The tree's counts for this graph; where the tree does not know compile ids (older torch), those of
    its part when this is the only graph of that part."""
    exact = next((r for r in runs if (r.compile_id, r.part) == (compiled.compile_id, compiled.part)), None)
    if exact is not None:
        return exact
    only = sum(c.part == compiled.part for c in compiles) == 1
    return next((r for r in runs if r.compile_id is None and r.part == compiled.part), None) if only else None


def _use(compiled: CudagraphCompile, run_skips: list[CudagraphSkip], runs: CudagraphRuns | None,
         names: dict[str, str]) -> CudagraphUse:
    predicted = compiled.basis == "predicted"
    skips = [s for s in (*compiled.skips, *run_skips) if not (predicted and s.kind == DEVICE_KIND)]
    reasons: list[CudagraphReason] = []
    for skip in skips:
        for reason in _reasons(skip, compiled, names):
            if reason not in reasons:
                reasons.append(reason)
    # An op kept out of CUDA graphs splits the graph; the partitions around it are still CUDA-graphed.
    blocking = [r for r in reasons if r.when != "partition"]
    if predicted or runs is None:
        taken = (compiled.wrapped or predicted) and not blocking
    else:
        taken = runs.recordings > 0
    counts: dict[str, Any] = {}
    if not predicted and runs is not None:
        counts = {"functions": runs.functions, "warmups": runs.warmups, "recordings": runs.recordings,
                  "replays": runs.replays, "eager": runs.eager}
    return CudagraphUse(compiled.compile_id, compiled.part, compiled.basis, taken, tuple(reasons),
                        dynamic=compiled.dynamic, partitioned=compiled.partitioned, partitions=compiled.partitions,
                        **counts)


def _reasons(skip: CudagraphSkip, compiled: CudagraphCompile, names: dict[str, str]) -> list[CudagraphReason]:
    """One reason per writer of a written input (the kernel responsible), else one with the message's site."""
    text = headline(skip.text)
    file, line = found_at(skip.text)
    site = skip.site or (f"{file}:{line}" if file else None)
    if skip.kernel_id:
        return [CudagraphReason(skip.when, skip.kind, text, kernel=names.get(skip.kernel_id, skip.kernel_id),
                                site=site)]
    if skip.kind in WRITE_KINDS:
        written = [m for m in compiled.mutated_inputs if not m.static]
        tied = [CudagraphReason(skip.when, skip.kind, text, kernel=names.get(w.kernel_id or "", w.kernel_id),
                                param=w.param, input=m.name, site=w.site or site, op=w.op)
                for m in written for w in m.writers]
        if tied:
            return tied
        return [CudagraphReason(skip.when, skip.kind, text, input=m.name, site=site) for m in written] or [
            CudagraphReason(skip.when, skip.kind, text, site=site)]
    return [CudagraphReason(skip.when, skip.kind, text, site=site)]


def analyse_epilogues(capture: Capture) -> dict[str, Any]:
    """`Report.epilogues`: one `EpilogueFusion` per user-kernel launch Inductor scheduled."""
    names = {kid: k.name for kid, k in capture.kernels.items()}
    compile_only = capture.meta.get("mode") == "compile-only"
    return {"epilogues": tuple(_fusion(r, names, compile_only) for r in capture.epilogues)} if capture.epilogues else {}


def _fusion(record: EpilogueRecord, names: dict[str, str], compile_only: bool) -> EpilogueFusion:
    neighbours = []
    for c in record.candidates:
        reason = c.reason
        if c.accepted is False and not reason and c.backend_refused:
            reason = f"the {c.backend_refused} backend refused it after Inductor's checks passed"
            if compile_only and c.backend_refused == "cpp":
                reason += " (compile-only mode's C++ backend never fuses into a Triton kernel: a GPU run decides)"
        neighbours.append(EpilogueNeighbour(c.node, c.ops, c.accepted, reason))
    return EpilogueFusion(record.compile_id, record.part, names.get(record.kernel_id or "", record.kernel_id),
                          record.available, record.enabled, record.blockers, tuple(neighbours))


# --- what is worth saying (analyse/hazards/cudagraphs.py makes the findings) -----------------------------

CUDAGRAPH_BASIS = ("Inductor's CUDA-graph tree replays a recorded graph on static memory; a graph that writes a "
                   "non-static input, takes CPU tensors or non-tensor inputs, or holds an op that cannot be captured "
                   "is run without a CUDA graph, and every call pays the launch overhead again.")
EPILOGUE_BASIS = ("Inductor rewrites the kernel's one store to apply the epilogue, and only when its analysis of the "
                  "kernel's accesses allows it.")
EPILOGUE_ACTION = ("For an epilogue to fuse, the kernel must write exactly one fresh tensor (torch.empty) with a "
                   "single tl.store it does not read back; split other work into a second kernel.")


def skipped_graphs(uses: Sequence[CudagraphUse]) -> list[tuple[CudagraphUse, CudagraphReason]]:
    """(graph, its first reason) per graph run (or predicted to run) without CUDA graphs; an op kept out of
    CUDA graphs by partitions does not count (the rest is CUDA-graphed)."""
    found = []
    for use in uses:
        blocking = [r for r in use.reasons if r.when != "partition"]
        if not use.cudagraphed and blocking:
            found.append((use, blocking[0]))
    return found


def skip_summary(use: CudagraphUse, first: CudagraphReason) -> str:
    culprit = (f"{first.kernel} writes its argument {first.param} in place (graph input {first.input})"
               if first.kernel else first.op and f"{first.op} writes graph input {first.input}" or first.text)
    where = f" at {site_text(first.site)}" if first.site else ""
    said = "would run" if use.basis == "predicted" else "runs"
    why = "" if culprit == first.text else f" ({first.text})"  # the reason's text is the culprit: say it once
    return (f"[{use.compile_id}] the {use.part} graph {said} without CUDA graphs under mode=\"reduce-overhead\": "
            f"{culprit}{where}{why}" + (" [predicted]" if use.basis == "predicted" else ""))


def site_text(site: str) -> str:
    """A "file:line" site as the report's other locations show it (relative to the working directory)."""
    file, _, line = site.rpartition(":")
    return short_location(file, int(line)) if file and line.isdigit() else site


def skip_action(reason: CudagraphReason) -> str:
    if reason.kind in WRITE_KINDS:
        who = reason.kernel or reason.op or "the kernel"
        # Never "write into a fresh tensor" alone: a kernel that loads the input it writes needs its values.
        return (f"Give {who} an output pointer apart from the input it writes, pass it a new tensor and return that, "
                f"instead of writing the input in place; or make the input static (a registered buffer or "
                f"parameter, or torch._dynamo.mark_static_address), which the tree lets a graph write.")
    if reason.kind == "dynamic_shapes":
        return "Pad or bucket the sizes (each distinct size records its own CUDA graph), or mark the dims static."
    if reason.kind == "non_tensor_inputs":
        return "Pass tensors (or ints Dynamo specialises) into the compiled region, not other Python objects."
    return "Move the op named in the reason out of the compiled region, or keep it out of the CUDA-graphed part."


def launch_place(fusion: EpilogueFusion) -> str:
    """`[0/0 backward]`: the compile id and the graph of it (forward, backward, inference) the launch is in:
    one compile id holds a forward and a backward graph, and a kernel launched in both is fused in each."""
    return f"[{fusion.compile_id} {fusion.part}]" if fusion.part else f"[{fusion.compile_id}]"


def refused_epilogues(fusions: Sequence[EpilogueFusion]) -> list[tuple[EpilogueFusion, str]]:
    """(launch, the sentence saying what was not fused and why) per launch with the fusion on where a
    neighbour was not fused; a refusal by compile-only mode's C++ backend is that mode's own, not said."""
    found = []
    for fusion in fusions:
        if not (fusion.available and fusion.enabled):
            continue
        refused = [n for n in fusion.neighbours if n.fused is False and "compile-only" not in n.reason]
        if fusion.blockers:
            refused = [n for n in fusion.neighbours if n.fused is not True]
        if not refused:
            continue
        why = "; ".join(fusion.blockers) or refused[0].reason or "no reason given"
        found.append((fusion, f"{launch_place(fusion)} Inductor did not fuse {', '.join(n.node for n in refused)} "
                              f"({', '.join(o for n in refused for o in n.ops) or 'ops unknown'}) into "
                              f"{fusion.kernel}: {why}"))
    return found
