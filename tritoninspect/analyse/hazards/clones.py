"""Finding 5: what functionalization's clones and torch's mutation analysis cost, per kernel and compile.

Bytes copied per call are what the final graph still clones for the kernel's launches of one compile
(re-inplacing done): a call runs one compile's code, so compiles are never summed. The reason each
clone stays is read from the functional graph before re-inplacing (`hazards.clone_causes`): mutation
analysis fell back, a graph input the kernel writes, a view, a value read after the launch, the same
tensor passed twice. The time is every run of torch's mutation analysis for the kernel in that
compile (`hazards.analysis_times`; pytorch/pytorch#193227 puts it near 90 ms a model).
"""

from __future__ import annotations

from collections.abc import Iterable

from tritoninspect.analyse.hazards._common import (
    Launch,
    apart_in_dynamo,
    fallback_line,
    joined,
    launch_text,
    launches,
    size_text,
    torch_evidence,
    torch_version,
)
from tritoninspect.model.hazard_records import CloneCause, KernelSource
from tritoninspect.model.records import Capture, KernelRecord
from tritoninspect.textformats.kernel_access import pointer_uses
from tritoninspect.model.report import Evidence, Finding

RULE = "clone_cost"

BASIS = ("Functionalization clones every argument mutation analysis finds written (all of them when it fails); "
         "Inductor's re-inplacing removes a clone only for a tensor that is not a view of a graph input, is not read "
         "after the launch, and (for a graph input) is copied back. Mutation analysis generates and walks the "
         "kernel's TTIR each time it is asked, several times per launch.")
CITE = ("torch/_higher_order_ops/triton_kernel_wrap.py (identify_accessed_tensors, tensors_to_clone); "
        "torch/_inductor/fx_passes/reinplace.py (can_inplace); pytorch/pytorch#193227 (analyse once at trace time, "
        "open at last reading)")
VERSIONS = "torch 2.11-2.14 (the clones); the analysis runs per call site until pytorch/pytorch#193227 lands"


def clone_cost(capture: Capture) -> list[Finding]:
    """One finding per kernel and compile that reached AOTAutograd."""
    findings = []
    for record in capture.kernels.values():
        by_compile: dict[str, list[Launch]] = {}
        for launch in launches(capture, record):
            by_compile.setdefault(launch.compile_id, []).append(launch)
        for cid, mine in by_compile.items():
            findings.append(_finding(capture, record, cid, mine))
    return findings


def _finding(capture: Capture, record: KernelRecord, cid: str, mine: list[Launch]) -> Finding:
    fell_back = [f for f in capture.fallbacks if f.kernel_id == record.id and f.compile_id == cid]
    copies: list[tuple[Launch, str, int | None, str]] = []
    kinds: list[str] = []
    for launch in mine:
        for param, size in ((launch.final.inductor_clones or {}) if launch.final is not None else {}).items():
            why, words = _reason(capture, launch, param, bool(fell_back))
            kinds += why
            copies.append((launch, param, size, words))
    total = sum(size or 0 for *_, size, _ in copies) if copies else 0
    unknown = any(size is None for *_, size, _ in copies)
    times = [t for t in capture.hazards.analysis_times if t.kernel_id == record.id and t.compile_id == cid]
    seconds = sum(t.seconds for t in times)
    evidence = [Evidence("graph node", f"{launch_text(lau)} ({lau.part}): clones {param} "
                         f"({size_text(size) if size is not None else 'symbolic size'}) because {reason}",
                         compile_id=cid, stage="post_grad_final", node=lau.final.node if lau.final else None,
                         param=param) for lau, param, size, reason in copies]
    source = capture.hazards.kernel_sources.get(record.id)
    for f in fell_back[:1]:
        evidence.append(Evidence("kernel source", f"mutation analysis fell back: {f.cause}", compile_id=cid,
                                 file=f.file or record.file, line=fallback_line(f, source)))
    if times:
        evidence.append(Evidence("torch", f"mutation analysis ran {len(times)} times for {record.name} in {cid}"
                                 + (f" ({sum(t.fell_back for t in times)} fell back)"
                                    if any(t.fell_back for t in times) else ""),
                                 compile_id=cid, seconds=round(seconds, 6)))
    evidence.append(torch_evidence(capture))
    # The time stays in the evidence's `seconds`: a report's text is the same from run to run.
    analysis = f"; mutation analysis ran {len(times)} times" if times else ""
    if copies:
        params = joined(dict.fromkeys(p for _, p, _, _ in copies))
        # Copies whose sizes are all symbolic have no byte count: "0 B and more" said nothing.
        size = (f"{size_text(total)}{' and more (symbolic sizes)' if unknown else ''} of copies" if total or not unknown
                else "copies of symbolic size")
        why = ", ".join(KINDS[k] for k in dict.fromkeys(kinds))
        summary = f"{record.name} costs {size} per call in {cid} ({params}: {why}){analysis}."
        severity, action = "warning", _action(kinds, _reads_any(source, (p for _, p, _, _ in copies)))
    else:
        summary = f"{record.name} costs no copies in {cid} (every clone re-inplaced or none needed){analysis}."
        severity, action = "note", ""
    return Finding(
        rule=RULE, severity=severity, kernel=record.name, summary=summary, action=action,  # type: ignore[arg-type]
        evidence=tuple(evidence), basis=BASIS, cite=CITE, versions=VERSIONS, torch=torch_version(capture),
        compile_ids=(cid,),
    )


