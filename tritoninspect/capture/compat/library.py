"""torch.library ops: custom_op and triton_op registrations, and what a graph node was decomposed from."""

from __future__ import annotations

from collections.abc import Callable
from types import CodeType
from typing import Any

import torch


def op_name(target: Any) -> str | None:
    """'ns::name' for an OpOverload / OpOverloadPacket target, else None."""
    schema = getattr(target, "_schema", None)
    return schema.name if schema is not None else None


def _opdefs() -> Any:
    # torch/_library/custom_ops.py: OPDEFS maps qualname -> CustomOpDef, since
    # torch.library.custom_op (https://github.com/pytorch/pytorch/pull/122344,
    # torch 2.4); unchanged to 2.14.
    from torch._library.custom_ops import OPDEFS

    return OPDEFS


def is_custom_op(name: str) -> bool:
    return name in _opdefs()


def triton_op_kernels(name: str) -> list[Any]:
    """The kernels a `triton_op` registered (best-effort AST scan in torch;
    empty for a plain custom_op). torch/_library/triton.py, torch 2.11-2.14; PR
    adding `get_triton_kernels_for_op` not found. The scan was rewritten by
    https://github.com/pytorch/pytorch/pull/181126 (it also recognises the public
    `torch.library.wrap_triton` spelling), so results may differ by version: torch
    2.13's scan returns [] for `torch.library.wrap_triton(k)` (checked), and
    analyse/kernels.py then ties the op to the kernels seen inside it."""
    from torch._library.triton import get_triton_kernels_for_op

    return list(get_triton_kernels_for_op(name))


def is_triton_op(name: str) -> bool:
    """A triton_op has a FunctionalTensorMode dispatch rule (its decomposition
    into the HOP) and registered kernels; a custom_op has neither.

    The rule is registered by `triton_op` since it was added
    (https://github.com/pytorch/pytorch/pull/130637); `CustomOpDef._torch_dispatch_fns`
    is private, torch 2.11-2.14.
    """
    if triton_op_kernels(name):
        return True
    opdef = _opdefs().get(name)
    fns = getattr(opdef, "_torch_dispatch_fns", {}) if opdef is not None else {}
    return any(cls.__name__ == "FunctionalTensorMode" for cls in fns)


def op_source(name: str) -> tuple[str | None, int | None]:
    """(file, line) of the Python function a custom op or triton_op was registered with
    (`CustomOpDef._init_fn`, private, torch 2.11-2.14; PR not found); (None, None) for ops
    registered otherwise (a C++ or `torch.library.Library.impl` op)."""
    fn = getattr(_opdefs().get(name), "_init_fn", None)
    code = getattr(fn, "__code__", None)
    if code is None:
        return None, None
    return code.co_filename, code.co_firstlineno


def custom_op_codes(known: dict[Any, str] | None = None) -> dict[Any, str]:
    """Code objects of every custom op's Python implementation -> op name, to
    find launches made inside an opaque op by walking the stack; `known` itself while no op was
    registered since it was read (a library registers one lazily, on its first call: torchao 0.18's
    `ao::blockwise_fp8_gemm`). An op without Python code is keyed by its name, which no frame's code
    matches, so the mapping has one key per op. `CustomOpDef._init_fn` is private, torch 2.11-2.14;
    PR not found."""
    if known is not None and len(known) == len(_opdefs()):
        return known
    codes: dict[Any, str] = {}
    for name, opdef in list(_opdefs().items()):
        code = getattr(getattr(opdef, "_init_fn", None), "__code__", None)
        codes[code if code is not None else name] = name
    return codes


def source_fn_op(node: torch.fx.Node) -> str | None:
    """The op a post-AOT HOP node was decomposed from, as node meta tells it:
    the last `source_fn_stack` entry ((name, target) pairs, torch 2.11-2.14; PR
    not found). A backward node has none; AOTAutograd copies its forward node's
    stack there as `fwd_source_fn_stack` (`_copy_metadata_to_bw_nodes_in_subgraph`,
    torch/_functorch/_aot_autograd/utils.py ~line 623 in 2.13, present in 2.11
    and 2.14; PR not found): the op whose registered backward made the node."""
    stack = node.meta.get("source_fn_stack") or node.meta.get("fwd_source_fn_stack") or []
    if not stack:
        return None
    return op_name(stack[-1][1])


