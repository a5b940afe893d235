"""Finding 3: one storage reaching two or more pointer parameters of a kernel that writes one of them.

In eager Triton the kernel sees one piece of memory through both parameters. Functionalization
clones each argument it finds written on its own (`tensors_to_clone`), and Inductor's re-inplacing
removes a clone only when nothing else reads the tensor: when a clone stays, the parameters get
separate buffers and writes through one are not seen through the other (pytorch/pytorch#196657).
Read from the AOT node's tensors (what eager passed), the final graph's clones and the compiled
launch's arguments; not when Dynamo's graph has them apart (the compile merged two equal allocations,
and the clone restores what eager does). The reverse, separate tensors that Inductor passes as views of one allocation,
is a note.
"""

from __future__ import annotations

from tritoninspect.analyse.hazards._common import (
    Launch,
    apart_in_dynamo,
    fell_back,
    joined,
    launch_text,
    launches,
    torch_evidence,
    torch_version,
)
from tritoninspect.model.records import Capture, KernelRecord
from tritoninspect.model.report import Evidence, Finding

RULE = "aliased_args_split"
MERGED_RULE = "separate_args_merged"

BASIS = ("Functionalization turns the launch into triton_kernel_wrapper_functional and clones every argument mutation "
         "analysis finds written, each on its own; re-inplacing removes a clone only when nothing reads the tensor "
         "afterwards, and the launch itself reads it through the other parameter. The kernel then gets separate "
         "buffers where eager gave it one.")
CITE = ("torch/_higher_order_ops/triton_kernel_wrap.py (triton_kernel_wrapper_functional, tensors_to_clone); "
        "torch/_inductor/fx_passes/reinplace.py (can_inplace); pytorch/pytorch#198031; pytorch/pytorch#196657 "
        "(open), fix proposed in pytorch/pytorch#197225")
VERSIONS = "seen on torch 2.13 (CPU: compiled 2.5 where eager gives 4.0); torch 2.11: see the GPU test"


def aliased_args(capture: Capture) -> list[Finding]:
    findings = []
    for record in capture.kernels.values():
        split, merged = [], []
        for launch in launches(capture, record):
            found = _split(launch)
            # One tensor only after the compile merged two equal allocations: torch's clone keeps them apart.
            if found is not None and not apart_in_dynamo(capture, record.id, launch.compile_id, found[1]):
                split.append(found)
            merge = _merged(launch)
            if merge is not None:
                merged.append(merge)
        for kind in ("lost", "stale", "assumed"):
            mine = [s for s in split if _kind(capture, record, s) == kind]
            if mine:
                findings.append(_split_finding(capture, record, mine, kind))
        if merged:
            findings.append(_merged_finding(capture, record, merged))
    return findings


def _kind(capture: Capture, record: KernelRecord, split: tuple) -> str:  # type: ignore[type-arg]
    """"lost": two parameters of the group are written (the analysis says so): one buffer's writes are
    dropped. "stale": one is written, the others are read: the kernel reads through them the values before
    its own writes. "assumed": mutation analysis fell back, so what the kernel writes is not known."""
    launch, _, wrote, _ = split
    if fell_back(capture, record.id, launch.compile_id):
        return "assumed"
    return "lost" if len(wrote) > 1 else "stale"


def groups(launch: Launch) -> list[tuple[str, ...]]:
    """Parameters that share one storage in what eager passed (two or more each)."""
    if launch.eager is None:
        return []
    by_storage: dict[str, list[str]] = {}
    for a in launch.eager.args:
        by_storage.setdefault(a.storage, []).append(a.param)
    return [tuple(params) for params in by_storage.values() if len(params) > 1]


