"""torch.library ops: custom_op and triton_op registrations, and what a graph node was decomposed from."""

from __future__ import annotations

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
    `torch.library.wrap_triton` spelling), so results may differ by version."""
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


def custom_op_codes() -> dict[CodeType, str]:
    """Code objects of every custom op's Python implementation -> op name, to
    find launches made inside an opaque op by walking the stack.
    `CustomOpDef._init_fn` is private, torch 2.11-2.14; PR not found."""
    codes = {}
    for name, opdef in list(_opdefs().items()):
        fn = getattr(opdef, "_init_fn", None)
        code = getattr(fn, "__code__", None)
        if code is not None:
            codes[code] = name
    return codes


def source_fn_op(node: torch.fx.Node) -> str | None:
    """The op a post-AOT HOP node was decomposed from (a triton_op), if any.
    `node.meta["source_fn_stack"]` entries are (name, target), torch 2.11-2.14;
    PR not found."""
    stack = node.meta.get("source_fn_stack") or []
    if not stack:
        return None
    return op_name(stack[-1][1])