def _cause(capture: Capture, launch: Launch, param: str) -> CloneCause | None:
    """The cause facts of the functional node this launch's final node came from (the same order)."""
    causes = [c for c in capture.hazards.clone_causes if c.compile_id == launch.compile_id and c.part == launch.part
              and c.kernel_id == launch.node.kernel_id]
    nodes = list(dict.fromkeys(c.node for c in causes))
    if launch.index - 1 >= len(nodes):
        return None
    node = nodes[launch.index - 1] if launch.node.node not in nodes else launch.node.node
    return next((c for c in causes if c.node == node and c.param == param), None)


#: Why a clone stays, short (for the summary), by cause.
KINDS = {
    "fallback": "mutation analysis fell back",
    "alias": "the same tensor passed twice",
    "merged": "two equal allocations merged by the compile",
    "view_of_input": "a view of a graph input",
    "input": "a graph input the kernel writes",
    "view": "a view",
    "view_of_new": "a view of a new tensor, written back into it",
    "read_after": "read after the launch",
    "unknown": "re-inplacing kept it",
}
ACTIONS = {
    "fallback": "Remove what mutation analysis cannot read from the kernel (the line is in the evidence): torch then "
                "clones only what the kernel writes.",
    "alias": "Give the kernel one pointer parameter for a tensor it gets twice: torch clones each written parameter on "
             "its own.",
    "merged": "Nothing to fix for correctness: your code passes separate tensors and the copy keeps them apart, as eager "
              "does. The copy goes if the two allocations differ: torch.empty (never merged) for one the kernel "
              "writes in full.",
    "view_of_input": "Write into a fresh tensor (torch.empty: the kernel only writes it) and copy it into the input's slice after the "
                     "launch: torch never re-inplaces a view of an input.",
    "view": "Pass the kernel the whole tensor and an offset argument instead of a view: the copy of a view spans its "
            "storage from the start.",
    "view_of_new": "Allocate the tensor in the layout the kernel writes, torch.empty_strided(size, stride), instead of "
                   "a view (.as_strided(...)) of a new tensor: functionalization writes the kernel's result back into "
                   "the new tensor through the view (an *_scatter after the launch), a use that keeps the copy.",
    "read_after": "Write into a fresh tensor (torch.empty: the kernel only writes it) instead of one that is "
                  "read after the launch: "
                  "re-inplacing then drops the copy.",
    "input": "Write into a fresh tensor (torch.empty: the kernel only writes it) instead of the input, or return the written input so the "
             "copy back is the only copy.",
    "unknown": "Write into a fresh tensor (torch.empty: the kernel only writes it) that nothing else reads: re-inplacing then drops the copy.",
}
#: The same, for a kernel that also loads (or atomically updates) a parameter torch copies: it needs that tensor's
#: old values, so handing it a fresh tensor in that parameter's place would feed it garbage. It needs an output
#: parameter of its own, apart from the input it reads.
_APART = "Give the kernel an output pointer apart from the one it reads (it needs the old values), "
ACTIONS_READ = {
    **ACTIONS,
    "view_of_input": _APART + "pass it a new tensor, and copy that into the input's slice after the launch: torch "
                              "never re-inplaces a view of an input.",
    "view_of_new": "Allocate the tensor in the layout the kernel writes, torch.empty_strided(size, stride), and fill "
                   "it as now (the kernel reads it: e.g. .zero_()), instead of a view (.as_strided(...)) of a new "
                   "tensor: functionalization writes the kernel's result back into the new tensor through the view "
                   "(an *_scatter after the launch), a use that keeps the copy.",
    "read_after": _APART + "and pass it a new tensor, so the tensor read after the launch is never written: "
                           "re-inplacing then drops the copy.",
    "input": _APART + "and pass it a new tensor instead of the input, or return the written input so the copy back "
                      "is the only copy.",
    "unknown": _APART + "and pass it a new tensor that nothing else reads: re-inplacing then drops the copy.",
}