# --- which triton_op decomposed into a node ------------------------------------------------------
#
# Node meta names the op the *user's graph* called (`source_fn_stack`, or
# `fwd_source_fn_stack` in a backward graph), never a triton_op called from inside
# it: a triton_op called by another triton_op, or by an op's registered backward,
# decomposes into the kernel HOP while AOTAutograd traces, and its name is then left
# nowhere (checked on 2.13: the backward HOP of `mylib::bwd`, called from the
# registered backward of `mylib::fwd`, carries only `fwd_source_fn_stack` =
# [('fwd_default', mylib.fwd)] and `autograd_backward=True`). So the capture watches
# the decompositions themselves and notes each op on the nodes it creates.

#: Node meta key (tritoninspect's own): the triton_ops whose decomposition created
#: the node, innermost first.
DECOMPOSED_FROM = "tritoninspect_decomposed_from"


def decomposition_patches() -> list[tuple[dict[Any, Any], Any, Callable[..., Any]]]:
    """(mapping, key, value) items to set for a capture: every registered
    triton_op's decomposition rule, wrapped to note the op on the graph nodes it
    creates (read back by `decomposed_from`).

    `triton_op` registers its decomposition as the `FunctionalTensorMode` rule of
    its CustomOpDef (torch/_library/triton.py ~line 464 in 2.13; since the op was
    added, https://github.com/pytorch/pytorch/pull/130637), and the dispatcher
    entry `register_torch_dispatch` installs looks the rule up in
    `CustomOpDef._torch_dispatch_fns` at every call (torch/_library/custom_ops.py
    ~line 623 in 2.13), so replacing the dict entry wraps it. Private, torch
    2.11-2.14. Ops registered after this call are not watched: their nodes fall
    back to `source_fn_op`.
    """
    from torch._subclasses.functional_tensor import FunctionalTensorMode

    patches = []
    for name, opdef in list(_opdefs().items()):
        rules = getattr(opdef, "_torch_dispatch_fns", None)
        rule = rules.get(FunctionalTensorMode) if isinstance(rules, dict) else None
        if rule is not None and is_triton_op(name):
            patches.append((rules, FunctionalTensorMode, _noting(name, rule)))
    return patches


def _noting(name: str, rule: Callable[..., Any]) -> Callable[..., Any]:
    def decompose_noting_op(*args: Any, **kwargs: Any) -> Any:
        graph = _tracing_graph()
        last = next(iter(reversed(graph.nodes)), None) if graph is not None else None
        try:
            return rule(*args, **kwargs)
        finally:
            if graph is not None:
                _note(graph, last, name)

    return decompose_noting_op


def _tracing_graph() -> torch.fx.Graph | None:
    """The graph make_fx is recording into (AOTAutograd traces with it), if any.
    `get_proxy_mode()` and the mode's `.tracer.graph`:
    torch/fx/experimental/proxy_tensor.py, private, torch 2.11-2.14; PR not found."""
    from torch.fx.experimental.proxy_tensor import get_proxy_mode

    tracer = getattr(get_proxy_mode(), "tracer", None)
    graph = getattr(tracer, "graph", None)
    return graph if isinstance(graph, torch.fx.Graph) else None


def _note(graph: torch.fx.Graph, last: torch.fx.Node | None, name: str) -> None:
    """Append `name` to every node created after `last`: an inner op's rule
    returns first, so the innermost op comes first."""
    for node in reversed(graph.nodes):
        if node is last:
            break
        node.meta[DECOMPOSED_FROM] = (*node.meta.get(DECOMPOSED_FROM, ()), name)


def decomposed_from(node: torch.fx.Node) -> str | None:
    """The innermost triton_op whose decomposition created `node`, as watched by
    `decomposition_patches`; None when none was seen. Inductor's post-grad
    rewrites keep only torch's own meta fields (`_COPY_META_FIELDS`,
    torch/_inductor/pattern_matcher.py `_transfer_meta`), so a node they made has none."""
    noted = node.meta.get(DECOMPOSED_FROM)
    return str(noted[0]) if noted else None
