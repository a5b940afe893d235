"""The graph around each kernel, as small node-and-edge pictures (for the HTML report).

Pure functions over a saved report: nothing is compiled. Two kinds of picture per kernel:

- `fx_pictures`: its node in the final post-grad graph (the graph Inductor lowers), with the
  nodes that feed it and those that read what it wrote, two steps each way, read back from
  the graph's FX code (`textformats.fx_graph`).
- `code_pictures`: its launch in the output code's `call()` (or the extern call of the
  opaque op it runs in), with the launches around it and the buffers they share, from
  `Graph.code_calls` and the occurrence's `Neighbourhood` record.

A picture is plain data (`Picture`); `render/_layout.py` places it and `render/_svg.py` draws it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from tritoninspect.model.report import CodeCall, Graph, Kernel, Neighbourhood, Occurrence, Report
from tritoninspect.textformats.fx_graph import FxGraph, FxNode, parse_fx

__all__ = ["PEdge", "PNode", "Picture", "code_pictures", "fx_pictures", "kernel_pictures", "short_op"]

#: Node kinds, each drawn its own way: the kernel in focus, another user kernel, an ATen op, an
#: Inductor-generated kernel, an extern call, an opaque custom op (a black box), a clone or copy,
#: a memory allocation, a graph input or output.
KINDS = ("kernel", "user", "op", "inductor", "extern", "opaque", "copy", "alloc", "input", "output")

#: How far from the kernel a post-grad picture reaches, each way, and how many nodes it holds at most.
DEPTH = 2
MAX_NODES = 40
#: Launches shown before and after the kernel's in an output-code picture (besides those sharing buffers).
WINDOW = 2

_HOP = "triton_kernel_wrapper_"
#: A buffer Inductor allocates (`buf3`, `true_graph_0_buf0` in a sub-graph function), not an input.
_BUFFER = re.compile(r"^(?:\w+_)?buf\d+$")
_COPY_TARGETS = re.compile(r"\.(clone|copy_|copy|_to_copy)\.")
_ALLOC_TARGETS = re.compile(r"\.(empty|empty_like|empty_strided|zeros|full)\.")
_TORCH_NAMESPACES = {"aten", "prims", "inductor", "higher_order", "_operator"}


@dataclass(frozen=True)
class PNode:
    id: str
    label: str
    kind: str
    #: A second line under the label (fused ops, the tensor type, "+2 more users").
    sublabel: str = ""
    #: Tooltip lines.
    detail: tuple[str, ...] = ()
    #: The 1-based line of the code it comes from (a link target), 0 for none.
    line: int = 0


@dataclass(frozen=True)
class PEdge:
    src: str
    dst: str
    label: str = ""
    #: "data" (a value flows), "mutates" (the kernel wrote it in place), "order" (launch order only).
    kind: str = "data"


@dataclass(frozen=True)
class Picture:
    kernel: str
    entry: str
    compile_id: str
    #: The graph's stage: an FX stage (`FX_PREFERENCE`) or "output_code".
    stage: str
    part: str
    #: The node in focus (the kernel's node, launch or opaque op).
    focus: str
    nodes: tuple[PNode, ...] = ()
    edges: tuple[PEdge, ...] = ()
    #: Index in `Report.graphs` of the graph it was drawn from (for links to its code).
    graph_index: int = -1
    #: Which node or launch it is about, when the graph holds more than one of the kernel.
    which: str = ""

    @property
    def title(self) -> str:
        where = _STAGE_WORDS.get(self.stage, self.stage)
        part = f" ({self.part})" if self.part else ""
        which = f" · {self.which}" if self.which else ""
        return f"{self.kernel} · {self.entry} · [{self.compile_id}] {where}{part}{which}"

    def key(self) -> tuple[str, str, str, str]:
        """What pairs this picture with its counterpart in another report (diff)."""
        return (self.kernel, self.stage, self.part, self.compile_id)


def kernel_pictures(report: Report, kernel: Kernel) -> list[Picture]:
    """Every picture of `kernel`: post-grad graphs first, then output code, by compile id."""
    return fx_pictures(report, kernel) + code_pictures(report, kernel)


def short_op(target: str) -> str:
    """`torch.ops.aten.sin.default` -> `aten.sin`; `torch.ops.ns.op.default` -> `ns::op`."""
    parts = target.split(".")
    if target.startswith("torch.ops.") and len(parts) >= 4:
        ns, op = parts[2], parts[3]
        return f"{ns}.{op}" if ns in _TORCH_NAMESPACES else f"{ns}::{op}"
    return parts[-1] if target else ""


# --- post-grad graphs -------------------------------------------------------------


def fx_pictures(report: Report, kernel: Kernel) -> list[Picture]:
    """The kernel's node in each compile's final post-grad graph (or the latest FX graph captured)."""
    pictures = []
    for index, graph in _fx_graphs(report):
        fx = parse_fx(graph.code)
        focuses = _focus_nodes(report, kernel, graph, fx)
        found = [_fx_picture(report, kernel, graph, index, fx, focus) for focus in focuses]
        if len(found) > 1:  # a sub-graph's node is named with its sub-graph (true_graph_0.node)
            found = [replace(p, which=f"node {f.module + '.' if f.module else ''}{p.focus}") for p, f in zip(found, focuses)]
        pictures += found
    return pictures


#: FX stages, the most useful first: the graph Inductor lowers, else the latest one captured.
FX_PREFERENCE = ("post_grad_final", "post_grad", "aot_inference", "aot_forward", "aot_backward", "dynamo")
_STAGE_WORDS = {"post_grad_final": "post-grad graph", "post_grad": "post-grad graph (before passes)",
                "aot_inference": "AOT graph", "aot_forward": "AOT graph", "aot_backward": "AOT graph",
                "dynamo": "Dynamo graph", "output_code": "output code"}


def _fx_graphs(report: Report) -> list[tuple[int, Graph]]:
    """Per compile id and part, the graph of the most useful FX stage captured (`FX_PREFERENCE`)."""
    best: dict[tuple[str, str], tuple[int, int]] = {}
    for i, g in enumerate(report.graphs):
        if g.stage in FX_PREFERENCE:
            key, rank = (g.compile_id, g.part or ""), FX_PREFERENCE.index(g.stage)
            if key not in best or rank < best[key][0]:
                best[key] = (rank, i)
    # A Dynamo graph has no part; drop it where an AOT-or-later graph of that compile exists.
    later = {cid for (cid, part), (rank, _) in best.items() if rank < FX_PREFERENCE.index("dynamo")}
    return [(i, report.graphs[i]) for (cid, part), (rank, i) in best.items()
            if not (report.graphs[i].stage == "dynamo" and cid in later)]


def _focus_nodes(report: Report, kernel: Kernel, graph: Graph, fx: FxGraph) -> list[FxNode]:
    """The kernel's own nodes in `graph` (a node of a sub-graph, e.g. a torch.cond branch, in that
    sub-graph's module: branches name their nodes alike), or the opaque op nodes it launched in."""
    names = [(o.node, o.subgraph.rsplit(".", 1)[-1] if o.subgraph else None) for o in kernel.occurrences
             if o.stage == graph.stage and o.compile_id == graph.compile_id and o.node and o.part in (None, graph.part)]
    names += [(op.node, None) for op in report.opaque_ops
              if op.stage == graph.stage and op.compile_id == graph.compile_id and kernel.name in op.kernels]
    found = []
    for name, module in dict.fromkeys(names):
        node = fx.node(name, module) or fx.node(name)
        if node is not None and node.op == "call" and node not in found:
            found.append(node)
    return found


