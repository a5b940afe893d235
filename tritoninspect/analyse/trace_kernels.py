"""Which user kernel each `kernel_idx` of a trace is, and which op each kernel node came from.

A trace has no side table: `kernel_idx` is only an index into the traced process's
`kernel_side_table`, stable within that process (one log). A kernel is named from what
the trace holds, in this order: Inductor's provenance artifacts (`trace_provenance.py`,
where traced), the output code's user-kernel launches paired in graph order with the final
post-grad graph's mutation HOPs, the launch line in the node's `# File:` comment
(`add_kernel[grid](...)`, `wrap_triton(add_kernel)[grid](...)`); file and line come from the
output code's definition (`# Original path: file:line`). A kernel none of these names stays
`kernel_idx_N`, with a problem saying so.

Entry: a HOP node whose kernel and source line also appear as a HOP in the Dynamo graph of
the same compile is a raw launch (`hop`). One that appears only from AOTAutograd on was
made by `wrap_triton` while AOTAutograd decomposed an op: a `triton_op`. Its op is the
triton_op the Dynamo graph calls from the node's source line (decomposed nodes keep the op
call's line), else the one its output-code launch names as source node, else unknown: in a
backward graph (a registered backward called it), or when the op's decomposition holds
several kernels (an op nested in it launched some; the trace cannot tell which).
"""

from __future__ import annotations

import ast
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tritoninspect.model.records import KernelRecord, OutputCodeRecord
from tritoninspect.textformats import fx_readable as fx_graph
from tritoninspect.textformats import output_code



class WholeLog(Protocol):
    """What names a log's kernels, gathered over all of it (analyse/trace_evidence.py `KernelEvidence`)."""

    idxs: set[int]

    def names(self) -> tuple[dict[int, Any], dict[int, Any], dict[str, tuple[Any, ...]]]: ...

    def vote(self, idx: int) -> str | None: ...

    def kernels_of_op(self, index: KernelIndex, op: str) -> list[str]: ...

    def ops(self) -> set[str]: ...

_SOURCE_NODES_RE = re.compile(r"#\s*(?:Topologically Sorted )?Source Nodes: \[(?P<nodes>[^\]]*)\]")
_SIGNATURE_RE = re.compile(r"'signature': \{(?P<body>[^}]*)\}")


def op_kinds(graphs: list[Any], codes: list[OutputCodeRecord]) -> dict[tuple[str, str], str]:
    """(compile id, op) -> "custom_op" (AOTAutograd kept it: opaque), "triton_op" (called in
    the Dynamo graph, gone from every later graph of the compile: decomposed) or "unknown"
    (the trace holds no later graph of that compile)."""
    later: dict[str, set[str]] = defaultdict(set)
    has_later: set[str] = set()
    for g in graphs:
        if g.stage != "dynamo":
            has_later.add(g.compile_id)
            later[g.compile_id].update(op.op for op in g.parsed.ops)
    for code in codes:
        has_later.add(code.compile_id)
        later[code.compile_id].update(code.extern_ops)
    kinds: dict[tuple[str, str], str] = {}
    for g in graphs:
        for op in g.parsed.ops:
            key = (g.compile_id, op.op)
            if op.op in later[g.compile_id]:
                kinds[key] = "custom_op"
            elif g.compile_id not in has_later:
                kinds.setdefault(key, "unknown")
            else:
                kinds.setdefault(key, "triton_op")
    return kinds


