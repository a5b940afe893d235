"""The recorder's small helpers: plain values from live torch objects, kernel records, the
log handlers it attaches, and a scoped environment variable."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

import torch

from tritoninspect.capture import compat
from tritoninspect.capture.records import KernelRecord, LaunchRecord


def _op_of(op_codes: dict[Any, str], code: Any) -> str | None:
    """The custom op whose implementation `code` is. A code object hashes its
    constants, and Dynamo's transformed code can hold a dict constant: such a
    frame is never an op's implementation."""
    try:
        return op_codes.get(code)
    except TypeError:
        return None


class _Handler(logging.Handler):
    def __init__(self, callback: Any) -> None:
        super().__init__(logging.DEBUG)
        self.callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        self.callback(record)


class _FallbackFilter(logging.Filter):
    """Records the mutation-analysis fallback warning and keeps it off the
    console: the report states it per kernel, with its cause."""

    def __init__(self, callback: Any) -> None:
        super().__init__()
        self.callback = callback

    def filter(self, record: logging.LogRecord) -> bool:
        if compat.dynamo.MUTATION_FALLBACK_TEXT in record.getMessage():
            self.callback(record)
            return False
        return True


def _kernel_record(jf: Any, kid: str) -> KernelRecord:
    user_obj = compat.kernels.user_kernel_object(jf)
    layers = compat.kernels.decorator_stack(user_obj)
    configs, key, heuristics = (), (), ()
    for layer in layers:
        name = compat.kernels.layer_name(layer)
        if name == "autotune":
            configs = tuple(_plain_dict(c) for c in compat.kernels.autotune_configs(layer))
            key = tuple(compat.kernels.autotune_key(layer))
        elif name == "heuristics":
            heuristics = tuple(compat.kernels.heuristic_names(layer))
    file, line = compat.kernels.kernel_source(jf)
    return KernelRecord(
        kid, jf.fn.__name__, file, line, tuple(compat.kernels.layer_name(x) for x in layers),
        compat.kernels.constexpr_params(jf), configs, key, heuristics,
    )


def subgraph_name(root: torch.fx.GraphModule | None, gm: torch.fx.GraphModule) -> str | None:
    """`gm`'s name as a sub-graph of `root` (a torch.cond branch: "true_graph_0"); None when it is not one."""
    if root is None or gm is root:
        return None
    return next((name for name, mod in root.named_modules() if mod is gm and name), None)


def _readable(gm: torch.fx.GraphModule) -> str:
    try:
        return gm.print_readable(print_output=False, include_stride=False, include_device=False)
    except TypeError:  # older signatures
        return gm.print_readable(print_output=False)


def _is_tensor_node(value: Any) -> bool:
    if isinstance(value, torch.fx.Node):
        example = value.meta.get("val", value.meta.get("example_value"))
        return example is None or isinstance(example, torch.Tensor)
    return isinstance(value, torch.Tensor)


def _plain(value: Any) -> Any:
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
    return {k: _plain(v) for k, v in d.items()}


def _with_count(launch: LaunchRecord, count: int) -> LaunchRecord:
    import dataclasses

    return dataclasses.replace(launch, count=count)


def _first_line(exc: BaseException | None) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


@contextlib.contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old