def _fx_picture(report: Report, kernel: Kernel, graph: Graph, index: int, fx: FxGraph, focus: FxNode) -> Picture:
    aliases = _getitem_aliases(fx, focus.module)
    mutated = _mutated_inputs(kernel, graph, fx, focus)
    edges = _fx_edges(fx, focus.module, aliases, focus, mutated)
    keep = _reach(focus.name, edges)
    opaque = _opaque_nodes(report, graph, fx)
    nodes = [_fx_pnode(fx.node(name, focus.module), focus, kernel, opaque, edges, keep) for name in keep]
    shown = [e for e in edges if e.src in keep and e.dst in keep]
    entry = _entry(kernel, graph.compile_id, focus.name)
    return Picture(kernel.name, entry, graph.compile_id, graph.stage, graph.part, focus.name, tuple(nodes),
                   tuple(shown), index)


def _getitem_aliases(fx: FxGraph, module: str) -> dict[str, str]:
    """getitem nodes -> the node they index (a HOP's or op's result tuple), so pictures skip them."""
    aliases: dict[str, str] = {}
    for n in fx.nodes:
        if n.module == module and n.target == "getitem" and n.inputs:
            aliases[n.name] = _resolve(aliases, n.inputs[0])
    return aliases


def _resolve(aliases: dict[str, str], name: str) -> str:
    for _ in range(8):  # getitem of getitem; bounded against a malformed (cyclic) text
        if name not in aliases:
            break
        name = aliases[name]
    return name


