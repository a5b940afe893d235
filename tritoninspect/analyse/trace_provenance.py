"""Inductor's provenance artifacts in a trace: which graph node each generated kernel came from.

Where torch has `torch._inductor.config.trace.provenance_tracking_level` (2.11-2.14; on
when it is non-zero, `INDUCTOR_PROVENANCE=1` or `TORCH_COMPILE_DEBUG=1`), each Inductor
compile traces an `inductor_provenance_tracking_node_mappings` artifact after its output
code (torch/_inductor/compile_fx.py, debug.py `dump_inductor_provenance_info`; format
version 2.0): `cppCodeToPost` maps each kernel Inductor wrote, as `name:debug_handle`
(`add_kernel_0:3`), to the final post-grad graph's nodes it was made from, among them the
`triton_kernel_wrapper_mutation` node of a user kernel (`set_kernel_post_grad_provenance_tracing`,
`is_extern=True`). With the output code's `# Original path:` that names every `kernel_idx`.
"""

from __future__ import annotations

import re
from typing import Any

from tritoninspect.model.records import OutputCodeRecord
from tritoninspect.textformats import fx_readable as fx_graph
from tritoninspect.textformats.output_code import TORCH_OP_NAMESPACES


def kernel_posts(payload: str) -> dict[str, list[list[str]]]:
    """Inductor kernel name (debug handle dropped) -> the post-grad node names of each of
    its calls, in handle order (a handle per call Inductor wrote), from an
    `inductor_provenance_tracking_node_mappings` payload; {} when it is not that layout."""
    mapping = _mapping(payload, "cppCodeToPost")
    calls: list[tuple[int, str, list[str]]] = []
    for kernel, nodes in mapping.items():
        name, _, handle = str(kernel).rpartition(":")
        if isinstance(nodes, list) and name:
            calls.append((int(handle) if handle.isdigit() else 0, name, [str(n) for n in nodes]))
    posts: dict[str, list[list[str]]] = {}
    for _, name, nodes in sorted(calls, key=lambda c: c[0]):
        posts.setdefault(name, []).append(nodes)
    return posts


def post_to_pre(payload: str) -> dict[str, str]:
    """Post-grad node -> the (first) pre-grad node it came from (`postToPre` of the same
    payload): the nodes one op decomposed into share one; {} when it is not there."""
    mapping = _mapping(payload, "postToPre")
    return {str(post): str(pres[0]) for post, pres in mapping.items() if isinstance(pres, list) and pres}


def kernel_ops(posts: dict[str, list[list[str]]], graph: fx_graph.ParsedGraph,
               pre: dict[str, str] | None = None) -> dict[str, list[tuple[str, ...]]]:
    """Inductor kernel -> the ops of each call (the `kernel_ops` that
    `textformats.output_code.parse_code_calls` takes): its post-grad nodes' targets in graph
    order, without the nodes of other launches that Inductor lists among a kernel's
    origins (a user kernel's HOP node, a custom op an extern call runs: what a live capture
    drops as the op of an extern reader), each op once. Where the kernel's name proves which
    ATen op a group of decomposed nodes came from (`original_ops`), that op instead."""
    order = {name: i for i, name in enumerate(graph.targets)}
    launches = {h.name for h in graph.hops}
    result: dict[str, list[tuple[str, ...]]] = {}
    for name, per_call in posts.items():
        for nodes in per_call:
            kept = sorted((n for n in nodes if n in graph.targets and n not in launches
                           and _fusible(graph.targets[n])), key=order.__getitem__)
            groups = _groups(kept, graph.targets, pre or {})
            ops = original_ops(name, groups) or [op for _, ops in groups for op in ops]
            result.setdefault(name, []).append(tuple(dict.fromkeys(ops)))
    return result


def _fusible(target: str) -> bool:
    """An op Inductor can generate code for: torch's own (aten bare, `prims.*`), not a custom op's."""
    namespace, dot, _ = target.rpartition(".")
    return not dot or namespace in TORCH_OP_NAMESPACES


