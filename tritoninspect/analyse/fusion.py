"""Clones, copies and the fusion neighbourhood of each kernel, from records only.

An enricher: it runs after the analyses that build `graphs` and `kernels` and
adds to them what Inductor did around each kernel: `Occurrence.clones` (what
is cloned for the kernel, why, what re-inplacing left, what it costs),
`Occurrence.neighbourhood` (the launches around it in the output code and the
buffers they share), `Kernel.dropped_nodes` and the output-code totals on
`Graph`. Buffer flow is followed through the output code's `call()` in order:
each write makes a new value of a tensor, and a launch that reads a value is
that value's writer's consumer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tritoninspect.analyse.cloned_args import cloned_arg, merged_args
from tritoninspect.analyse.dropped import dropped_nodes
from tritoninspect.analyse.indexes import codes_of_compile, nodes_of_compile
from tritoninspect.model.records import ArgRecord, CallRecord, Capture, NodeRecord, OutputCodeRecord
from tritoninspect.model.report import (Clones, CodeCall, Entry, Graph, Kernel, Neighbour, Neighbourhood, Occurrence,
                                        SharedBuffer)
from tritoninspect.model.stored import replaced, same_text
from tritoninspect.textformats.output_code import subgraph_kind

_AOT_STAGES = ("aot_forward", "aot_backward", "aot_inference")
#: Ops whose kernel or call only copies memory.
_COPY_OPS = ("clone", "copy", "copy_")

#: A value of a tensor: ("w", writer call index, tensor) or ("init", tensor) before any write.
Version = tuple[Any, ...]


@dataclass(frozen=True)
class _Access:
    arg: ArgRecord
    read: Version | None
    writes: bool


@dataclass(frozen=True)
class _Code:
    """One output module, its calls with what each read and wrote."""

    record: OutputCodeRecord
    calls: tuple[CallRecord, ...]
    accesses: tuple[tuple[_Access, ...], ...]
    report_calls: tuple[CodeCall, ...]
    #: The graph nodes of this module's compile id and part, by kernel id (`_nodes_by_kernel`).
    nodes: dict[str | None, list[NodeRecord]]
    #: User-kernel launch index -> its final post-grad node (`_launch_nodes`).
    launch_nodes: dict[int, NodeRecord]
    #: A value -> the calls that read it, in order: who shares a buffer with a call.
    readers: dict[Version, tuple[int, ...]]


def enrich_fusion(capture: Capture, fields: dict[str, Any]) -> dict[str, Any]:
    """`graphs` with output-code launches and totals, `kernels` with clones,
    neighbourhoods and dropped nodes."""
    graphs = list(fields.get("graphs", ()))
    kernels = tuple(fields.get("kernels", ()))
    occurrences = [list(k.occurrences) for k in kernels]
    graphs_of, occurrences_of = _rows_by_compile(graphs, kernels)
    # Occurrences without a compile id read the modules of compile id None or "" (`_recomputes`), after.
    unplaced = occurrences_of.pop(None, [])
    calls_made: dict[tuple[CodeCall, ...], tuple[CodeCall, ...]] = {}
    for cid in dict.fromkeys(c.compile_id for c in capture.output_code):
        # One compile's modules at a time: their buffer flow (`_Code`, KiB a module) is read by rows of this
        # compile id only (held for a log's thousands of compiles at once, it was the peak: docs/speed.md).
        codes = {(c.compile_id, c.part): _code(capture, c) for c in codes_of_compile(capture, cid)}
        for i in graphs_of.pop(cid, ()):
            graphs[i] = _graph(graphs[i], codes, calls_made)
        for k, i in occurrences_of.pop(cid, ()):
            occurrences[k][i] = _occurrence(capture, kernels[k], occurrences[k][i], codes)
    for k, i in (place for places in occurrences_of.values() for place in places):  # no output code: none read
        occurrences[k][i] = _occurrence(capture, kernels[k], occurrences[k][i], {})
    if unplaced:
        codes = {(c.compile_id, c.part): _code(capture, c) for c in capture.output_code if c.compile_id in (None, "")}
        for k, i in unplaced:
            occurrences[k][i] = _occurrence(capture, kernels[k], occurrences[k][i], codes)
    return {"graphs": tuple(graphs),
            "kernels": tuple(_kernel(capture, k, tuple(o)) for k, o in zip(kernels, occurrences))}


def _rows_by_compile(graphs: list[Graph], kernels: tuple[Kernel, ...]
                     ) -> tuple[dict[str, list[int]], dict[str | None, list[tuple[int, int]]]]:
    """Where the output-code graphs (by index) and the kernels' occurrences (kernel, occurrence index)
    of each compile id are."""
    graphs_of: dict[str, list[int]] = {}
    for i, g in enumerate(graphs):
        if g.stage == "output_code":
            graphs_of.setdefault(g.compile_id, []).append(i)
    occurrences_of: dict[str | None, list[tuple[int, int]]] = {}
    for k, kernel in enumerate(kernels):
        for i, o in enumerate(kernel.occurrences):
            occurrences_of.setdefault(o.compile_id, []).append((k, i))
    return graphs_of, occurrences_of


# --- one output module -------------------------------------------------------


def _code(capture: Capture, record: OutputCodeRecord) -> _Code:
    nodes = _nodes_by_kernel(capture, record.compile_id, record.part)
    writes = _user_writes(capture, record, nodes)
    accesses = _simulate(record.calls, writes)
    externs = {_extern_op(c.name) for c in record.calls if c.kind == "extern"}
    launch_nodes = _launch_nodes(capture, record, nodes)
    feeders = _clone_feeders(launch_nodes, accesses)
    report_calls = tuple(
        _code_call(c, a, externs, i in feeders) for i, (c, a) in enumerate(zip(record.calls, accesses))
    )
    readers: dict[Version, list[int]] = {}
    for i, call_accesses in enumerate(accesses):
        for read in dict.fromkeys(a.read for a in call_accesses if a.read is not None):
            readers.setdefault(read, []).append(i)
    return _Code(record, record.calls, accesses, report_calls, nodes, launch_nodes,
                 {read: tuple(calls) for read, calls in readers.items()})


def _nodes_by_kernel(capture: Capture, cid: str, part: str) -> dict[str | None, list[NodeRecord]]:
    """The nodes of one compile id and part, by kernel id, in capture order: gathered once
    (scanning every node for each kernel and node made the analysis quadratic in model size)."""
    found: dict[str | None, list[NodeRecord]] = {}
    for n in nodes_of_compile(capture, cid):
        if n.part == part:
            found.setdefault(n.kernel_id, []).append(n)
    return found


def _clone_feeders(launch_nodes: dict[int, NodeRecord], accesses: tuple[tuple[_Access, ...], ...]) -> set[int]:
    """Calls that write a clone Inductor made for a user kernel: whatever their
    name says (on CPU the clone of a slice is `cpp_fused_slice_0`), they copy."""
    feeders = set()
    for i, node in launch_nodes.items():
        for a in accesses[i]:
            if a.arg.param in (node.inductor_clones or {}) and a.read is not None and a.read[0] == "w":
                feeders.add(a.read[1])
    return feeders


def _launch_nodes(capture: Capture, record: OutputCodeRecord,
                  nodes: dict[str | None, list[NodeRecord]]) -> dict[int, NodeRecord]:
    """User-kernel launch index -> its node in the final post-grad graph: the n-th launch of a
    kernel in an output-code function is its n-th node in the matching graph (`call` the graph
    itself, a sub-graph function the sub-graph of that name; Inductor keeps their order). Launches
    left over (a sub-graph Inductor inlined into `call`) take the nodes left over, in order."""
    found: dict[int, NodeRecord] = {}
    for kid in capture.kernels:
        names = {k.inductor_name for k in record.user_kernels if _kernel_id(capture, k.name, k.file, k.line) == kid}
        launches = [i for i, c in enumerate(record.calls) if c.kind == "user" and c.name in names]
        finals = [n for n in _aot_nodes(nodes.get(kid, ()), "post_grad_final") if n.form == "mutation"]
        for function in dict.fromkeys(record.calls[i].function for i in launches):
            mine = [i for i in launches if record.calls[i].function == function]
            theirs = [n for n in finals if _graph_of(n) == function]
            found.update(zip(mine, theirs))
        used = {id(n) for n in found.values()}
        found.update(zip([i for i in launches if i not in found], [n for n in finals if id(n) not in used]))
    return found


def _graph_of(node: NodeRecord) -> str:
    """The output-code function a node's launch is in: `call`, or the sub-graph's name (Inductor's too)."""
    return (node.subgraph or "").rsplit(".", 1)[-1] or "call"


def _user_writes(capture: Capture, record: OutputCodeRecord,
                 nodes_of: dict[str | None, list[NodeRecord]]) -> dict[str, set[str] | None]:
    """Inductor name -> the parameters the user kernel writes (mutation
    analysis: the AOT functional HOP's tensors_to_clone); None when unknown."""
    writes: dict[str, set[str] | None] = {}
    for kernel in record.user_kernels:
        kid = _kernel_id(capture, kernel.name, kernel.file, kernel.line)
        nodes = [n for n in _aot_nodes(nodes_of.get(kid, ())) if n.tensors_to_clone is not None]
        writes[kernel.inductor_name] = set(nodes[0].tensors_to_clone or ()) if nodes else None
    return writes


def _simulate(calls: tuple[CallRecord, ...], user_writes: dict[str, set[str] | None]) -> tuple[tuple[_Access, ...], ...]:
    """Follow every tensor's values through the calls, in order."""
    writer: dict[str, int] = {}
    result = []
    for i, call in enumerate(calls):
        accesses = tuple(_access(call, arg, writer, user_writes) for arg in call.args)
        for a in accesses:
            if a.writes:
                writer[a.arg.storage] = i
        result.append(accesses)
    return tuple(result)


def _access(call: CallRecord, arg: ArgRecord, writer: dict[str, int], user_writes: dict[str, Any]) -> _Access:
    mode = arg.access
    if call.kind == "user":
        written = user_writes.get(call.name)
        if written is None:
            mode = "rw"
        elif arg.param in written:
            # An output into fresh or reused memory is not read; an existing value is updated in place.
            mode = "w" if (arg.reuses or arg.allocated) and arg.storage not in writer else "rw"
        else:
            mode = "r"
    elif not mode:
        mode = "r"
    read = _version(arg, writer, follow_reuse=mode == "rw") if "r" in mode else None
    return _Access(arg, read, "w" in mode)


def _version(arg: ArgRecord, writer: dict[str, int], *, follow_reuse: bool) -> Version:
    tensor = arg.storage
    if tensor not in writer and follow_reuse and arg.reuses:
        # `buf3 = buf1  # reuse` then an in-place kernel on buf3: it reads buf1's values.
        tensor = arg.reuses
    return ("w", writer[tensor], tensor) if tensor in writer else ("init", tensor)


def _code_call(call: CallRecord, accesses: tuple[_Access, ...], externs: set[str], feeds_clone: bool) -> CodeCall:
    ops = _fused_ops(call, externs)
    return CodeCall(
        kind=call.kind, name=call.name, ops=ops, ops_source=call.ops_source,
        reads=tuple(dict.fromkeys(a.arg.buffer for a in accesses if a.read is not None)),
        writes=tuple(dict.fromkeys(a.arg.buffer for a in accesses if a.writes)),
        copy=feeds_clone or _is_copy(call, ops), line=call.line, function=call.function,
    )


def _fused_ops(call: CallRecord, externs: set[str]) -> tuple[str, ...]:
    """The kernel's ops. Inductor's `Original ATen` comment also lists the op whose
    lowering made the kernel's buffer (an opaque op's input copy): from a
    comment, ops this code calls as extern kernels are left out. Ops recorded
    from Inductor's IR are already without them (capture/kernel_ops.py)."""
    if call.ops_source != "comment":
        return call.ops
    return tuple(op for op in call.ops if op not in externs)


def _extern_op(name: str) -> str:
    """torch.ops.ns.op.default -> ns.op; extern_kernels.mm -> mm."""
    parts = name.split(".")
    if name.startswith("torch.ops.") and len(parts) >= 4:
        return f"{parts[2]}.{parts[3]}"
    return parts[-1]


def _is_copy(call: CallRecord, ops: tuple[str, ...]) -> bool:
    if call.kind == "inductor":
        return any(op in _COPY_OPS for op in ops)
    if call.kind == "extern":
        return _extern_op(call.name).split(".")[-1] in _COPY_OPS or call.name == "copy_"
    return False


# --- graphs --------------------------------------------------------------------


def _graph(graph: Graph, codes: dict[tuple[str, str], _Code],
           calls_made: dict[tuple[CodeCall, ...], tuple[CodeCall, ...]] | None = None) -> Graph:
    """`graph` with its module's launches and totals. `calls_made`: the launches of the modules done
    so far, each sequence held once (a module compiled again, a model's repeated layers, launch the
    same; CodeCall rows are frozen, so sharing them is safe)."""
    code = codes.get((graph.compile_id, graph.part))
    if graph.stage != "output_code" or code is None or not same_text(code.record, graph):
        return graph
    calls = code.report_calls if calls_made is None else calls_made.setdefault(code.report_calls, code.report_calls)
    return replaced(
        graph,
        code_calls=calls,
        inductor_kernels=sum(c.kind == "inductor" for c in calls),
        extern_calls=sum(c.kind == "extern" for c in calls),
        user_kernels=sum(c.kind == "user" for c in calls),
        copies=sum(c.copy for c in calls),
    )


# --- kernels ---------------------------------------------------------------------


def _kernel(capture: Capture, kernel: Kernel, occurrences: tuple[Occurrence, ...]) -> Kernel:
    dropped = dropped_nodes(capture, kernel)
    missing = tuple(dict.fromkeys([*kernel.missing_from_output_code, *(d.compile_id for d in dropped)]))
    return dataclasses.replace(kernel, occurrences=occurrences, dropped_nodes=dropped, missing_from_output_code=missing)


def _occurrence(capture: Capture, kernel: Kernel, o: Occurrence, codes: dict[tuple[str, str], _Code]) -> Occurrence:
    if o.stage in _AOT_STAGES:
        code = codes.get((o.compile_id, o.part or "")) if o.compile_id is not None else None
        node = _node_of(code.nodes.get(kernel.id, ()) if code is not None else capture.nodes, kernel, o)
        if node is not None and node.form == "functional":
            return dataclasses.replace(o, clones=clones(capture, kernel, node, codes))
    if o.stage == "output_code" and o.inductor_name and o.compile_id is not None:
        code = codes.get((o.compile_id, o.part or ""))
        found = _user_launches(code, o.inductor_name) if code else []
        return dataclasses.replace(o, neighbourhood=tuple(neighbourhood(code, i) for i in found) if code else ())
    if o.stage == "runtime" and o.entry == Entry.CUSTOM_OP.value and o.custom_op and o.compile_id is not None:
        places = [(c, i) for c in _codes_of(codes, o.compile_id) for i in _extern_calls(c, o.custom_op)]
        return dataclasses.replace(o, neighbourhood=tuple(neighbourhood(c, i) for c, i in places))
    if o.stage == "runtime" and o.placement == "backward" and _recomputes(o, codes):
        return dataclasses.replace(o, placement="recompute")
    return o


def _recomputes(o: Occurrence, codes: dict[tuple[str, str], _Code]) -> bool:
    """Are the occurrence's run-time launches those of a backward launch that recomputes the forward's?"""
    code = codes.get((o.compile_id or "", o.part or ""))
    if code is None:
        return False
    launch = next((i for i, c in enumerate(code.calls) if c.kind == "user" and c.name == o.inductor_name
                   and c.function == (o.function or "call") and c.line == o.line), None)
    final = code.launch_nodes.get(launch) if launch is not None else None
    return bool(final is not None and final.recompute)


def _node_of(nodes: Iterable[NodeRecord], kernel: Kernel, o: Occurrence) -> NodeRecord | None:
    """The occurrence's node among `nodes` (its compile id and part's, when known)."""
    for n in nodes:
        if (n.kernel_id, n.compile_id, n.stage, n.part, n.node) == (kernel.id, o.compile_id, o.stage, o.part, o.node):
            if (n.subgraph or "") == (o.subgraph or ""):
                return n
    return None


def _codes_of(codes: dict[tuple[str, str], _Code], cid: str) -> list[_Code]:
    return [c for (code_cid, _), c in codes.items() if code_cid == cid]


def _user_launches(code: _Code, inductor_name: str) -> list[int]:
    return [i for i, c in enumerate(code.calls) if c.kind == "user" and c.name == inductor_name]


def _extern_calls(code: _Code, op: str) -> list[int]:
    """Calls of custom op "ns::name" (torch.ops.ns.name.<overload>)."""
    target = op.replace("::", ".")
    return [i for i, c in enumerate(code.calls) if c.kind == "extern" and _extern_op(c.name) == target]


# --- clones ------------------------------------------------------------------------


def clones(capture: Capture, kernel: Kernel, node: NodeRecord, codes: dict[tuple[str, str], _Code]) -> Clones:
    """What is cloned for one AOT functional node of `kernel`, and why."""
    before = tuple(node.tensors_to_clone or ())
    code = codes.get((node.compile_id, node.part))
    nodes = code.nodes if code is not None else _nodes_by_kernel(capture, node.compile_id, node.part)
    final = _final_node(nodes.get(kernel.id, []), node)
    after = tuple(a for a in before if a in (final.inductor_clones or {})) if final is not None else None
    fallback = next((f for f in capture.fallbacks if (f.kernel_id, f.compile_id) == (kernel.id, node.compile_id)), None)
    reason = "assumed" if fallback is not None else "written"
    merged = merged_args(capture, kernel.id, node)
    arguments = tuple(cloned_arg(a, reason, node, final, after, merged) for a in before)
    return Clones(
        before_reinplace=before, after_reinplace=after, arguments=arguments,
        bytes=_total(a.bytes for a in arguments if a.cloned) if after is not None else None,
        copies=_copies(code, final) if code is not None else None,
        fallback=fallback.cause if fallback else None,
        fallback_file=fallback.file if fallback else None,
        fallback_line=fallback.line if fallback else None,
    )


def _total(sizes: Iterable[int | None]) -> int | None:
    total = 0
    for size in sizes:
        if size is None:
            return None
        total += size
    return total


def _aot_nodes(nodes: Iterable[NodeRecord], stage: str | None = None) -> list[NodeRecord]:
    """Of one kernel's nodes in one compile id and part, those of `stage` (default: the AOT stages)."""
    stages = (stage,) if stage else _AOT_STAGES
    return [n for n in nodes if n.stage in stages]


def _final_node(nodes: list[NodeRecord], node: NodeRecord) -> NodeRecord | None:
    """The node's counterpart in the final post-grad graph: the same kernel's
    n-th HOP node there (Inductor keeps their order). `nodes`: the kernel's nodes
    in the node's compile id and part."""
    mine = [n for n in _aot_nodes(nodes, node.stage) if n.form == "functional" and n.subgraph == node.subgraph]
    finals = [n for n in _aot_nodes(nodes, "post_grad_final") if n.form == "mutation" and n.subgraph == node.subgraph]
    # By identity: comparing records field by field made this quadratic in a kernel's nodes.
    k = next((i for i, n in enumerate(mine) if n is node), None)
    if k is None:
        return None
    if k < len(finals):
        return finals[k]
    return None


def _copies(code: _Code, final: NodeRecord | None) -> tuple[str, ...]:
    """The copies made for this node's launch: the calls that fill its clones,
    and copy calls that read back what it wrote into them."""
    launch = next((i for i, n in code.launch_nodes.items() if n is final), None)
    if launch is None:
        return ()
    cloned = final.inductor_clones or {} if final is not None else {}
    found: list[str] = []
    for a in code.accesses[launch]:
        if a.arg.param not in cloned:
            continue
        if a.read is not None and a.read[0] == "w":
            found.append(code.calls[a.read[1]].name)
        for j in code.readers.get(("w", launch, a.arg.storage), ()):
            if code.report_calls[j].copy:
                found.append(code.calls[j].name)
    return tuple(dict.fromkeys(found))


# --- neighbourhood ---------------------------------------------------------------


def neighbourhood(code: _Code, index: int) -> Neighbourhood:
    """The launches around call `index` of `code` and the buffers it shares with them."""
    record = code.record
    call = code.calls[index]
    before, after = _around(code, call.function, call.line)
    related = tuple(_neighbour(code, index, j) for j in _sharing(code, index) if _shared(code, index, j))
    sites = [(caller, line) for function, caller, line in record.subgraph_calls if function == call.function]
    caller_before, caller_after = _around(code, *sites[0]) if sites else (None, None)
    final = code.launch_nodes.get(index)
    return Neighbourhood(
        compile_id=record.compile_id, part=record.part, index=index, call=call.name,
        before=_neighbour(code, index, before) if before is not None else None,
        after=_neighbour(code, index, after) if after is not None else None,
        related=related,
        epilogue_fusion=_epilogue(record, call) if call.kind == "user" else None,
        function=call.function, function_kind=subgraph_kind(call.function), call_sites=len(sites),
        caller_before=_neighbour(code, index, caller_before) if caller_before is not None else None,
        caller_after=_neighbour(code, index, caller_after) if caller_after is not None else None,
        recompute=bool(final is not None and final.recompute),
    )


def _around(code: _Code, function: str, line: int) -> tuple[int | None, int | None]:
    """The nearest Inductor kernel launches before and after `line` in output-code `function`."""
    inductor = [j for j, c in enumerate(code.calls) if c.kind == "inductor" and c.function == function]
    before = max((j for j in inductor if code.calls[j].line < line), default=None, key=lambda j: code.calls[j].line)
    after = min((j for j in inductor if code.calls[j].line > line), default=None, key=lambda j: code.calls[j].line)
    return before, after


def _neighbour(code: _Code, index: int, j: int) -> Neighbour:
    call = code.report_calls[j]
    return Neighbour(call.name, call.kind, j, call.ops, _shared(code, index, j), call.ops_source)


def _sharing(code: _Code, i: int) -> list[int]:
    """The calls that may share a buffer with call i (see `_shared`), in call order: the
    writers of what it reads, the readers of what it writes, and the other readers of
    what it reads. Only these are checked: checking every call was quadratic."""
    candidates = set()
    for a in code.accesses[i]:
        if a.read is not None:
            candidates.update(code.readers.get(a.read, ()))
            if a.read[0] == "w":
                candidates.add(a.read[1])
        if a.writes:
            candidates.update(code.readers.get(("w", i, a.arg.storage), ()))
    candidates.discard(i)
    return sorted(candidates)


def _shared(code: _Code, i: int, j: int) -> tuple[SharedBuffer, ...]:
    """Buffers through which call j feeds call i, reads from it, or reads the same value."""
    mine, theirs = code.accesses[i], code.accesses[j]
    their_reads = {a.read for a in theirs if a.read is not None}
    shared = []
    for a in mine:
        if a.read is not None and a.read[0] == "w" and a.read[1] == j:
            shared.append(SharedBuffer(a.arg.buffer, a.arg.param, "producer"))
        elif a.writes and any(v[0] == "w" and v[1] == i and v[2] == a.arg.storage for v in their_reads):
            shared.append(SharedBuffer(a.arg.buffer, a.arg.param, "consumer"))
        elif a.read is not None and a.read in their_reads and (a.read[0] == "init" or a.read[1] not in (i, j)):
            shared.append(SharedBuffer(a.arg.buffer, a.arg.param, "reads_same"))
    return tuple(dict.fromkeys(shared))


def _epilogue(record: OutputCodeRecord, call: CallRecord) -> str | None:
    if call.name in record.rewritten_kernels:
        return "fused"
    if record.epilogue_fusion is None:
        return None
    return "on" if record.epilogue_fusion else "off"


def _kernel_id(capture: Capture, name: str, file: str | None, line: int | None) -> str | None:
    for kid, record in capture.kernels.items():
        if (record.name, record.file, record.line) == (name, file, line):
            return kid
    return None