def _mutated_inputs(kernel: Kernel, graph: Graph, fx: FxGraph, focus: FxNode) -> dict[str, str]:
    """Nodes the kernel writes in place (mutation HOP): node -> parameter name.

    The parameters come from the kernel's recorded clones (`tensors_to_clone`, written arguments);
    a buffer allocated just for the kernel (`empty`) is an output too."""
    if "mutation" not in focus.target:
        return {}
    written = set()
    for o in kernel.occurrences:
        if o.compile_id == graph.compile_id:
            written.update(o.tensors_to_clone or ())
            if o.clones is not None:
                written.update(a.arg for a in o.clones.arguments)
    result = {}
    for param, name in focus.bindings:
        node = fx.node(name, focus.module)
        allocated = node is not None and bool(_ALLOC_TARGETS.search(node.target + "."))
        if param in written or allocated:
            result[name] = param
    return result


def _fx_edges(fx: FxGraph, module: str, aliases: dict[str, str], focus: FxNode,
              mutated: dict[str, str]) -> list[PEdge]:
    edges: list[PEdge] = []
    bound = {name: param for param, name in focus.bindings}
    for n in fx.nodes:
        if n.module != module or n.name in aliases:
            continue
        for source in n.inputs:
            src = _resolve(aliases, source)
            label = bound.get(source, "") if n is focus else ""
            if n.line > focus.line and src in mutated and n is not focus:
                edges.append(PEdge(focus.name, n.name, mutated[src], "mutates"))
                continue
            edges.append(PEdge(src, n.name, label))
    return list(dict.fromkeys(edges))


def _reach(focus: str, edges: list[PEdge]) -> list[str]:
    """Nodes within DEPTH steps of `focus` upstream and downstream, focus first, at most MAX_NODES."""
    keep = [focus]
    for forward in (False, True):
        frontier = [focus]
        for _ in range(DEPTH):
            step = []
            for name in frontier:
                for e in edges:
                    nxt = e.dst if forward and e.src == name else e.src if not forward and e.dst == name else None
                    if nxt and nxt not in keep and len(keep) < MAX_NODES:
                        keep.append(nxt)
                        step.append(nxt)
            frontier = step
    return keep


def _fx_pnode(node: FxNode | None, focus: FxNode, kernel: Kernel, opaque: set[str], edges: list[PEdge],
              keep: list[str]) -> PNode:
    assert node is not None  # every kept name came from an edge between parsed nodes
    hidden = sum(1 for e in edges if (e.src == node.name and e.dst not in keep) or (e.dst == node.name and e.src not in keep))
    more = f"+{hidden} more" if hidden else ""
    kind, label = _fx_kind(node, node is focus, kernel, opaque)
    sub = " · ".join(x for x in (node.type, more) if x)
    detail = tuple(x for x in (f"{node.name} = {node.target or node.op}", node.source) if x)
    return PNode(node.name, label, kind, sub, detail, node.line)