def _groups(nodes: list[str], targets: dict[str, str], pre: dict[str, str]) -> list[tuple[str, list[str]]]:
    """(pre-grad node, ops of its post-grad nodes) in graph order; a node without one alone."""
    groups: dict[str, list[str]] = {}
    for node in nodes:
        groups.setdefault(pre.get(node, f"post:{node}"), []).append(targets[node])
    return list(groups.items())


_FUSED_NAME_RE = re.compile(r"^(?:cpp|triton_[a-z]+)_fused_(?P<ops>.+)_\d+$")


def original_ops(kernel: str, groups: list[tuple[str, list[str]]]) -> list[str] | None:
    """The ATen op of each group (one op call, decomposed into its post-grad nodes) as a live
    capture names it (`original_aten`), where the kernel's name proves it; None otherwise.

    Inductor names a fused kernel `<prefix>_fused_` + the sorted distinct `original_aten`
    names of its nodes joined by `_` + `_<n>` (torch/_inductor/utils.py
    `get_fused_kernel_name`, descriptive_names="original_aten", the default in 2.11-2.14):
    `cpp_fused__softmax_1`. A group of one op whose name the kernel's name holds is that op;
    if exactly one group is left, its op is the one name that makes the sorted join equal the
    kernel's name. Anything else (a truncated name, other naming settings, two decomposed
    groups) proves nothing: None."""
    match = _FUSED_NAME_RE.match(kernel)
    if match is None or not groups:
        return None
    body = match["ops"]
    pieces = f"_{body}_"
    named = [ops[0] if len(ops) == 1 and f"_{ops[0]}_" in pieces else None for _, ops in groups]
    known = {op for op in named if op is not None}
    left = [i for i, op in enumerate(named) if op is None]
    if not left:
        return named if "_".join(sorted(known)) == body else None  # type: ignore[return-value]
    if len(left) > 1:
        return None
    found = {body[i:j] for i in range(len(body)) for j in range(i + 1, len(body) + 1)
             if "_".join(sorted(known | {body[i:j]})) == body and body[i:j] not in known}
    if len(found) != 1:
        return None
    named[left[0]] = found.pop()
    return named  # type: ignore[return-value]


def named_by_provenance(graphs: list[Any], codes: list[OutputCodeRecord],
                        provenance: list[tuple[str, str, dict[str, list[list[str]]]]]
                        ) -> dict[int, tuple[str, str | None, int | None]]:
    """kernel_idx -> (name, file, line): each user kernel of an output code whose provenance
    names the post-grad HOP node it was lowered from. `provenance`: (compile id, part, mapping)."""
    found: dict[int, tuple[str, str | None, int | None]] = {}
    finals_of: dict[tuple[str, str], list[Any]] = {}
    for g in graphs:
        if g.stage == "post_grad_final":
            finals_of.setdefault((g.compile_id, g.part), []).append(g)
    codes_of: dict[tuple[str, str], list[OutputCodeRecord]] = {}
    for code in codes:
        codes_of.setdefault((code.compile_id, code.part), []).append(code)
    for cid, part, posts in provenance:
        hops = {h.name: h for g in finals_of.get((cid, part), ()) for h in g.parsed.hops}
        for code in codes_of.get((cid, part), ()):
            for kernel in code.user_kernels:
                for node in (n for call in posts.get(kernel.inductor_name, ()) for n in call):
                    hop = hops.get(node)
                    if hop is not None and hop.kernel_idx is not None:
                        found.setdefault(hop.kernel_idx, (kernel.name, kernel.file, kernel.line))
    return found


def _mapping(payload: str, key: str) -> dict[Any, Any]:
    """The dict under `key` of a provenance payload; {} when the payload is not JSON or has none."""
    from tritoninspect.textformats.trace_damage import trace_json

    try:
        data = trace_json(payload)
    except (ValueError, RecursionError):
        return {}
    mapping = data.get(key) if isinstance(data, dict) else None
    return mapping if isinstance(mapping, dict) else {}
