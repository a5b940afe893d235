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

import json
from typing import Any

from tritoninspect.capture.records import OutputCodeRecord


def kernel_posts(payload: str) -> dict[str, list[list[str]]]:
    """Inductor kernel name (debug handle dropped) -> the post-grad node names of each of
    its calls, in handle order (a handle per call Inductor wrote), from an
    `inductor_provenance_tracking_node_mappings` payload; {} when it is not that layout."""
    try:
        data = json.loads(payload)
    except ValueError:
        return {}
    mapping = data.get("cppCodeToPost") if isinstance(data, dict) else None
    if not isinstance(mapping, dict):
        return {}
    calls: list[tuple[int, str, list[str]]] = []
    for kernel, nodes in mapping.items():
        name, _, handle = str(kernel).rpartition(":")
        if isinstance(nodes, list) and name:
            calls.append((int(handle) if handle.isdigit() else 0, name, [str(n) for n in nodes]))
    posts: dict[str, list[list[str]]] = {}
    for _, name, nodes in sorted(calls, key=lambda c: c[0]):
        posts.setdefault(name, []).append(nodes)
    return posts


def kernel_ops(posts: dict[str, list[list[str]]], targets: dict[str, str]) -> dict[str, list[tuple[str, ...]]]:
    """Inductor kernel -> the ops of each call, from its post-grad nodes' targets (the
    `kernel_ops` that `textformats.output_code.parse_code_calls` takes)."""
    return {name: [tuple(dict.fromkeys(targets[n] for n in nodes if n in targets)) for nodes in per_call]
            for name, per_call in posts.items()}


def named_by_provenance(graphs: list[Any], codes: list[OutputCodeRecord],
                        provenance: list[tuple[str, str, dict[str, list[list[str]]]]]
                        ) -> dict[int, tuple[str, str | None, int | None]]:
    """kernel_idx -> (name, file, line): each user kernel of an output code whose provenance
    names the post-grad HOP node it was lowered from. `provenance`: (compile id, part, mapping)."""
    found: dict[int, tuple[str, str | None, int | None]] = {}
    for cid, part, posts in provenance:
        finals = [g for g in graphs if g.stage == "post_grad_final" and (g.compile_id, g.part) == (cid, part)]
        hops = {h.name: h for g in finals for h in g.parsed.hops}
        for code in codes:
            if (code.compile_id, code.part) != (cid, part):
                continue
            for kernel in code.user_kernels:
                for node in (n for call in posts.get(kernel.inductor_name, ()) for n in call):
                    hop = hops.get(node)
                    if hop is not None and hop.kernel_idx is not None:
                        found.setdefault(hop.kernel_idx, (kernel.name, kernel.file, kernel.line))
    return found
