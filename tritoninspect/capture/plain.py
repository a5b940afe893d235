"""Plain values from live torch objects, for the records: argument values and their expressions, a
graph's readable text, the record of a live kernel (its decorators, autotune configs, heuristics),
the custom op a frame belongs to."""

from __future__ import annotations

from typing import Any

import torch

from tritoninspect.capture import compat
from tritoninspect.capture.scratch import space_hint
from tritoninspect.model.records import KernelRecord


def op_of(op_codes: dict[Any, str], code: Any) -> str | None:
    """The custom op whose implementation `code` is. A code object hashes its
    constants, and Dynamo's transformed code can hold a dict constant: such a
    frame is never an op's implementation."""
    try:
        return op_codes.get(code)
    except TypeError:
        return None


def kernel_record(jf: Any, kid: str, launched: Any = None) -> KernelRecord:
    """The record of the live jit function `jf` (under id `kid`): where it is defined, its decorators,
    constexpr parameters, autotune configs, key and `cache_results`, heuristics. `launched`: the object
    a launch of it used, which picks among several decorated objects around `jf`."""
    user_obj = compat.kernels.user_kernel_object(jf, launched)
    layers = compat.kernels.decorator_stack(user_obj)
    configs, key, heuristics, cache_results, refused = (), (), (), False, ()
    for layer in layers:
        name = compat.kernels.layer_name(layer)
        if name == "autotune":
            configs = tuple(_plain_dict(c) for c in compat.kernels.autotune_configs(layer))
            key = tuple(compat.kernels.autotune_key(layer))
            cache_results = compat.kernels.autotune_cache_results(layer)
            refused = compat.autotune.refused(layer)
        elif name == "heuristics":  # every layer's, outermost first (cut-cross-entropy stacks two)
            heuristics += tuple(n for n in compat.kernels.heuristic_names(layer) if n not in heuristics)
    file, line = compat.kernels.kernel_source(jf)
    return KernelRecord(
        kid, jf.fn.__name__, file, line, tuple(compat.kernels.layer_name(x) for x in layers),
        compat.kernels.constexpr_params(jf), configs, key, heuristics, cache_results, refused,
    )


def subgraph_name(root: torch.fx.GraphModule | None, gm: torch.fx.GraphModule) -> str | None:
    """`gm`'s name as a sub-graph of `root` (a torch.cond branch: "true_graph_0"); None when it is not one."""
    if root is None or gm is root:
        return None
    return next((name for name, mod in root.named_modules() if mod is gm and name), None)


def readable(gm: torch.fx.GraphModule) -> str:
    """The graph module's code as `print_readable` writes it, without strides and devices."""
    try:
        return gm.print_readable(print_output=False, include_stride=False, include_device=False)
    except TypeError:  # older signatures
        return gm.print_readable(print_output=False)


def is_tensor_node(value: Any) -> bool:
    """A tensor argument: a tensor, or a graph node whose example value is one (or unknown)."""
    if isinstance(value, torch.fx.Node):
        example = value.meta.get("val", value.meta.get("example_value"))
        return example is None or isinstance(example, torch.Tensor)
    return isinstance(value, torch.Tensor)


def plain(value: Any) -> Any:
    """A JSON-able form: numbers stay, symbolic values become their expression."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, torch.fx.Node):
        example = value.meta.get("val", value.meta.get("example_value"))
        return str(example) if example is not None else value.name
    if isinstance(value, torch.dtype):
        return str(value).replace("torch.", "")
    return str(value)


def _plain_dict(d: dict[str, Any]) -> dict[str, Any]:
    return {k: plain(v) for k, v in d.items()}


def first_line(exc: BaseException | None) -> str:
    """The exception's message, its first line only."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def cpp_hint(exc: BaseException) -> str:
    """What to add to a failed C++ build's message when Inductor's cache folder has a space in its path."""
    return space_hint(exc, compat.caches.inductor_cache_dir())

