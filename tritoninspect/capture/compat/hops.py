"""The triton_kernel_wrapper higher-order ops: node layout, side table, argument tensors."""

from __future__ import annotations

from typing import Any

import torch
from torch._higher_order_ops import triton_kernel_wrap as _tkw

from tritoninspect.model.errors import CaptureError

# torch/_higher_order_ops/triton_kernel_wrap.py, same names in torch 2.2-2.14:
# triton_kernel_wrapper_mutation from https://github.com/pytorch/pytorch/pull/109623,
# triton_kernel_wrapper_functional from https://github.com/pytorch/pytorch/pull/110185,
# kernel_side_table from https://github.com/pytorch/pytorch/pull/110633.

HOP_MUTATION = _tkw.triton_kernel_wrapper_mutation
HOP_FUNCTIONAL = _tkw.triton_kernel_wrapper_functional


def hop_form(node: torch.fx.Node) -> str | None:
    """'mutation' or 'functional' for a triton-kernel HOP node, else None."""
    if node.op != "call_function":
        return None
    if node.target is HOP_MUTATION:
        return "mutation"
    if node.target is HOP_FUNCTIONAL:
        return "functional"
    return None


def side_table_kernel(kernel_idx: int) -> Any:
    """The kernel object Dynamo stored for this HOP (a JITFunction or Autotuner).

    Only valid while the compile that made the index is alive: torch 2.13-2.14
    reset the table in `torch._dynamo.reset()` (torch/_dynamo/__init__.py ~line
    178 in 2.13); 2.11 keeps it. PR not found.
    """
    return _tkw.kernel_side_table.get_kernel(kernel_idx)


def side_table_kernels() -> list[Any]:
    """Every kernel object in the side table (`KernelSideTable.id_to_kernel`, a dict,
    torch 2.11-2.14; PR not found)."""
    return list(getattr(_tkw.kernel_side_table, "id_to_kernel", {}).values())


def side_table_constants(constant_args_idx: int) -> dict[str, Any]:
    # KernelSideTable.get_constant_args, torch 2.11-2.14 (the non-graphable
    # constants live beside the kernels; PR not found).
    return dict(_tkw.kernel_side_table.get_constant_args(constant_args_idx))


def hop_fields(node: torch.fx.Node) -> dict[str, Any]:
    """The HOP node kwargs tritoninspect reads. torch 2.14 adds an optional
    `launch_kwargs` only when non-empty, hence `.get` for everything optional.

    - `tma_descriptor_metadata`: torch 2.11-2.14, in the ("stable" | "experimental",
      ...) form since https://github.com/pytorch/pytorch/pull/155777.
    - `tensors_to_clone`: the functional form only (pytorch/pytorch#110185).
    - `launch_kwargs`: torch 2.14 only (read in the 2.14 wheel). Likely from
      https://github.com/pytorch/pytorch/pull/187028 ("Preserve backend compiler
      options in user defined triton kernels", which tracks the launch kwarg
      names through the HOP); its diff was not checked, so that is unconfirmed.
    """
    kw = node.kwargs
    try:
        return {
            "kernel_idx": kw["kernel_idx"],
            "constant_args_idx": kw["constant_args_idx"],
            "grid": kw["grid"],
            "kwargs": kw["kwargs"],
            "tma": kw.get("tma_descriptor_metadata", {}),
            "tensors_to_clone": kw.get("tensors_to_clone"),
            "launch_kwargs": kw.get("launch_kwargs", {}),
        }
    except KeyError as exc:
        raise CaptureError(f"unknown triton_kernel_wrapper layout: no {exc} in {sorted(kw)}") from exc


def tensor_info(value: Any) -> tuple[str, int | None] | None:
    """("float32[64]", bytes) for an FX node whose meta["val"] is a tensor; bytes
    None for symbolic sizes. None for anything else.

    Dynamo's graph nodes carry `meta["example_value"]`, AOT and later graphs
    `meta["val"]` (torch 2.11-2.14; PR not found).
    """
    example = value.meta.get("val", value.meta.get("example_value")) if isinstance(value, torch.fx.Node) else value
    if not isinstance(example, torch.Tensor):
        return None
    shape = ", ".join(str(d) for d in example.shape)
    dtype = str(example.dtype).replace("torch.", "")
    # Never int() a symbolic numel: that guards on its value and specialises the
    # user's dynamic compile (the recompile's grid became "3" instead of "((s77 + 31)//32)").
    numel = example.numel()
    size = numel * example.element_size() if isinstance(numel, int) else None
    return f"{dtype}[{shape}]", size
