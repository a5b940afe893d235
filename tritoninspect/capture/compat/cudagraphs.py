"""CUDA graphs (`--cudagraphs`): reduce-overhead's config, Inductor's skip checks and messages, the CUDA-graph
tree's runs, and which node writes each graph input a compiled graph mutates.

Read in torch 2.13 and the 2.14.1 wheel (the same names); torch 2.11 is read on the GPU machine, and every
name here is looked up with `getattr` so that a missing one turns into a capture problem, not a crash:
- `torch._inductor.list_mode_options("reduce-overhead")` (public, torch 2.0+): `{"triton.cudagraphs": True}`.
- `log_cudagraph_skip_and_bump_counter(msg)` (torch/_inductor/cudagraph_utils.py, imported by name into
  compile_fx.py, output_code.py and cudagraph_trees.py): every skip Inductor logs, at compile time and from
  the tree at run time. Added with the `cudagraph_skips` counter by https://github.com/pytorch/pytorch/pull/118070
  (not checked: the first version that has it).
- `CUDAGraphTreeManager` (torch/_inductor/cudagraph_trees.py, https://github.com/pytorch/pytorch/pull/89146):
  `_run(new_inputs, function_id)`, `record_function`, `execute_node`, `run_eager`, `id_to_mode`,
  `id_to_compile_id` (the last is newer; without it runs carry no compile id).
- `CompiledFxGraph` (torch/_inductor/output_code.py): `disabled_cudagraphs_reason`, `cudagraph_info.
  cudagraph_fail_reasons`, `mutated_inputs`, `mutated_input_idxs`, `partition_maps`, `device_types`.
- Inductor's checks in cudagraph_utils.py: `get_placeholder_info`, `get_mutation_stack_trace`,
  `get_input_storage_mutation_info` / `..._reason` (storage mutation, newer than 2.11 perhaps: looked up),
  and `torch._inductor.utils.any_is_symbolic`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

#: Modules that import `log_cudagraph_skip_and_bump_counter` by name (each binding is patched).
SKIP_LOGGING_MODULES = (
    "torch._inductor.cudagraph_utils",
    "torch._inductor.compile_fx",
    "torch._inductor.output_code",
    "torch._inductor.cudagraph_trees",
)
SKIP_LOGGER = "log_cudagraph_skip_and_bump_counter"
#: Skip messages that are compile-only mode's own doing: every tensor is on the CPU there.
DEVICE_WORDS = ("cpu device", "multiple devices")


@contextlib.contextmanager
def reduce_overhead() -> Iterator[dict[str, Any]]:
    """Inductor's config as `torch.compile(mode="reduce-overhead")` sets it, for the block
    (`torch._inductor.list_mode_options`, public; `config.patch`, torch 2.0+)."""
    import torch._inductor
    import torch._inductor.config as inductor_config

    options = dict(torch._inductor.list_mode_options("reduce-overhead"))
    with inductor_config.patch(options):
        yield options


def skip_logger_patches(on_skip: Callable[[str], None]) -> list[tuple[Any, str, Any]]:
    """(module, name, wrapper) for every binding of Inductor's skip logger: `on_skip(msg)` first, then
    torch's own (which may raise under `cudagraph_or_error`)."""
    import importlib

    patches = []
    for name in SKIP_LOGGING_MODULES:
        module = importlib.import_module(name)
        original = getattr(module, SKIP_LOGGER, None)
        if original is None:
            continue

        def logged(msg: str, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            on_skip(str(msg))
            return _original(msg, *args, **kwargs)

        patches.append((module, SKIP_LOGGER, logged))
    return patches


def tree_manager_class() -> Any:
    """`CUDAGraphTreeManager`, or None where this torch has no CUDA-graph trees."""
    try:
        from torch._inductor.cudagraph_trees import CUDAGraphTreeManager
    except ImportError:
        return None
    return CUDAGraphTreeManager


def tree_function(manager: Any, function_id: Any) -> tuple[str | None, str]:
    """(compile id, "forward" | "backward" | "inference") of one of the tree's functions."""
    mode = getattr(manager, "id_to_mode", {}).get(function_id)
    cid = getattr(manager, "id_to_compile_id", {}).get(function_id)
    part = getattr(mode, "name", "").lower() or "?"
    return (str(cid) if cid is not None else None), part


@dataclass(frozen=True)
class Verdict:
    """What one inner compile decided, read from its compiled graph and its kwargs."""

    #: The compile's `cudagraphs` flag after post_compile: Inductor wrapped the graph for the tree.
    wrapped: bool
    disabled_reason: str | None
    #: `cudagraph_info.cudagraph_fail_reasons` (["mutated inputs", ...]); None when not computed.
    fail_reasons: tuple[str, ...] | None
    mutated: tuple[str, ...]
    mutated_idxs: tuple[int, ...]
    static_idxs: tuple[int, ...]
    placeholders: tuple[str, ...]
    #: `config.graph_partition` (each partition is CUDA-graphed on its own), and how many partitions.
    partition: bool
    partitions: int | None


def verdict(gm: torch.fx.GraphModule, compiled: Any, kwargs: dict[str, Any]) -> Verdict:
    """Inductor's decision for this compile (its `cudagraphs` BoxedBool is set by post_compile, inside
    compile_fx_inner, torch 2.11-2.14)."""
    import torch._inductor.config as inductor_config

    boxed = kwargs.get("cudagraphs")
    info = getattr(compiled, "cudagraph_info", None)
    fails = getattr(info, "cudagraph_fail_reasons", None) if info is not None else None
    maps = getattr(compiled, "partition_maps", None)
    partition = bool(getattr(inductor_config, "graph_partition", False))
    return Verdict(
        wrapped=bool(getattr(boxed, "value", False)),
        disabled_reason=getattr(compiled, "disabled_cudagraphs_reason", None) or None,
        fail_reasons=tuple(fails) if fails is not None else None,
        mutated=tuple(str(n) for n in getattr(compiled, "mutated_inputs", ()) or ()),
        mutated_idxs=tuple(int(i) for i in getattr(compiled, "mutated_input_idxs", ()) or ()),
        static_idxs=tuple(int(i) for i in kwargs.get("static_input_idxs") or ()),
        placeholders=tuple(n.name for n in gm.graph.nodes if n.op == "placeholder"),
        partition=partition,
        partitions=len(maps) if partition and maps is not None else None,
    )


def is_device_reason(text: str) -> bool:
    return any(w in text for w in DEVICE_WORDS)


def predicted_skips(gm: torch.fx.GraphModule, example_inputs: Any, found: Verdict) -> list[tuple[str, str]]:
    """(when, message) per skip Inductor's own checks give this graph, leaving out its device checks (in
    compile-only mode every tensor is on the CPU). `gm` is the final post-grad graph (what Inductor's
    checks read). The order and words are Inductor's: output_code.py (CompiledFxGraph.__init__ and
    cudagraph_post_compile) and cudagraph_trees.py (`_update_non_cudagraph_managed_mutation`)."""
    import torch._inductor.config as inductor_config
    from torch._inductor import cudagraph_utils as cu

    reason = found.disabled_reason
    if reason and not is_device_reason(reason):
        return [("compile", f"skipping cudagraphs due to {reason}")]
    skips: list[tuple[str, str]] = []
    storage_info = getattr(cu, "get_input_storage_mutation_info", None)
    storage_reason = getattr(cu, "get_input_storage_mutation_reason", None)
    if storage_info is not None and storage_reason is not None:
        text = storage_reason(storage_info(gm))
        if text:
            skips.append(("compile", text))
    if not all(isinstance(t, (torch.Tensor, torch.SymInt, torch.Generator)) for t in example_inputs):
        skips.append(("compile", "skipping cudagraphs due to ['non-Tensor inputs']"))
    unmanaged = [i for i in found.mutated_idxs if i not in found.static_idxs]
    if unmanaged:
        text = cu.get_mutation_stack_trace(cu.get_placeholder_info(gm.graph), unmanaged)
        trees = bool(inductor_config.triton.cudagraph_trees)
        deferred = trees and bool(getattr(inductor_config.triton, "cudagraph_support_input_mutation", False))
        skips.append(("run" if deferred else "compile", text))
    return skips


def dynamic(example_inputs: Any) -> bool:
    """Symbolic sizes among the inputs (torch/_inductor/utils.py `any_is_symbolic`, torch 2.11-2.14)."""
    from torch._inductor.utils import any_is_symbolic

    return bool(any_is_symbolic(*example_inputs))


def input_writers(gm: torch.fx.GraphModule, kernel_id: Callable[[Any], str | None]) -> dict[str, list[dict[str, Any]]]:
    """Placeholder name -> what writes it, from the AOT graph before Inductor's passes: its `copy_(input,
    value)` and, behind the value, the user kernels (a `getitem` of `triton_kernel_wrapper_functional`)
    and custom ops (`auto_functionalized`) it comes from; the op that made the value when neither."""
    from tritoninspect.capture.compat import hops
    from tritoninspect.textformats.cudagraphs import stack_site

    placeholders = {n for n in gm.graph.nodes if n.op == "placeholder"}
    found: dict[str, list[dict[str, Any]]] = {}
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target is not torch.ops.aten.copy_.default:
            continue
        target, value = (node.args + (None, None))[:2]
        if target not in placeholders or not isinstance(value, torch.fx.Node):
            continue
        writers = _writers(value, placeholders, kernel_id, hops)
        if not writers:
            made = value if value.op == "call_function" else node
            writers = [{"kind": "aten", "node": made.name, "op": _op_text(made.target),
                        "site": stack_site(made.meta.get("stack_trace"))}]
        found.setdefault(target.name, []).extend(writers)
    return found


def _writers(value: torch.fx.Node, stop: set[torch.fx.Node], kernel_id: Callable[[Any], str | None],
             hops: Any, limit: int = 256) -> list[dict[str, Any]]:
    """The kernels and custom ops behind `value`, walking back through its inputs (at most `limit` nodes)."""
    from tritoninspect.textformats.cudagraphs import stack_site

    seen: set[torch.fx.Node] = set()
    todo = [value]
    writers: list[dict[str, Any]] = []
    while todo and len(seen) < limit:
        node = todo.pop()
        if node in seen or node in stop:
            continue
        seen.add(node)
        source = node.args[0] if node.op == "call_function" and node.args else None
        if isinstance(source, torch.fx.Node) and hops.hop_form(source) == "functional" and len(node.args) > 1:
            fields = hops.hop_fields(source)
            kid = kernel_id(hops.side_table_kernel(fields["kernel_idx"]))
            writers.append({"kind": "kernel", "node": source.name, "kernel_id": kid, "param": str(node.args[1]),
                            "site": stack_site(source.meta.get("stack_trace"))})
            continue
        if isinstance(source, torch.fx.Node) and _auto_functionalized(source):
            op = source.args[0] if source.args else None
            writers.append({"kind": "op", "node": source.name, "op": getattr(getattr(op, "_schema", None), "name", None),
                            "site": stack_site(source.meta.get("stack_trace"))})
            continue
        todo.extend(node.all_input_nodes)
    unique = {(w["kind"], w["node"], w.get("param")): w for w in writers}
    return list(unique.values())


def _auto_functionalized(node: torch.fx.Node) -> bool:
    """`auto_functionalized` / `auto_functionalized_v2`: a custom op with `mutates_args`, functionalized
    (torch/_higher_order_ops/auto_functionalize.py, torch 2.11-2.14)."""
    name = getattr(node.target, "__name__", "") or getattr(node.target, "_name", "")
    return node.op == "call_function" and str(name).startswith("auto_functionalized")


def _op_text(target: Any) -> str:
    name = getattr(getattr(target, "_schema", None), "name", None)
    return str(name) if name else str(getattr(target, "__name__", target))


def kept_out(gm: torch.fx.GraphModule, kernel_id: Callable[[Any], str | None]) -> list[dict[str, Any]]:
    """With graph partitions on (`config.graph_partition`, torch's default in 2.13): the first node Inductor
    keeps out of CUDA graphs, splitting the graph around it (`torch._inductor.utils.
    get_first_incompatible_cudagraph_node`: a CUDA-graph-unsafe op, or a node whose value has unbacked
    sizes, torch 2.11-2.14; looked up), and the first user kernel its value reaches. Without partitions
    Inductor says the same as a skip (compile_fx.py: "disabling cudagraphs due to incompatible op")."""
    import torch._inductor.config as inductor_config
    from torch._inductor import utils
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    from tritoninspect.capture.compat import hops
    from tritoninspect.textformats.cudagraphs import stack_site

    first = getattr(utils, "get_first_incompatible_cudagraph_node", None)
    if first is None or not getattr(inductor_config, "graph_partition", False):
        return []
    node = first(gm)
    if node is None:
        return []
    val = node.meta.get("val")
    unbacked = val is not None and bool(free_unbacked_symbols(val))
    kernel = _kernel_downstream(node, hops)
    target = _op_text(node.target)
    what = "its value has data-dependent (unbacked) sizes" if unbacked else "it cannot be captured in a CUDA graph"
    return [{"kind": "unbacked" if unbacked else "incompatible_op",
             "text": f"{target} runs outside CUDA graphs ({what}): Inductor splits the graph around it",
             "kernel_id": kernel_id(hops.side_table_kernel(hops.hop_fields(kernel)["kernel_idx"])) if kernel else None,
             "site": stack_site(node.meta.get("stack_trace"))}]


def _kernel_downstream(node: torch.fx.Node, hops: Any, limit: int = 256) -> torch.fx.Node | None:
    """The first user-kernel HOP node that `node`'s value reaches (through sizes and ops), else None."""
    seen: set[torch.fx.Node] = set()
    todo = list(node.users)
    while todo and len(seen) < limit:
        user = todo.pop(0)
        if user in seen:
            continue
        seen.add(user)
        if hops.hop_form(user) is not None:
            return user
        todo.extend(user.users)
    return None