@dataclass
class KernelIndex:
    """kernel_idx -> kernel, and each HOP node's op, for one trace log."""

    #: kernel_idx -> kernel id.
    ids: dict[int, str] = field(default_factory=dict)
    #: kernel_idx -> how it was named: Inductor's provenance, launch order, launch line, unknown.
    how: dict[int, str] = field(default_factory=dict)
    kernels: dict[str, KernelRecord] = field(default_factory=dict)
    #: (compile id, kernel_idx, file, line) of every Dynamo-graph HOP: raw launches.
    raw: set[tuple[str, int | None, str | None, int | None]] = field(default_factory=set)
    #: (compile id, op short name) -> op, for the triton_ops of each compile.
    triton_ops: dict[tuple[str, str], str] = field(default_factory=dict)
    #: op -> kernel ids attributed to it.
    op_kernels: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    problems: list[tuple[str, str]] = field(default_factory=list)
    #: (compile id, file, line) -> the triton_ops the Dynamo graph calls from that line: the
    #: nodes AOTAutograd decomposes an op into keep the op call's source line.
    op_lines: dict[tuple[str, str, int], set[str]] = field(default_factory=dict)
    #: (compile id, op) whose decomposition holds several kernels: their op is unknown.
    ambiguous: set[tuple[str, str]] = field(default_factory=set)
    #: What the trace leaves unknown about these kernels (notes in the report).
    notes: list[str] = field(default_factory=list)
    #: (compile id, kernel_idx) -> the triton_op its output-code launch names as source.
    launch_ops: dict[tuple[str, int], str] = field(default_factory=dict)
    #: (compile id, kernel_idx, constant_args_idx) -> the non-tensor arguments its output-code launch passes
    #: (`launch_args`): a raw launch's node prints only its tensors (the rest sit in Dynamo's side table).
    launch_args: dict[tuple[str, int, int], dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def build(cls, graphs: list[Any], codes: list[OutputCodeRecord],
              named: dict[int, tuple[str, str | None, int | None]] | None = None,
              evidence: WholeLog | None = None) -> KernelIndex:
        """`named`: kernel_idx -> (name, file, line) known otherwise (provenance), first. `evidence`: the whole
        log's, for the graphs and codes of one segment of it (analyse/trace_evidence.py): kernels are named
        and attributed to ops from it, every kernel of the log registered."""
        index = cls()
        index.raw = {_raw_key(g.compile_id, h) for g in graphs if g.stage == "dynamo" for h in g.parsed.hops}
        sources: dict[tuple[str, int], tuple[str, ...]] = {}
        index._name_kernels(graphs, codes, named or {}, sources, evidence)
        kinds = op_kinds(graphs, codes)
        index._index_triton_ops(graphs, kinds)
        index._ops_from_sources(graphs, kinds, sources)
        index._attribute(graphs)
        if evidence is not None:
            index.op_kernels = defaultdict(list, {op: evidence.kernels_of_op(index, op) for op in evidence.ops()})
        return index

    def _name_kernels(self, graphs: list[Any], codes: list[OutputCodeRecord],
                      named: dict[int, tuple[str, str | None, int | None]],
                      sources: dict[tuple[str, int], tuple[str, ...]], evidence: WholeLog | None) -> None:
        launches: dict[int, Counter[str]] = defaultdict(Counter)
        for g in graphs if evidence is None else ():
            for hop in g.parsed.hops:
                name = fx_graph.launched_name(hop.source.code) if hop.source else None
                if hop.kernel_idx is not None and name:
                    launches[hop.kernel_idx][name] += 1
        launched = launched_kernels(graphs, codes, sources, self.launch_args)
        defined = defined_kernels(codes)
        idxs = {h.kernel_idx for g in graphs for h in g.parsed.hops if h.kernel_idx is not None}
        if evidence is not None:
            (named, launched, defined), idxs = evidence.names(), evidence.idxs
        for idx in sorted(idxs):
            given = named.get(idx) or launched.get(idx)
            if given or evidence is None:
                name = given[0] if given else (launches[idx].most_common(1)[0][0] if launches[idx] else None)
            else:
                name = evidence.vote(idx)
            self.how[idx] = ("Inductor's provenance" if idx in named else "launch order in the output code"
                             if given else "launch line" if name else "unknown")
            self._register(idx, name, given, defined)

    def _index_triton_ops(self, graphs: list[Any], kinds: dict[tuple[str, str], str]) -> None:
        for (cid, op), kind in kinds.items():
            if kind == "triton_op":
                self.triton_ops[(cid, op.split("::", 1)[-1])] = op
        for g in graphs:
            for op in g.parsed.ops if g.stage == "dynamo" else ():
                if kinds.get((g.compile_id, op.op)) == "triton_op" and op.source is not None:
                    self.op_lines.setdefault((g.compile_id, op.source.file, op.source.line), set()).add(op.op)

    def _attribute(self, graphs: list[Any]) -> None:
        """Which ops are ambiguous, then each op's kernels."""
        reached: dict[tuple[str, str], set[str]] = defaultdict(set)
        for g in graphs:
            for hop in g.parsed.hops if g.part != "backward" else ():
                op, _ = self.candidate_op(g.compile_id, hop, g.stage)
                kid = self.kernel_id(hop.kernel_idx)
                if op and kid:
                    reached[(g.compile_id, op)].add(kid)
        # One op call decomposed into several kernels: an op nested in it launched some of
        # them, and the trace cannot tell which are whose (every node keeps the outer call's line).
        self.ambiguous = {key for key, kids in reached.items() if len(kids) > 1}
        for g in graphs:
            for hop in g.parsed.hops:
                op, _ = self.op_of(g.compile_id, hop, stage=g.stage, part=g.part)
                kid = self.kernel_id(hop.kernel_idx)
                if op and kid and kid not in self.op_kernels[op]:
                    self.op_kernels[op].append(kid)

    def _register(self, idx: int, name: str | None, given: Any, defined: dict[str, tuple[Any, ...]]) -> None:
        if name is None:
            name = f"kernel_idx_{idx}"
            self.problems.append(("trace", f"kernel_idx {idx}: no launch line or provenance names its kernel"))
        file, line, constexprs = given[1] if given else None, given[2] if given else None, ()
        if name in defined:
            d_file, d_line, constexprs = defined[name]
            file, line = file or d_file, line or d_line
        kid = f"{Path(file).stem}.{name}" if file else name
        self.ids[idx] = kid
        if kid not in self.kernels:
            self.kernels[kid] = KernelRecord(kid, name, file, line, (), tuple(constexprs))

    def _ops_from_sources(self, graphs: list[Any], kinds: dict[tuple[str, str], str],
                          sources: dict[tuple[str, int], tuple[str, ...]]) -> None:
        """(compile id, kernel_idx) -> the triton_op whose Dynamo node is the only triton_op
        among its launch's source nodes, for HOPs that carry no source line of their own."""
        dynamo_ops = {(g.compile_id, op.name): op.op for g in graphs if g.stage == "dynamo" for op in g.parsed.ops}
        for (cid, idx), names in sources.items():
            ops = {dynamo_ops[(cid, n)] for n in names if (cid, n) in dynamo_ops}
            ops = {op for op in ops if kinds.get((cid, op)) == "triton_op"}
            if len(ops) == 1:
                self.launch_ops[(cid, idx)] = ops.pop()

    def mapping_notes(self, graphs: list[Any]) -> list[str]:
        """`[0/0] kernel_idx 0 -> add_kernel, samples/add_raw.py:13 (how)`, per compile."""
        notes = []
        by_compile: dict[str, list[Any]] = {}
        for g in graphs:
            by_compile.setdefault(g.compile_id, []).append(g)
        for cid, of_cid in by_compile.items():
            idxs = sorted({h.kernel_idx for g in of_cid for h in g.parsed.hops if h.kernel_idx is not None})
            for idx in idxs:
                record = self.kernels.get(self.ids.get(idx, ""))
                if record is None:
                    continue
                where = f"{record.file}:{record.line}" if record.file else "source unknown"
                notes.append(f"[{cid}] kernel_idx {idx} → {record.name}, {where} (from {self.how.get(idx, 'unknown')})")
        return notes

    def records(self) -> dict[str, KernelRecord]:
        return dict(self.kernels)

    def kernel_id(self, idx: int | None) -> str | None:
        return self.ids.get(idx) if idx is not None else None

    def constexpr_params(self, kid: str | None) -> tuple[str, ...]:
        record = self.kernels.get(kid or "")
        return record.constexpr_params if record else ()

    def kernels_of_op(self, op: str) -> list[str]:
        return list(self.op_kernels.get(op, ()))

    def op_of(self, cid: str, hop: fx_graph.HopNode, stage: str = "", part: str = "") -> tuple[str | None, bool]:
        """(the triton_op a HOP node came from, whether it came from one); (None, True)
        when it came from a triton_op the trace does not name: one in a backward graph (a
        registered backward called it; the node keeps the forward call's line), or one
        nested in the op the graph called (see `ambiguous`)."""
        op, is_triton_op = self.candidate_op(cid, hop, stage)
        if op is not None and (part == "backward" or (cid, op) in self.ambiguous):
            kid = self.kernel_id(hop.kernel_idx) or f"kernel_idx {hop.kernel_idx}"
            note = (f"[{cid}] {kid.rsplit('.', 1)[-1]}: reached through a triton_op the trace does not name "
                    f"({'called from a registered backward' if part == 'backward' else f'{op} decomposed into several kernels, some of an op nested in it'}); op unknown")
            if note not in self.notes:
                self.notes.append(note)
            return None, True
        return op, is_triton_op

    def candidate_op(self, cid: str, hop: fx_graph.HopNode, stage: str) -> tuple[str | None, bool]:
        if stage == "dynamo" or _raw_key(cid, hop) in self.raw:
            return None, False
        source = hop.source
        at_line = self.op_lines.get((cid, source.file, source.line), set()) if source else set()
        if len(at_line) == 1:
            return next(iter(at_line)), True
        if (cid, hop.kernel_idx or -1) in self.launch_ops:
            return self.launch_ops[(cid, hop.kernel_idx or -1)], True
        return (self.triton_ops.get((cid, source.function)) if source else None), True


def launched_kernels(graphs: list[Any], codes: list[OutputCodeRecord],
                      sources: dict[tuple[str, int], tuple[str, ...]] | None = None,
                      args: dict[tuple[str, int, int], dict[str, Any]] | None = None,
                      ) -> dict[int, tuple[str, str | None, int | None]]:
    """kernel_idx -> (name, file, line) of the user kernel its node launches in the output code.

    Inductor lowers each mutation HOP of the final post-grad graph to one user-kernel
    launch in `call()`, in graph order (torch/_inductor/lowering.py
    `triton_kernel_wrap_`, 2.11-2.14), a sub-graph's in its own function: when a graph and
    the code of the same compile and part have as many of each, the n-th node launches the
    n-th kernel (`_paired`). Otherwise nothing is paired here. `sources` gets (compile id,
    kernel_idx) -> the launch's `Topologically Sorted Source Nodes` (Dynamo-graph node names);
    `args` (compile id, kernel_idx, constant_args_idx) -> the launch's non-tensor arguments."""
    found: dict[int, tuple[str, str | None, int | None]] = {}
    by_part: dict[tuple[str, str], list[Any]] = {}
    for g in graphs:
        if g.stage == "post_grad_final":
            by_part.setdefault((g.compile_id, g.part), []).append(g)
    for code in codes:
        finals = by_part.get((code.compile_id, code.part), [])
        if len(finals) != 1:
            continue
        hops = [h for h in finals[0].parsed.hops if h.form == "mutation"]
        calls = [c for c in code.calls if c.kind == "user"]
        defined = {k.inductor_name: k for k in code.user_kernels}
        text, lines = "", []  # the code read back from the log once, and only when a launch is paired
        for hop, call in _paired(hops, calls):
            kernel = defined.get(call.name)
            if kernel is not None and hop.kernel_idx is not None:
                found.setdefault(hop.kernel_idx, (kernel.name, kernel.file, kernel.line))
                if not text and (sources is not None or args is not None):
                    text = code.code
                    lines = text.splitlines()
                if sources is not None:
                    sources[(code.compile_id, hop.kernel_idx)] = _source_nodes_above(lines, call.line)
                if args is not None and hop.constant_args_idx is not None:
                    args[(code.compile_id, hop.kernel_idx, hop.constant_args_idx)] = launch_args(text, lines, call)
    return found


def _paired(hops: list[fx_graph.HopNode], calls: list[Any]) -> list[tuple[fx_graph.HopNode, Any]]:
    """Each launch node with its output-code launch, the n-th with the n-th of the same sub-graph: Inductor writes
    a sub-graph (`true_graph_0.true_graph_0`) as a function named after its path (`true_graph_0_true_graph_0`), and
    the functions in another order than the graph's (torch 2.14: `false_graph_0` before `true_graph_0`'s). When the
    functions do not match the sub-graphs one to one (a graph partition's), in order over all; none when the counts
    differ."""
    by_graph: dict[str, list[fx_graph.HopNode]] = defaultdict(list)
    by_function: dict[str, list[Any]] = defaultdict(list)
    for hop in hops:
        by_graph[hop.subgraph.replace(".", "_") or "call"].append(hop)
    for call in calls:
        by_function[call.function].append(call)
    if {k: len(v) for k, v in by_graph.items()} == {k: len(v) for k, v in by_function.items()}:
        return [pair for name, graph_hops in by_graph.items() for pair in zip(graph_hops, by_function[name])]
    return list(zip(hops, calls)) if len(hops) == len(calls) else []


def launch_args(code: str, lines: list[str], call: Any) -> dict[str, Any]:
    """The non-tensor arguments of a user-kernel launch in the output code `code` (`lines`): its constexprs from the
    kernel's `triton_meta['constants']`, and the scalars its `.run(...)` line passes, by the signature's order of
    the parameters that are not constexprs (`x_ptr, out_ptr, 40, 1, 1, 1`: the grid follows), where the value is
    a literal or a size symbol (`s77`, as a live capture writes it). Inductor writes both the same way in 2.11-2.14,
    on a GPU and in compile-only mode; what it writes otherwise (a computed `ks0`) is left out."""
    start = code.find(f"{call.name} = async_compile.triton(")
    signature = _SIGNATURE_RE.search(code, start) if start >= 0 else None
    if signature is None:
        return {}
    end = code.find("\n", signature.end())
    constants = _CONSTANTS_RE.search(code, signature.end(), end if end >= 0 else len(code))  # triton_meta's own
    found = _literal_dict(constants["body"]) if constants else {}
    params = [(name, ty) for name, ty in re.findall(r"'(\w+)': '([^']*)'", signature["body"]) if ty != "constexpr"]
    run = _RUN_ARGS_RE.search(lines[call.line - 1]) if 0 < call.line <= len(lines) else None
    values = [a.strip() for a in output_code.split_call_args(run["args"]) if "=" not in a] if run else []
    for (name, ty), value in zip(params, values):
        if not ty.startswith("*") and name not in found:
            scalar = _scalar(value)
            if scalar is not None:
                found[name] = scalar
    return found


_CONSTANTS_RE = re.compile(r"'constants': \{(?P<body>[^{}]*)\}")
_RUN_ARGS_RE = re.compile(r"\.run\((?P<args>.*)\)\s*$")
_SYMBOL_RE = re.compile(r"[su]\d+")


def _literal_dict(body: str) -> dict[str, Any]:
    """`'A': 3.0, 'BLOCK': 32` as a dict; {} for anything that is not plain literals."""
    try:
        value = ast.literal_eval("{" + body + "}")
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return {}
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _scalar(text: str) -> Any:
    """A launch argument as a node's scalar: a number, or a size symbol's name; None otherwise."""
    if _SYMBOL_RE.fullmatch(text):
        return text
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _source_nodes_above(lines: list[str], line: int) -> tuple[str, ...]:
    """The node names of the `# Topologically Sorted Source Nodes: [...]` comment just above
    output-code line `line` (1-based). That comment also names the neighbouring kernel's
    nodes (torch 2.11, 2.13), so callers keep only names that are triton_op calls."""
    for number in range(line - 2, max(line - 5, -1), -1):
        match = _SOURCE_NODES_RE.search(lines[number]) if 0 <= number < len(lines) else None
        if match:
            return tuple(n.strip() for n in match["nodes"].split(",") if n.strip())
    return ()


def _raw_key(cid: str, hop: fx_graph.HopNode) -> tuple[str, int | None, str | None, int | None]:
    source = hop.source
    return cid, hop.kernel_idx, source.file if source else None, source.line if source else None


def defined_kernels(codes: list[OutputCodeRecord]) -> dict[str, tuple[str | None, int | None, tuple[str, ...]]]:
    """User-kernel name -> (file, line, constexpr parameters) from every output code."""
    defined: dict[str, tuple[str | None, int | None, tuple[str, ...]]] = {}
    for code in codes:
        for kernel in code.user_kernels:
            if kernel.name not in defined:
                defined[kernel.name] = (kernel.file, kernel.line, _constexprs(code.code, kernel.inductor_name))
    return defined


def _constexprs(code: str, inductor_name: str) -> tuple[str, ...]:
    """The constexpr parameters in a user kernel's `triton_meta` signature."""
    start = code.find(f"{inductor_name} = async_compile.triton(")
    if start < 0:
        return ()
    match = _SIGNATURE_RE.search(code, start)
    if match is None:
        return ()
    return tuple(name for name, ty in re.findall(r"'(\w+)': '([^']*)'", match["body"]) if ty == "constexpr")
