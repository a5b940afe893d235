"""Tensor layouts of kernel arguments (shape, strides, storage offset, which storage) and how eager
Triton types a Python scalar, as plain values.

Fake tensors (graph nodes' `meta["val"]` / `meta["example_value"]`) and real tensors (a launch's
arguments) answer the same questions: `untyped_storage()` is shared by every view of one storage
(torch 2.11-2.14), and `StorageWeakRef` is how torch itself compares storages
(torch/_inductor/fx_passes/reinplace.py). Symbolic sizes stay text, never int()-ed (that would guard).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch

from tritoninspect.model.hazard_records import TensorArg


def example_value(value: Any) -> torch.Tensor | None:
    """The tensor a graph node stands for (its fake value), or `value` itself when it is a tensor."""
    if isinstance(value, torch.fx.Node):
        value = value.meta.get("val", value.meta.get("example_value"))
    return value if isinstance(value, torch.Tensor) else None


def storage_key(tensor: torch.Tensor) -> Any:
    """A key equal for tensors sharing one storage (None when it has none, e.g. a sparse tensor)."""
    from torch.multiprocessing.reductions import StorageWeakRef

    try:
        return StorageWeakRef(tensor.untyped_storage())
    except (RuntimeError, NotImplementedError, AttributeError):
        return None


def tensor_args(named: Iterable[tuple[str, Any]]) -> tuple[TensorArg, ...]:
    """The tensor arguments among `named` (name, tensor or graph node), with storage tokens s0, s1, ...
    in order of first appearance (the same token: the same storage)."""
    tokens: dict[Any, str] = {}
    args = []
    for name, value in named:
        tensor = example_value(value)
        if tensor is None:
            continue
        key = storage_key(tensor)
        token = tokens.setdefault(key, f"s{len(tokens)}") if key is not None else f"?{name}"
        args.append(TensorArg(
            param=name, dtype=str(tensor.dtype).replace("torch.", ""), shape=tuple(_plain(d) for d in tensor.shape),
            stride=tuple(_plain(s) for s in _strides(tensor)), offset=_plain(_offset(tensor)), storage=token,
            storage_elements=_storage_elements(tensor),
        ))
    return tuple(args)


def _strides(tensor: torch.Tensor) -> tuple[Any, ...]:
    try:
        return tuple(tensor.stride())
    except RuntimeError:  # a layout without strides
        return ()


def _offset(tensor: torch.Tensor) -> Any:
    try:
        return tensor.storage_offset()
    except RuntimeError:
        return 0


def _storage_elements(tensor: torch.Tensor) -> int | None:
    try:
        nbytes = tensor.untyped_storage().nbytes()
    except (RuntimeError, NotImplementedError, AttributeError):
        return None
    return nbytes // tensor.element_size() if isinstance(nbytes, int) and tensor.element_size() else None


def _plain(value: Any) -> Any:
    return value if isinstance(value, int) else str(value)


def eager_scalar_types(values: dict[str, Any]) -> dict[str, str]:
    """How eager Triton types each Python float, int or bool of a launch ("fp32", "i32", "i64", "u1"):
    `triton.runtime.jit.mangle_type`, which the launcher's specialisation uses (triton 3.6-3.8; torch's
    own `generate_ttir` calls it the same way, triton_kernel_wrap.py ~line 470 in 2.13)."""
    from triton.runtime.jit import mangle_type

    types = {}
    for name, value in values.items():
        if isinstance(value, (bool, int, float)):
            try:
                types[name] = str(mangle_type(value))
            except Exception:  # noqa: BLE001 - a Triton without this typing: say nothing
                continue
    return types
