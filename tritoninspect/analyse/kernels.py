"""Where each user kernel went: entry kinds and occurrences, from records only."""

from __future__ import annotations

from collections.abc import Iterable

from tritoninspect.analyse.eager_causes import eager_cause
from tritoninspect.analyse.indexes import codes_of_compile, nodes_of_kernel
from tritoninspect.analyse.libraries import library_name
from tritoninspect.model.records import Capture, KernelRecord, LaunchRecord, NodeRecord, OutputKernel, extended
from tritoninspect.model.report import Entry, Kernel, MutationFallback, Occurrence, OpaqueOp

_ENTRY_ORDER = [e.value for e in Entry]
_GRAPH_STAGES = ("aot_forward", "aot_backward", "aot_inference", "post_grad")


def analyse_kernels(capture: Capture) -> dict[str, tuple]:
    """One `Kernel` per distinct user kernel, with every occurrence."""
    seen_inside = _triton_op_kernels_seen(capture)
    kernels = tuple(_kernel(capture, record, seen_inside) for record in capture.kernels.values())
    return {"kernels": tuple(sorted(kernels, key=lambda k: (k.file or "", k.line or 0, k.name)))}


def analyse_opaque_ops(capture: Capture) -> dict[str, tuple]:
    """Custom ops Inductor calls as black boxes, with the kernels seen inside."""
    ops = []
    for node in capture.nodes:
        if node.form == "op" and not node.is_triton_op:
            inside = sorted({_kernel_name(capture, la.kernel_id) for la in capture.launches
                             if la.custom_op == node.op and la.kernel_id})
            file, line = capture.op_sources.get(node.op or "", (None, None))
            ops.append(OpaqueOp(node.compile_id, node.stage, node.op or "", node.node, tuple(inside), file, line,
                                library_name(capture, file)))
    return {"opaque_ops": tuple(ops)}


def analyse_unattributed_fallbacks(capture: Capture) -> dict[str, tuple]:
    """Mutation-analysis fallbacks whose kernel could not be identified."""
    seen = {(f.compile_id, f.cause) for f in capture.fallbacks if f.kernel_id is None}
    return {"mutation_fallbacks_unattributed": tuple(MutationFallback(c, cause) for c, cause in sorted(seen))}


def _triton_op_kernels_seen(capture: Capture) -> dict[tuple[str, str | None], set[str]]:
    """(triton_op, compile id) -> the kernels seen inside it: in the HOP nodes it was decomposed
    into, or launching inside it at run time.

    For a triton_op call node torch's source scan named no kernel for: torch 2.13's
    `get_triton_kernels_for_op` finds `wrap_triton(k)` but not `torch.library.wrap_triton(k)`.
    """
    seen: dict[tuple[str, str | None], set[str]] = {}
    for node in capture.nodes:
        if node.form != "op" and node.op and node.kernel_id:
            seen.setdefault((node.op, node.compile_id), set()).add(node.kernel_id)
    for launch in capture.launches:
        if launch.custom_op and launch.kernel_id:
            seen.setdefault((launch.custom_op, launch.compile_id), set()).add(launch.kernel_id)
    return seen


def _of_kernel(node: NodeRecord, record: KernelRecord, seen_inside: dict[tuple[str, str | None], set[str]]) -> bool:
    if node.kernel_id is not None:
        return node.kernel_id == record.id
    # A triton_op call whose kernels torch's scan missed: those seen inside it in that compile.
    return node.form == "op" and node.is_triton_op and record.id in seen_inside.get((node.op or "", node.compile_id), ())


def _kernel(capture: Capture, record: KernelRecord, seen_inside: dict[tuple[str, str | None], set[str]]) -> Kernel:
    occurrences = [
        *(_node_occurrence(capture, record, n) for n in capture.nodes if _of_kernel(n, record, seen_inside)),
        *_output_occurrences(capture, record),
        *(_launch_occurrence(capture, record, la) for la in _launches_of(capture, record)),
    ]
    entries = sorted({o.entry for o in occurrences}, key=_ENTRY_ORDER.index)
    return extended(record, Kernel, entries=tuple(entries), occurrences=tuple(occurrences),
                    missing_from_output_code=_missing(capture, record), library=library_name(capture, record.file))


def _node_entry(node: NodeRecord) -> str:
    return Entry.TRITON_OP.value if node.is_triton_op else Entry.HOP.value


def _node_occurrence(capture: Capture, record: KernelRecord, node: NodeRecord) -> Occurrence:
    found = _output_kernel(capture, record, node.compile_id, node.part)
    if isinstance(found, OutputKernel):
        found = _definition_of(capture, record, node, found)
    return Occurrence(
        compile_id=node.compile_id, stage=node.stage, entry=_node_entry(node), node=node.node,
        custom_op=node.op if node.is_triton_op else None, grid=node.grid, constexprs=node.constexprs,
        scalars=node.scalars, part=node.part or None,
        tensors_to_clone=node.tensors_to_clone,
        mutation_analysis_fallback=_fallback(capture, record, node.compile_id),
        in_output_code=None if found is None else bool(found and found.launched),
        inductor_name=found.inductor_name if found else None,
        subgraph=node.subgraph,
        placement="recompute" if node.recompute else (node.part or None),
    )


