"""Inductor's copies of user-kernel arguments: the clone the final post-grad graph makes, and whether
Inductor's lowering of its `as_strided` reads past the buffer it resolves it against.

The clone: post-grad `decompose_triton_kernel_wrapper_functional` (fx_passes/post_grad.py) gives each
argument left in `tensors_to_clone` `clone_preserve_strides(x)`, i.e.
`as_strided(clone(as_strided(x, [needed], [1], 0)), size, stride, offset)`, which copies x's storage
from its start to the end of x (torch/_inductor/utils.py, torch 2.11-2.14; see compat/inductor.py
`cloned_args`). https://github.com/pytorch/pytorch/pull/184050 changed that clone and was reverted.

The overread: Inductor's `as_strided` lowering (torch/_inductor/lowering.py, `lowerings[aten.as_strided]`,
torch 2.11-2.14) realises its input and applies the storage offset to the buffer it gets; when that
buffer is a view materialised on its own (smaller than the storage the offset is relative to) the view
reaches past it: pytorch issues 192219 / 192226 (hit Liger-Kernel's fused linear cross entropy).
https://github.com/pytorch/pytorch/pull/192227 proposed an extent check in that lowering (closed;
whether a fix landed, and in which release, is not known here): the same comparison is made below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from tritoninspect.capture.compat import layouts


def clone_source(value: Any) -> dict[str, Any] | None:
    """For a final-graph kernel argument made by `clone_preserve_strides`: the node cloned, the inner
    as_strided node, and the clone's sizes (the cloned tensor's storage offset and elements, the elements
    copied, the item size, whether its storage is a graph input's). None for anything else."""
    aten = torch.ops.aten
    if not (isinstance(value, torch.fx.Node) and value.target is aten.as_strided.default):
        return None
    clone = value.args[0]
    if not (isinstance(clone, torch.fx.Node) and clone.target is aten.clone.default):
        return None
    inner = clone.args[0]
    if not (isinstance(inner, torch.fx.Node) and inner.target is aten.as_strided.default):
        return None
    source = inner.args[0]
    if not isinstance(source, torch.fx.Node):
        return None
    tensor, copied = layouts.example_value(source), layouts.example_value(inner)
    return {
        "source": source.name, "as_strided": inner.name,
        "view_offset": _int(tensor.storage_offset()) if tensor is not None else None,
        "view_elements": _int(tensor.numel()) if tensor is not None else None,
        "copied_elements": _int(copied.numel()) if copied is not None else None,
        "itemsize": tensor.element_size() if tensor is not None else None,
        "of_input": _storage_of_input(source),
    }


def _storage_of_input(node: torch.fx.Node) -> bool:
    tensor = layouts.example_value(node)
    key = layouts.storage_key(tensor) if tensor is not None else None
    if key is None:
        return False
    for other in node.graph.nodes:
        if other.op == "placeholder":
            value = layouts.example_value(other)
            if value is not None and layouts.storage_key(value) == key:
                return True
    return False


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) else None


def overread_patches(on_overread: Callable[[str, str, int | None, int | None], None]) -> list[tuple[Any, Any, Any]]:
    """(mapping, key, value) items that wrap Inductor's as_strided lowering: after each lowering,
    `on_overread(fx_node, buffer, allocated, needed)` when the view needs more elements of its buffer
    than the buffer holds (both statically known). Graph inputs are left out (their storage is the
    caller's, larger than Inductor knows). [] where this Inductor has no such registry."""
    try:
        from torch._inductor.lowering import lowerings
    except ImportError:
        return []
    aten = torch.ops.aten
    items = []
    for key in (aten.as_strided.default, aten.as_strided):
        original = lowerings.get(key)
        if original is None:
            continue
        items.append((lowerings, key, _checked(original, on_overread)))
    return items


def _checked(original: Any, on_overread: Callable[[str, str, int | None, int | None], None]) -> Any:
    def as_strided(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        try:
            found = _overread(result)
        except Exception:  # noqa: BLE001 - inside Inductor's lowering: never break the compile
            found = None
        if found is not None:
            on_overread(*found)
        return result

    return as_strided


def _overread(result: Any) -> tuple[str, str, int | None, int | None] | None:
    """(fx node, buffer, allocated, needed) for a lowered view past its buffer; None otherwise.
    `TensorBox.data` a `ReinterpretView` whose `.data` is the StorageBox / Buffer and `.layout` the
    view's layout (ir.py, torch 2.11-2.14); `GraphLowering.get_allocation_storage_size` (2.13-2.14,
    what codegen allocates, padding included) else the buffer layout's `storage_size()`."""
    from torch._inductor import ir
    from torch._inductor.virtualized import V

    view = getattr(result, "data", None)
    if not isinstance(view, ir.ReinterpretView):
        return None
    buffer = view.data.data if isinstance(view.data, ir.StorageBox) else view.data
    if isinstance(buffer, (ir.InputBuffer, ir.ConstantBuffer)) or not hasattr(buffer, "get_layout"):
        return None
    sizes = V.graph.sizevars
    needed = view.layout.storage_size()
    allocation = getattr(V.graph, "get_allocation_storage_size", None)
    allocated = allocation(buffer) if callable(allocation) else buffer.get_layout().storage_size()
    if not sizes.statically_known_gt(needed, allocated):
        return None
    node = getattr(V.graph, "current_node", None)
    return (getattr(node, "name", "?"), buffer.get_name(), _hint(sizes, allocated), _hint(sizes, needed))


def _hint(sizes: Any, expr: Any) -> int | None:
    """An int for a size: a static one as is; else the size hint (`size_hint` to torch 2.12,
    `optimization_hint` after; not checked), or None."""
    try:
        return int(expr)
    except TypeError:
        pass
    for name in ("size_hint", "optimization_hint"):
        hint = getattr(sizes, name, None)
        if callable(hint):
            try:
                return int(hint(expr))
            except Exception:  # noqa: BLE001 - an unhinted size: say nothing of it
                return None
    return None