def _fx_kind(node: FxNode, is_focus: bool, kernel: Kernel, opaque: set[str]) -> tuple[str, str]:
    if node.op == "placeholder":
        return "input", node.name
    if node.op == "output":
        return "output", "output"
    op = short_op(node.target)
    if node.name in opaque:
        return "opaque", f"{op} ⊃ {kernel.name}" if is_focus else op
    if is_focus:
        # A HOP node is the kernel itself; a triton_op's node (Dynamo graphs) launches it.
        return "kernel", kernel.name if _HOP in node.target else f"{op} → {kernel.name}"
    if _HOP in node.target:
        return "user", f"{node.name} (user kernel)"
    if _COPY_TARGETS.search(node.target + "."):
        return "copy", op
    if _ALLOC_TARGETS.search(node.target + "."):
        return "alloc", op
    return "op", op


def _opaque_nodes(report: Report, graph: Graph, fx: FxGraph) -> set[str]:
    """Nodes of opaque custom ops: as the report lists them, plus (after AOT, where triton_ops
    are gone) any call into a namespace that is not torch's own."""
    names = {op.node for op in report.opaque_ops if op.compile_id == graph.compile_id and op.stage == graph.stage}
    if graph.stage.startswith("post_grad"):
        names |= {n.name for n in fx.nodes if n.target.startswith("torch.ops.") and n.target.count(".") >= 3
                  and n.target.split(".")[2] not in _TORCH_NAMESPACES}
    return names


def _entry(kernel: Kernel, compile_id: str, node: str) -> str:
    """How the kernel entered at this node (the entry of its occurrence there, else of its compile)."""
    entries = [o.entry for o in kernel.occurrences if o.compile_id == compile_id and o.node == node]
    entries += [o.entry for o in kernel.occurrences if o.compile_id == compile_id]
    return entries[0] if entries else (kernel.entries[0] if kernel.entries else "")


# --- output code ------------------------------------------------------------------


def code_pictures(report: Report, kernel: Kernel) -> list[Picture]:
    """Each launch of `kernel` (or call of the opaque op it ran in) among its output code's launches."""
    pictures = []
    for occurrence in kernel.occurrences:
        for hood in occurrence.neighbourhood or ():
            found = _output_graph(report, hood.compile_id, hood.part)
            if found is not None and 0 <= hood.index < len(found[1].code_calls):
                pictures.append(_code_picture(kernel, occurrence, hood, *found))
    counts = Counter((p.compile_id, p.part) for p in pictures)
    return [replace(p, which=", ".join(x for x in (f"launch {int(p.focus[1:]) + 1} of {len(_calls_of(report, p))}"
                                                   if counts[(p.compile_id, p.part)] > 1 else "", p.which) if x))
            for p in pictures]


def _calls_of(report: Report, picture: Picture) -> tuple[CodeCall, ...]:
    return report.graphs[picture.graph_index].code_calls


def _output_graph(report: Report, compile_id: str, part: str) -> tuple[int, Graph] | None:
    return next(((i, g) for i, g in enumerate(report.graphs)
                 if g.stage == "output_code" and g.compile_id == compile_id and g.part == part), None)


def _code_picture(kernel: Kernel, occurrence: Occurrence, hood: Neighbourhood, index: int, graph: Graph) -> Picture:
    calls = graph.code_calls
    # The launches written in the same output-code function (call(), or a sub-graph's).
    same = [i for i, c in enumerate(calls) if c.function == calls[hood.index].function]
    at = same.index(hood.index)
    shown = set(same[max(0, at - WINDOW):at + WINDOW + 1])
    shown |= {n.index for n in hood.related if 0 <= n.index < len(calls)}
    order = sorted(shown)
    ids = {i: f"c{i}" for i in order}
    nodes = [_call_pnode(kernel, occurrence, calls[i], ids[i], i == hood.index) for i in order]
    edges = _buffer_edges(calls, order, ids)
    edges += _shared_edges(hood, ids, edges)
    inputs, input_edges = _graph_inputs(calls, hood.index, ids, same)
    edges += input_edges + _order_edges(order, ids, edges)
    function = calls[hood.index].function
    which = "" if function == "call" else f"in {function}" + (" (recomputes)" if hood.recompute else "")
    if function == "call" and hood.recompute:
        which = "recomputes the forward's"
    return Picture(kernel.name, occurrence.entry, hood.compile_id, "output_code", hood.part, ids[hood.index],
                   tuple(inputs + nodes), tuple(edges), index, which)