def _output_kernel(capture: Capture, record: KernelRecord, cid: str, part: str) -> OutputKernel | bool | None:
    """The kernel's definition in the output code of `cid` (and `part` when
    set); False when that output code exists without it; None when none exists."""
    codes = [o for o in codes_of_compile(capture, cid) if not part or o.part == part]
    if not codes:
        return None
    for code in codes:
        for kernel in code.user_kernels:
            if _same_kernel(record, kernel) and kernel.launched:
                return kernel
    return False


def _definition_of(capture: Capture, record: KernelRecord, node: NodeRecord, first: OutputKernel) -> OutputKernel | None:
    """Which of the kernel's definitions in the node's output code its launch became. Inductor defines a
    user kernel once per launch (add_kernel_0, add_kernel_1): the n-th node of the kernel in its graph is
    the n-th of their launches in the code (Inductor keeps their order, as fusion.py's `_final_node` has
    it), counted within one function of the code: `call()` for the graph's own nodes, a sub-graph's
    function (`true_graph_0`) for its nodes; a Dynamo sub-graph (`cond_true_0`) is named unlike its
    function, so its nodes are counted over every sub-graph function. None when the counts differ."""
    codes = [o for o in codes_of_compile(capture, node.compile_id) if not node.part or o.part == node.part]
    defined = {k.inductor_name: k for code in codes for k in code.user_kernels if _same_kernel(record, k) and k.launched}
    if len(defined) < 2:
        return first
    launches = [(c.name, c.function) for code in codes for c in code.calls if c.kind == "user" and c.name in defined]
    where = node.subgraph or "call"
    exact = where in {function for _, function in launches}
    mine = [name for name, function in launches if (function == where if exact else function != "call")]
    peers = [n for n in nodes_of_kernel(capture, record.id, node.compile_id)
             if (n.stage, n.part, n.form) == (node.stage, node.part, node.form)
             and ((n.subgraph or "call") == where if exact else bool(n.subgraph))]
    k = next((i for i, n in enumerate(peers) if n is node), None)
    return defined[mine[k]] if k is not None and len(peers) == len(mine) else None


def _same_kernel(record: KernelRecord, kernel: OutputKernel) -> bool:
    return (record.file, record.line) == (kernel.file, kernel.line) and record.name == kernel.name


def _output_occurrences(capture: Capture, record: KernelRecord) -> Iterable[Occurrence]:
    for code in capture.output_code:
        for kernel in code.user_kernels:
            if _same_kernel(record, kernel):
                nodes = nodes_of_kernel(capture, record.id, code.compile_id)
                entry = _node_entry(nodes[-1]) if nodes else Entry.HOP.value
                yield Occurrence(
                    compile_id=code.compile_id, stage="output_code", entry=entry,
                    custom_op=nodes[-1].op if nodes and nodes[-1].is_triton_op else None,
                    in_output_code=kernel.launched, inductor_name=kernel.inductor_name, part=code.part,
                    placement=code.part or None,
                )


def _launches_of(capture: Capture, record: KernelRecord) -> list[LaunchRecord]:
    mine = []
    for launch in capture.launches:
        if launch.kernel_id == record.id:
            mine.append(launch)
        elif launch.via == "inductor" and _inductor_launch_is(capture, launch, record):
            mine.append(launch)
    return mine


def _inductor_launch_is(capture: Capture, launch: LaunchRecord, record: KernelRecord) -> bool:
    for code in capture.output_code:
        if launch.compile_id is not None and code.compile_id != launch.compile_id:
            continue
        if any(k.inductor_name == launch.inductor_name and _same_kernel(record, k) for k in code.user_kernels):
            return True
    return False


def _launch_occurrence(capture: Capture, record: KernelRecord, launch: LaunchRecord) -> Occurrence:
    return Occurrence(
        compile_id=launch.compile_id, stage="runtime", entry=_launch_entry(capture, record, launch),
        custom_op=launch.custom_op, launches=launch.count, inductor_name=launch.inductor_name,
        part=launch.part, placement=launch.part, function=launch.function, line=launch.line,
        inside_forward=launch.inside_forward, **eager_cause(capture, launch),
    )


def _launch_entry(capture: Capture, record: KernelRecord, launch: LaunchRecord) -> str:
    if not launch.in_graph:
        return Entry.EAGER.value
    if launch.custom_op and not _is_triton_op(capture, launch.custom_op):
        return Entry.CUSTOM_OP.value
    nodes = [n for n in capture.nodes if n.kernel_id == record.id and n.compile_id == launch.compile_id]
    if launch.custom_op or any(n.is_triton_op for n in nodes):
        return Entry.TRITON_OP.value
    return Entry.HOP.value


def _is_triton_op(capture: Capture, op: str) -> bool:
    return any(n.op == op and n.is_triton_op for n in capture.nodes)


def _fallback(capture: Capture, record: KernelRecord, cid: str) -> str | None:
    causes = sorted({f.cause for f in capture.fallbacks if f.kernel_id == record.id and f.compile_id == cid})
    return "; ".join(causes) if causes else None


def _missing(capture: Capture, record: KernelRecord) -> tuple[str, ...]:
    missing = []
    for node in capture.nodes:
        if node.kernel_id != record.id or node.stage not in _GRAPH_STAGES:
            continue
        if _output_kernel(capture, record, node.compile_id, node.part) is False and node.compile_id not in missing:
            missing.append(node.compile_id)
    return tuple(missing)


def _kernel_name(capture: Capture, kernel_id: str | None) -> str:
    record = capture.kernels.get(kernel_id or "")
    return record.name if record else str(kernel_id)
