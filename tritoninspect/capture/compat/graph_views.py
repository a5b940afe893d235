"""ATen view and allocation ops in AOT and post-grad FX graphs: what a kernel argument is made from."""

from __future__ import annotations

import operator
from typing import Any

import torch

from tritoninspect.capture.compat import hops

#: Ops that allocate a fresh tensor in a functional graph, and what they fill it with (None: left
#: uninitialised). After AOTAutograd's decompositions `torch.zeros`, `zeros_like` and `ones_like`
#: are `aten.full.default(size, value)` and `torch.empty_like` is `aten.empty.memory_format`
#: (torch/_refs/__init__.py and torch/_decomp, 2.11-2.14; seen in 2.13 graphs).
_ALLOCATIONS = {
    "aten::empty.memory_format": None,
    "aten::empty_strided": None,
    "aten::empty_like": None,
    "aten::new_empty": None,
    "aten::new_empty_strided": None,
    "aten::full": 1,
    "aten::full_like": 1,
    "aten::new_full": 1,
    "aten::zeros": "0",
    "aten::zeros_like": "0",
    "aten::new_zeros": "0",
    "aten::ones": "1",
    "aten::ones_like": "1",
    "aten::new_ones": "1",
    "aten::scalar_tensor": 0,
}


def op_name(node: torch.fx.Node) -> str:
    """`aten::full` / `aten::slice.Tensor` for an OpOverload target, else the node's op or target name.
    (`OpOverload._schema`, private, torch 2.0-2.14.)"""
    schema = getattr(node.target, "_schema", None)
    if schema is None:
        return node.op if node.op != "call_function" else getattr(node.target, "__name__", str(node.target))
    return f"{schema.name}.{schema.overload_name}" if schema.overload_name else schema.name


def is_view(node: Any) -> bool:
    """An ATen view op: its schema's first return aliases its first argument without writing it
    (`Tensor(a) self -> Tensor(a)`; `FunctionSchema.returns[i].alias_info`, private, torch 2.0-2.14)."""
    schema = getattr(getattr(node, "target", None), "_schema", None)
    if schema is None or not schema.returns or not getattr(node, "args", None):
        return False
    alias = schema.returns[0].alias_info
    return alias is not None and not alias.is_write


def is_write_back(user: torch.fx.Node, tensor: torch.fx.Node, hop: torch.fx.Node, arg: str) -> bool:
    """`user` writes what kernel node `hop` made of its argument `arg` back into `tensor`, as
    functionalization does: `aten.copy_(tensor, ...)` into a mutated graph input, or
    `aten.<view>_scatter(tensor, <hop's result for arg>, ...)` into the tensor a mutated view was
    taken from (torch/_subclasses/functional_tensor.py and AOTAutograd's input mutations, 2.11-2.14)."""
    if user.op != "call_function" or not user.args or user.args[0] is not tensor:
        return False
    if user.target is torch.ops.aten.copy_.default:
        return True
    name = op_name(user)
    return name.split(".")[0].endswith("_scatter") and len(user.args) > 1 and hop_result_of(user.args[1]) is not None \
        and user.args[1].args[0] is hop and user.args[1].args[1] == arg


def hop_result_of(node: Any) -> torch.fx.Node | None:
    """For `getitem(functional_hop, name)`, the argument `name` the kernel node was given (its result
    is that tensor after the kernel wrote it: `triton_kernel_wrapper_functional` returns a dict of
    the written arguments, torch 2.11-2.14); None for anything else."""
    if not isinstance(node, torch.fx.Node) or node.op != "call_function" or node.target is not operator.getitem:
        return None
    hop, key = node.args[0], node.args[1] if len(node.args) > 1 else None
    if not isinstance(hop, torch.fx.Node) or hops.hop_form(hop) != "functional" or not isinstance(key, str):
        return None
    value = hops.hop_fields(hop)["kwargs"].get(key)
    return value if isinstance(value, torch.fx.Node) else None


def allocation_fill(node: torch.fx.Node) -> tuple[bool, str | None]:
    """(allocates, fill): whether the node makes a fresh tensor, and the value it fills it with
    ("0", "1", "-inf"...; None: uninitialised)."""
    full = op_name(node)
    key = full if full in _ALLOCATIONS else full.split(".")[0]
    if key not in _ALLOCATIONS:
        return False, None
    fill = _ALLOCATIONS[key]
    if isinstance(fill, int):  # the fill value is that positional argument
        value = node.args[fill] if len(node.args) > fill else node.kwargs.get("fill_value")
        return True, _number(value)
    return True, fill


def _number(value: Any) -> str | None:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, (int, float)):
        return f"{value:g}" if isinstance(value, float) else str(value)
    return None if value is None else str(value)
