"""Kernel resources per autotune config (`--resources`): registers, shared memory, spills.

While capturing, the recorder keeps one `LaunchTemplate` per kernel: the live
kernel and its argument types and values, from the first HOP node that
launches it (which also holds every autotune config), else from its first
run-time launch (a kernel inside a custom op, or eager). After the run,
`measure` compiles each template once per config for the active target: on a
GPU, for and loaded on that GPU; in compile-only mode, for the stub's target
(`--target`, default sm_90) with Triton's own toolchain, registers read with
the cuobjdump bundled in the triton wheel. All private Triton calls are in
compat/triton_compile.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from tritoninspect.capture import compat
from tritoninspect.model.records import Resources

#: JITFunction.run keywords that are not kernel arguments or compile options.
_RUN_ONLY = frozenset({"grid", "warmup", "stream"})


@dataclass
class LaunchTemplate:
    """Enough of one launch to compile the kernel again, for every config."""

    #: The innermost JITFunction.
    kernel: Any
    #: By parameter name: a torch.dtype for a tensor, the value otherwise.
    args: dict[str, Any]
    #: Autotune configs (kwargs plus launch options), or one {} without autotune.
    configs: list[dict[str, Any]] = field(default_factory=lambda: [{}])
    #: True when made from a run-time launch, so a HOP node's template replaces it.
    from_launch: bool = False


def hop_template(kernel_obj: Any, kwargs: Mapping[str, Any], constants: Mapping[str, Any],
                 tma: Mapping[str, Any]) -> LaunchTemplate | None:
    """From a HOP node: its kwargs and side-table constants; the configs of the
    kernel object Dynamo stored (heuristics already folded in). None for TMA
    descriptors, which a dtype cannot stand for."""
    jf = compat.kernels.innermost_jit(kernel_obj)
    if jf is None or tma:
        return None
    args = {name: compat.triton_compile.launch_value(value) for name, value in {**kwargs, **constants}.items()}
    return LaunchTemplate(jf, args, compat.triton_compile.config_dicts(kernel_obj))


def launch_template(kernel: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> LaunchTemplate | None:
    """From a `JITFunction.run(*args, grid=..., **kwargs)` launch: positional and
    named arguments by parameter name; the rest are launch options (one config)."""
    names = list(getattr(kernel, "arg_names", ()))
    if len(args) > len(names):
        return None
    bound = dict(zip(names, args))
    bound.update({k: v for k, v in kwargs.items() if k in names})
    options = {k: v for k, v in kwargs.items() if k not in names and k not in _RUN_ONLY and v is not None}
    values = {k: v.dtype if isinstance(v, torch.Tensor) else v for k, v in bound.items()}
    if any(not _plain_arg(v) for v in values.values()):
        return None  # e.g. a TensorDescriptor
    return LaunchTemplate(kernel, values, [options], from_launch=True)


def _plain_arg(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str, torch.dtype)) or hasattr(value, "value")


def measure(
    templates: Mapping[str, LaunchTemplate], *, gpu: bool
) -> tuple[dict[str, list[Resources]], list[tuple[str, str]]]:
    """Compile every kernel once per config; (kernel id -> what each config uses, problems).
    A config that fails to compile becomes a problem, and the others go on."""
    records: dict[str, list[Resources]] = {}
    problems: list[tuple[str, str]] = []
    for kernel_id, template in templates.items():
        for config in template.configs:
            try:
                measured = _measure_one(template, config, gpu=gpu)
            except Exception as exc:  # noqa: BLE001 - one kernel must not sink the report
                name = getattr(getattr(template.kernel, "fn", None), "__name__", kernel_id)
                problems.append(("resources", f"{name} [{_label(config)}]: could not compile: {_error_text(exc)}"))
            else:
                records.setdefault(kernel_id, []).append(measured)
    return records, problems


def _measure_one(template: LaunchTemplate, config: dict[str, Any], *, gpu: bool) -> Resources:
    names = set(template.kernel.arg_names)
    args = {**template.args, **{k: v for k, v in config.items() if k in names}}
    options = {k: v for k, v in config.items() if k not in names}
    compiled = compat.triton_compile.compile_kernel(template.kernel, args, options)
    meta = compat.triton_compile.compiled_metadata(compiled)
    usage = compat.triton_compile.loaded_kernel_usage if gpu else compat.triton_compile.cubin_usage
    registers, spills = usage(compiled)
    return Resources(
        config={k: _json(v) for k, v in config.items()}, target=meta["target"],
        source="gpu" if gpu else f"compiled for {meta['target']}",
        registers=registers, shared=meta["shared"], spills=spills,
        num_warps=meta["num_warps"], num_stages=meta["num_stages"],
    )


def _error_text(exc: BaseException) -> str:
    """The whole message, its last line (Triton's compile errors end with the error, after
    the place and the source) first, so that a one-line view still says what failed."""
    lines = str(exc).strip().splitlines()
    if len(lines) <= 1:
        return f"{type(exc).__name__}: {lines[0] if lines else ''}"
    return f"{type(exc).__name__}: {lines[-1]}\n" + "\n".join(lines)


def _label(config: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.items()) or "as launched"


def _json(value: Any) -> Any:
    return value if isinstance(value, (bool, int, float, str)) or value is None else str(value)