def _call_pnode(kernel: Kernel, occurrence: Occurrence, call: CodeCall, node_id: str, is_focus: bool) -> PNode:
    ops = ", ".join(call.ops[:4]) + (" …" if len(call.ops) > 4 else "")
    detail = (f"{call.kind} launch #{node_id[1:]}: {call.name}",
              f"reads {', '.join(call.reads) or '-'}; writes {', '.join(call.writes) or '-'}")
    if is_focus:
        if call.kind == "extern":
            op = occurrence.custom_op or short_op(call.name)
            return PNode(node_id, f"{op} ⊃ {kernel.name}", "opaque", "opaque custom op", detail, call.line or 0)
        return PNode(node_id, call.name, "kernel", _grid_text(kernel, occurrence) or "user kernel", detail,
                     call.line or 0)
    kind = "copy" if call.copy else {"inductor": "inductor", "user": "user"}.get(call.kind, "extern")
    if kind == "extern" and call.name.startswith("torch.ops.") and call.name.split(".")[2] not in _TORCH_NAMESPACES:
        kind = "opaque"
    label = short_op(call.name) if call.name.startswith("torch.ops.") else call.name
    return PNode(node_id, label, kind, ops if kind in ("inductor", "copy") else "", detail, call.line or 0)


def _grid_text(kernel: Kernel, occurrence: Occurrence) -> str:
    """`grid (4, 1, 1)`: the launch grid (one per autotune config), from the kernel's graph nodes of that
    compile and part, which record it; none when those nodes launch on different grids."""
    same = [o for o in kernel.occurrences if o.compile_id == occurrence.compile_id and o.grid
            and o.stage in ("post_grad_final", "post_grad") and o.part == occurrence.part]
    texts = {" | ".join(dict.fromkeys("(" + ", ".join(map(str, g)) + ")" for g in o.grid or ())) for o in same}
    return f"grid {texts.pop()}" if len(texts) == 1 else ""


def _buffer_edges(calls: tuple[CodeCall, ...], order: list[int], ids: dict[int, str]) -> list[PEdge]:
    """writer -> the next reader of each buffer, among the shown launches."""
    edges = []
    for pos, i in enumerate(order):
        for buffer in calls[i].writes:
            for j in order[pos + 1:]:
                if buffer in calls[j].reads:
                    edges.append(PEdge(ids[i], ids[j], buffer))
                if buffer in calls[j].writes:
                    break
    return edges


def _shared_edges(hood: Neighbourhood, ids: dict[int, str], edges: list[PEdge]) -> list[PEdge]:
    """What the neighbourhood record knows that buffer names alone miss (aliases, views)."""
    focus = ids[hood.index]
    found = []
    for n in hood.related:
        if n.index not in ids:
            continue
        for s in n.shared:
            src, dst = (ids[n.index], focus) if s.flow == "producer" else (focus, ids[n.index])
            if s.flow != "reads_same" and not any(e.src == src and e.dst == dst for e in edges + found):
                found.append(PEdge(src, dst, s.buffer))
    return found


def _graph_inputs(calls: tuple[CodeCall, ...], focus: int, ids: dict[int, str],
                  same: list[int]) -> tuple[list[PNode], list[PEdge]]:
    """Buffers the focus launch reads that no earlier launch (of its function, `same`) wrote: the
    graph's (or sub-graph's) inputs."""
    written = {b for i in same if i < focus for b in calls[i].writes}
    nodes, edges = [], []
    for buffer in calls[focus].reads:
        if buffer not in written and not _BUFFER.match(buffer):
            nodes.append(PNode(f"in:{buffer}", buffer, "input", "graph input"))
            edges.append(PEdge(f"in:{buffer}", ids[focus]))
    return nodes, edges


def _order_edges(order: list[int], ids: dict[int, str], edges: list[PEdge]) -> list[PEdge]:
    """Consecutive launches with no buffer between them keep their launch order (a dotted edge)."""
    linked = {(e.src, e.dst) for e in edges}
    return [PEdge(ids[a], ids[b], "", "order") for a, b in zip(order, order[1:]) if (ids[a], ids[b]) not in linked]