def _split(launch: Launch) -> tuple[Launch, tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
    """(launch, group, written, cloned) for a group torch split apart; None otherwise."""
    writes = set(launch.node.tensors_to_clone or ())
    cloned = set((launch.final.inductor_clones or {}) if launch.final is not None else ())
    for group in groups(launch):
        wrote = tuple(p for p in group if p in writes)
        apart = tuple(p for p in group if p in cloned)
        if wrote and apart:
            return launch, group, wrote, apart
    return None


def _split_finding(capture: Capture, record: KernelRecord, split: list, kind: str) -> Finding:  # type: ignore[type-arg]
    launch, group, wrote, apart = split[0]
    evidence = []
    for lau, grp, wr, ap in split:
        where = dict(compile_id=lau.compile_id, node=lau.node.node)
        evidence += [
            Evidence("graph node", f"{launch_text(lau)}: {joined(grp)} are one tensor in what eager passes "
                     f"(one storage); tensors_to_clone {list(lau.node.tensors_to_clone or ())}",
                     stage=lau.node.stage, **where),
            Evidence("graph node", f"the final graph clones {joined(ap)} before the launch (a buffer of "
                     f"{'its' if len(ap) == 1 else 'their'} own)", stage="post_grad_final",
                     compile_id=lau.compile_id, node=lau.final.node if lau.final else None),
        ]
        if lau.runtime is not None:
            storages = {a.param: a.storage for a in lau.runtime.args if a.param in grp}
            if len(set(storages.values())) > 1:
                evidence.append(Evidence("launch", "the compiled launch passed "
                                         + ", ".join(f"{p} in storage {s}" for p, s in storages.items()),
                                         stage="runtime", compile_id=lau.compile_id, node=lau.runtime.where))
    others = [p for p in group if p not in apart]
    seen_through = joined(others) if others else "the other parameters"
    own = "its" if len(apart) == 1 else "their"
    head = f"{record.name} gets one tensor as {joined(group)}"
    tail = f"({len(split)} of the kernel's launches)"
    if kind == "lost":
        summary = (f"{head} and writes {joined(wrote)}; compiled, torch clones {joined(apart)} on {own} own, so what "
                   f"the kernel writes through {joined(apart)} is not seen through {seen_through}, and one buffer's "
                   f"writes are dropped {tail}.")
    elif kind == "stale":
        summary = (f"{head} and writes {joined(wrote)}; compiled, torch clones {joined(apart)} on {own} own, so the "
                   f"kernel reads through {seen_through} the values from before its writes: the result differs "
                   f"wherever it reads what it wrote {tail}.")
    else:
        summary = (f"{head}; mutation analysis fell back, so torch assumed every argument written and cloned "
                   f"{joined(apart)} on {own} own: the result differs if the kernel reads through {seen_through} "
                   f"what it writes through {joined(apart)} {tail}.")
    return Finding(
        rule=RULE, severity="error" if kind == "lost" else "warning", kernel=record.name, summary=summary,
        action=("Give the kernel one pointer parameter for that tensor (compute the other addresses from it), or launch "
                "it outside the compiled region (torch.compiler.disable)."),
        evidence=(*evidence, Evidence("kernel source", f"{record.name} is defined here", file=record.file,
                                      line=record.line), torch_evidence(capture)),
        basis=BASIS, cite=CITE, versions=VERSIONS, torch=torch_version(capture),
        compile_ids=tuple(dict.fromkeys(s[0].compile_id for s in split)),
    )


def _merged(launch: Launch) -> tuple[Launch, tuple[str, ...]] | None:
    """Parameters separate in eager that the compiled launch passes in one storage."""
    if launch.eager is None or launch.runtime is None:
        return None
    eager = {a.param: a.storage for a in launch.eager.args}
    runtime: dict[str, list[str]] = {}
    for a in launch.runtime.args:
        runtime.setdefault(a.storage, []).append(a.param)
    for params in runtime.values():
        if len({eager.get(p) for p in params}) > 1:
            return launch, tuple(params)
    return None


def _merged_finding(capture: Capture, record: KernelRecord, merged: list) -> Finding:  # type: ignore[type-arg]
    launch, params = merged[0]
    return Finding(
        rule=MERGED_RULE, severity="note", kernel=record.name,
        summary=(f"{record.name}'s {joined(params)}, separate tensors in eager, are parts of one allocation in the "
                 f"compiled launch ({launch_text(launch)}, {launch.compile_id}): Inductor planned them into one buffer."),
        action="",
        evidence=(Evidence("launch", "the compiled launch passed " + ", ".join(
            f"{a.param} in storage {a.storage} (offset {a.offset})" for a in launch.runtime.args if a.param in params),
            stage="runtime", compile_id=launch.compile_id, node=launch.runtime.where), torch_evidence(capture)),
        basis="Inductor may allocate several buffers as views of one allocation (memory planning, or one "
              "full_default for equal constants); each keeps its own elements.",
        cite="torch/_inductor/codegen/memory_planning.py; torch/_inductor/fx_passes/joint_graph.py (constant folding)",
        torch=torch_version(capture), compile_ids=tuple(dict.fromkeys(m[0].compile_id for m in merged)),
    )