#: (rule, action) -> the rules whose finding, on the same kernel, gives an action that removes these copies too:
#: one pointer for a tensor passed twice (aliased_args_split), the whole tensor and an offset for a view
#: (view_clone_overread), an output of its own for a written input (cudagraph_skipped). Read by the advice bridge.
SUBSUMED_BY: dict[tuple[str, str], tuple[str, ...]] = {
    (RULE, ACTIONS["alias"]): ("aliased_args_split",),
    (RULE, ACTIONS["view"]): ("view_clone_overread",),
    (RULE, ACTIONS["input"]): ("cudagraph_skipped",),
    (RULE, ACTIONS_READ["input"]): ("cudagraph_skipped",),
}


def _reason(capture: Capture, launch: Launch, param: str, fell_back: bool) -> tuple[tuple[str, ...], str]:
    """(cause kinds, the reason in words) a clone of `param` stays for this launch."""
    cause = _cause(capture, launch, param)
    kinds, words = [], []
    if fell_back and param in (launch.node.tensors_to_clone or ()):
        kinds.append("fallback")
        words.append("mutation analysis fell back (torch assumed every input is written)")
    if cause is not None:
        if cause.same_tensor_as and apart_in_dynamo(capture, launch.node.kernel_id or "", launch.compile_id,
                                                    (param, *cause.same_tensor_as)):
            kinds.append("merged")
            words.append(f"the compile merged it with the equal allocation passed as {joined(cause.same_tensor_as)} "
                         "(separate tensors in your code: AOTAutograd's common-subexpression elimination)")
        elif cause.same_tensor_as:
            kinds.append("alias")
            words.append(f"the same tensor is also passed as {joined(cause.same_tensor_as)}")
        if cause.view_of_input:
            kinds.append("view_of_input")
            words.append("it is a view of a graph input (never re-inplaced)")
        elif cause.graph_input:
            kinds.append("input")
            words.append("it is a graph input the kernel writes (input mutation)")
        elif cause.view:
            kinds.append("view")
            words.append("it is a view (the copy spans its storage up to the view's end)")
        if cause.read_after and _view_of_new(launch, param):
            kinds.append("view_of_new")
            words.append(f"it is a view of a tensor made in the graph, which functionalization writes the kernel's result "
                         f"back into (by {joined(cause.read_after[:3])}): re-inplacing counts that as a later use")
        elif cause.read_after:
            kinds.append("read_after")
            words.append(f"its old value is read after the launch (by {joined(cause.read_after[:3])})")
    if not kinds:
        kinds.append("unknown")
        words.append("re-inplacing kept it" + (" (no cause recorded)" if cause is None else ""))
    return tuple(kinds), "; ".join(words)


def _view_of_new(launch: Launch, param: str) -> bool:
    """The argument is a view of a tensor allocated in the graph (torch.empty/zeros...), written back into it
    through the view and read by nothing else after the launch (`BufferRecord`, the functional node's): the
    later "reads" torch sees are functionalization's own write-back (`as_strided_scatter`), as for torchao
    0.18's `x.new_empty(...).as_strided(...)` scales. An allocation with its strides (torch.empty_strided) is no
    view, and re-inplacing drops its copy (checked on torch 2.13)."""
    buf = next((b for b in launch.node.buffers or () if b.arg == param), None)
    return buf is not None and buf.made_by == "alloc" and buf.view and buf.written_back and not buf.read_after


def _action(kinds: list[str], reads: bool) -> str:
    """The action for the first cause in order; `reads`: the kernel loads a parameter torch copies."""
    actions = ACTIONS_READ if reads else ACTIONS
    for kind in ("fallback", "alias", "merged", "view_of_input", "view", "view_of_new", "read_after", "input", "unknown"):
        if kind in kinds:
            return actions[kind]
    return actions["unknown"]


def _reads_any(source: KernelSource | None, params: Iterable[str]) -> bool:
    """The kernel loads or atomically updates one of `params` (its own source says so). Unknown (no source): yes,
    the careful answer."""
    if source is None:
        return True
    uses = pointer_uses(source.source)
    return not uses or any({"load", "atomic"} & set(uses.get(p, ("load",))) for p in params)
