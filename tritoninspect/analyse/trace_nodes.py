"""A trace's launch and op nodes: the `NodeRecord`s a live capture makes, from parsed graphs (analyse/trace.py)."""

from __future__ import annotations

from typing import Any

from tritoninspect.analyse.trace_kernels import KernelIndex, op_kinds
from tritoninspect.model.records import NodeRecord
from tritoninspect.textformats import fx_readable as fx_graph


def kernel_nodes(graphs: list[Any], codes: list[Any], index: KernelIndex) -> list[NodeRecord]:
    """The launch and op nodes of `graphs` (a trace's), as a live capture records them."""
    kinds = op_kinds(graphs, codes)
    nodes: list[NodeRecord] = []
    shared: dict[Any, Any] = {}
    for g in graphs:
        for op in g.parsed.ops:
            triton_op = kinds.get((g.compile_id, op.op)) == "triton_op"
            kernels = index.kernels_of_op(op.op) if triton_op else []
            for kid in kernels or [None]:
                nodes.append(NodeRecord(g.compile_id, g.stage, g.part, op.subgraph, op.name, "op", kid, op.op,
                                        triton_op))
        for hop in g.parsed.hops:
            nodes.append(_hop_record(g, hop, index, shared))
    return nodes


def _shared(shared: dict[Any, Any], value: Any) -> Any:
    """`value`, or the equal argument mapping or grid an earlier node of this log holds: the nodes of a
    kernel launched alike in many compiles (a model's layers, its recompiles) hold one copy. (Records are
    never changed once made: sharing them is safe.)"""
    try:
        return shared.setdefault((type(value), tuple(value.items()) if isinstance(value, dict) else value), value)
    except TypeError:  # an unhashable value (a list among the arguments): its own copy
        return value


def _hop_record(g: Any, hop: fx_graph.HopNode, index: KernelIndex, shared: dict[Any, Any]) -> NodeRecord:
    kid = index.kernel_id(hop.kernel_idx)
    op, is_triton_op = index.op_of(g.compile_id, hop, stage=g.stage, part=g.part)
    declared = set(index.constexpr_params(kid))
    values = {k: _plain(v, g.parsed.types) for k, v in hop.kwargs.items() if not _is_tensor(v, g.parsed.types)}
    # A raw launch's node prints its tensors only: the rest as its compile's output code passes them.
    launched = index.launch_args.get((g.compile_id, hop.kernel_idx, hop.constant_args_idx), {})  # type: ignore[arg-type]
    values = {**{k: v for k, v in launched.items() if k not in hop.kwargs}, **values}
    tensors = {k: fx_graph.tensor_info(g.parsed.types.get(v.name, "")) for k, v in hop.kwargs.items()
               if isinstance(v, fx_graph.Ref)}
    tensors = {k: t for k, t in tensors.items() if t}
    return NodeRecord(
        g.compile_id, g.stage, g.part, hop.subgraph, hop.name, hop.form, kid, op, is_triton_op,
        grid=_shared(shared, tuple(tuple(_plain(x, g.parsed.types) for x in grid) for grid in hop.grid)),
        constexprs=_shared(shared, {k: v for k, v in values.items() if k in declared}),
        scalars=_shared(shared, {k: v for k, v in values.items() if k not in declared}),
        tensors_to_clone=hop.tensors_to_clone,
        tensor_types=_shared(shared, {k: t for k, (t, _) in tensors.items()}),
        tensor_bytes=_shared(shared, {k: b for k, (_, b) in tensors.items()}),
        inductor_clones=_inductor_clones(hop, g.parsed) if g.stage == "post_grad_final" else None,
    )


def _inductor_clones(hop: fx_graph.HopNode, parsed: fx_graph.ParsedGraph) -> dict[str, int | None]:
    """The arguments of a final post-grad launch node that Inductor still clones -> bytes of the copy, as a live
    capture reads them (capture/compat/inductor.py `cloned_args`): an argument that is `as_strided` of a `clone`."""
    cloned: dict[str, int | None] = {}
    for name, value in hop.kwargs.items():
        source = parsed.strided.get(value.name) if isinstance(value, fx_graph.Ref) else None
        if source is not None and parsed.targets.get(source) == "clone":
            info = fx_graph.tensor_info(parsed.types.get(source, ""))
            cloned[name] = info[1] if info else None
    return cloned


def _is_tensor(value: Any, types: dict[str, str]) -> bool:
    return isinstance(value, fx_graph.Ref) and fx_graph.tensor_info(types.get(value.name, "")) is not None


def _plain(value: Any, types: dict[str, str]) -> Any:
    """A SymInt node as its expression (as a live capture writes it), other nodes by name."""
    if isinstance(value, fx_graph.Ref):
        return fx_graph.sym_expr(types.get(value.name, "")) or value.name
    return value
