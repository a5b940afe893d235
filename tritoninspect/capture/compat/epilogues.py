"""Epilogue fusion into user kernels: which Inductor nodes read what a user kernel writes, what stops the
kernel taking an epilogue, and Inductor's verdict on each pair.

User-kernel epilogue fusion came with https://github.com/pytorch/pytorch/pull/173662 ("User kernel unary
epilogue fusion", Jan 2026): `ir.UserDefinedTritonKernel.can_fuse_epilogue`, behind
`torch._inductor.config.epilogue_fusion_user_defined_triton_kernel` (off by default), and a branch of
`Scheduler._can_fuse` for an extern node1 (scheduler.py, ~line 7418 in 2.13, ~8180 in 2.14.1). Read in
2.13 and the 2.14.1 wheel; detected by the method, never by the version (the GPU machine's 2.11 says
whether it has it). `wrap_triton(..., output_tile=...)` (https://github.com/pytorch/pytorch/pull/184895)
is in neither 2.13 nor 2.14.1 (checked: no `output_tile` anywhere in either).
- `Scheduler.fuse_nodes(nodes)` (torch 2.11-2.14): the nodes before fusion, where the launches are found.
- `Scheduler.can_fuse(node1, node2, ...)` and `WhyNoFuse.__call__(reason, *args)` (the reason it gives,
  logged only under TORCH_LOGS=fusion): each pair Inductor considers, and why it refused.
- `CppScheduling.can_fuse_vertical` / `CUDACombinedScheduling.can_fuse_vertical`: the device backend's
  own word after Inductor's checks passed (the C++ backend of compile-only mode never fuses into a Triton
  kernel).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Any

#: Device backends whose vertical-fusion check is watched: (module, class, name in the report).
BACKENDS = (
    ("torch._inductor.codegen.cpp", "CppScheduling", "cpp"),
    ("torch._inductor.codegen.cuda_combined_scheduling", "CUDACombinedScheduling", "cuda"),
)


def available() -> bool:
    """This torch can fuse an epilogue into a user kernel."""
    from torch._inductor import ir

    return hasattr(ir.UserDefinedTritonKernel, "can_fuse_epilogue")


def enabled() -> bool:
    import torch._inductor.config as inductor_config

    return bool(getattr(inductor_config, "epilogue_fusion_user_defined_triton_kernel", False))


def scheduler_class() -> Any:
    from torch._inductor.scheduler import Scheduler

    return Scheduler


def why_class() -> Any:
    """`WhyNoFuse` (scheduler.py, torch 2.11-2.14), or None."""
    from torch._inductor import scheduler

    return getattr(scheduler, "WhyNoFuse", None)


def why_text(why: Any, reason: str, args: tuple[Any, ...]) -> str:
    try:
        return reason % args if args else reason
    except (TypeError, ValueError):
        return reason


def backend_classes() -> Iterator[tuple[Any, str]]:
    """(class, name) of each device backend this torch has."""
    for module_name, class_name, name in BACKENDS:
        try:
            cls = getattr(importlib.import_module(module_name), class_name, None)
        except ImportError:
            continue
        if cls is not None and hasattr(cls, "can_fuse_vertical"):
            yield cls, name


def user_kernel(snode: Any) -> Any:
    """The `UserDefinedTritonKernel` a scheduler node launches, else None."""
    from torch._inductor import ir

    node = getattr(snode, "node", None)
    return node if isinstance(node, ir.UserDefinedTritonKernel) else None


def operation_names(snode: Any) -> set[str]:
    try:
        return set(snode.get_operation_names())
    except Exception:  # noqa: BLE001 - a node kind without names
        return set()


def written_buffers(kernel: Any) -> set[str]:
    """The buffers the kernel's launch writes (`mutation_outputs`, torch 2.11-2.14)."""
    return {m.get_name() for m in getattr(kernel, "mutation_outputs", ())}


def reads(snode: Any) -> set[str]:
    return {d.name for d in getattr(getattr(snode, "read_writes", None), "reads", ())}


def ops(snode: Any) -> tuple[str, ...]:
    """The ATen ops a scheduler node computes (its IR node's FX origins), e.g. ("relu",)."""
    node = getattr(snode, "node", None)
    names = []
    for origin in getattr(node, "origins", ()):
        target = getattr(origin, "target", None)
        packet = getattr(target, "_overloadpacket", None)
        if packet is not None:
            names.append(str(packet).removeprefix("aten."))
    return tuple(sorted(dict.fromkeys(names)))


def kernel_object(kernel: Any) -> Any:
    """The user's kernel object behind an IR node (`kernel_idx` into Dynamo's side table)."""
    from tritoninspect.capture.compat import hops

    return hops.side_table_kernel(kernel.kernel_idx)


def blockers(kernel: Any) -> tuple[str, ...]:
    """What stops this kernel taking any epilogue, with fusion on: torch's own `can_fuse_epilogue` asked
    with the config set, then, when it refuses, which of its checks (ir.py, 2.13 and 2.14.1) fails."""
    import torch._inductor.config as inductor_config

    with inductor_config.patch(epilogue_fusion_user_defined_triton_kernel=True):
        if kernel.can_fuse_epilogue():
            return ()
    found: list[str] = []
    accesses = getattr(kernel, "arg_accesses", None)
    if accesses is not None and not getattr(accesses, "can_fuse_epilogue", True):
        found.append(_access_blocker(accesses))
    stores = getattr(getattr(kernel, "kernel_stores", None), "stores", None)
    if stores is not None and len(stores) != 1:
        found.append(f"it has {len(stores)} tl.store calls (Inductor rewrites the value of a single one)")
    if not found and not _fresh_output(kernel):
        found.append("the tensor it writes is not a fresh torch.empty (the epilogue would see the old values "
                     "where the kernel does not store)")
    return tuple(found) or ("torch's check refused it (UserDefinedTritonKernel.can_fuse_epilogue)",)


def _access_blocker(accesses: Any) -> str:
    """Which of `analyze_kernel_access`'s conditions failed (triton_kernel_wrap.py, 2.13 and 2.14.1)."""
    rw = getattr(accesses, "read_writes", None)
    writes = sorted({d.name for d in getattr(rw, "writes", ())})
    read = {d.name for d in getattr(rw, "reads", ())}
    if len(writes) != 1:
        return f"it writes {len(writes)} tensors ({', '.join(writes)}); an epilogue needs exactly one"
    if writes[0] in read:
        return f"it reads {writes[0]} as well as writing it"
    return f"it writes {writes[0]} more than once"


def _fresh_output(kernel: Any) -> bool:
    """The written tensor is a fresh empty allocation (a Pointwise ComputedBuffer with zero-size ranges)."""
    from torch._inductor import ir

    args = getattr(kernel, "mutable_args", ())
    if len(args) != 1:
        return False
    box = args[0]
    data = getattr(getattr(getattr(box, "data", None), "data", None), "data", None)
    return (isinstance(box, ir.TensorBox) and isinstance(getattr(box, "data", None), ir.StorageBox)
            and isinstance(getattr(box.data, "data", None), ir.ComputedBuffer) and isinstance(data, ir.Pointwise)
            and all(r == 0 for r in data.ranges))


def wrap_method(cls: Any, name: str, around: Callable[..., Any]) -> tuple[Any, str, Any]:
    """(cls, name, wrapper) where wrapper(self, *args) = around(original, self, *args)."""
    original = getattr(cls, name)

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        return around(original, self, *args, **kwargs)

    return cls, name, wrapper
