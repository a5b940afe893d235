"""Plain records of the evidence the hazard analyses read (issue 24; `analyse/hazards/`).

Gathered while the compile is alive (`capture/hazards.py`, private torch access through
`capture/compat/`), saved with the rest of the capture (`Capture.hazards`), and read by small
pure analyses that never import torch. Every record says the compile id it was seen in.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class AutotuneSettings:
    """What one `triton.autotune` object holds: the user's, or the one in Dynamo's side table."""

    configs: int
    key: tuple[str, ...] = ()
    reset_to_zero: tuple[str, ...] = ()
    restore_value: tuple[str, ...] = ()
    #: `Autotuner(pre_hook=...)` / `post_hook=...` given by the user.
    pre_hook: bool = False
    post_hook: bool = False
    #: Configs carrying a `Config(pre_hook=...)`.
    config_pre_hooks: int = 0
    #: `prune_configs_by`: the functions' names, and `top_k`.
    early_config_prune: str | None = None
    perf_model: str | None = None
    top_k: float | None = None
    #: A benchmark of the user's own (`do_bench=`, or warmup/rep/use_cuda_graph), by name.
    do_bench: str | None = None
    warmup: int | None = None
    rep: int | None = None
    use_cuda_graph: bool = False


@dataclass(frozen=True)
class KernelSource:
    """A user kernel's body as written (`JITFunction.src`, from its `def`) and the line of that `def`."""

    def_line: int | None
    source: str
    #: Module globals the body names whose values are constexprs, numbers, bools or strings
    #: (`_CASTING_MODE_NONE = tl.constexpr(-1)`): what its `if`s test against. None: not recorded.
    constants: dict[str, Any] | None = None


@dataclass(frozen=True)
class SideTableKernel:
    """The kernel object Dynamo stored for a launch (what Inductor compiles), compared with the user's."""

    compile_id: str
    kernel_id: str
    #: The Dynamo graph node of the launch.
    node: str
    #: The side table holds the user's own decorated object (not one Dynamo rebuilt).
    users_object: bool
    #: Its autotune settings; None for a bare `@triton.jit` function.
    autotune: AutotuneSettings | None = None
    #: The user object's layers Dynamo folded away (e.g. "heuristics"), outermost first.
    folded: tuple[str, ...] = ()


@dataclass(frozen=True)
class TensorArg:
    """One tensor argument of a launch: its layout and the storage it lives in."""

    param: str
    dtype: str
    shape: tuple[Any, ...]
    stride: tuple[Any, ...]
    #: Elements from the start of its storage (symbolic sizes as text).
    offset: Any
    #: "s0", "s1", ...: the same token means the same storage, within one `ArgLayout`.
    storage: str
    #: The storage's size in elements of this dtype (None when symbolic or unknown).
    storage_elements: int | None = None


@dataclass(frozen=True)
class ArgLayout:
    """The tensor arguments of one launch of a user kernel as one stage saw them.

    "dynamo": the Dynamo graph node (what eager Triton gets: Dynamo traced the user's own tensors);
    "runtime": what Inductor's compiled launch passed, read at the launch.
    """

    compile_id: str
    part: str
    stage: str
    kernel_id: str
    #: The graph node, or for "runtime" the output-code kernel name and the launch's index ("k_0#1").
    where: str
    args: tuple[TensorArg, ...] = ()
    #: "dynamo": the launch's Python scalars and how eager Triton types them (`mangle_type`), e.g. {"scale": "fp32"}.
    scalar_types: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CloneCause:
    """Facts about one argument functionalization clones (`tensors_to_clone`), read from the post-grad
    graph before Inductor's re-inplacing decides whether the clone stays."""

    compile_id: str
    part: str
    node: str
    kernel_id: str
    param: str
    #: The tensor is a graph input.
    graph_input: bool = False
    #: It shares its storage with a graph input but is not one (a view of an input).
    view_of_input: bool = False
    #: It is a view: a storage offset, or fewer elements than its storage holds.
    view: bool = False
    #: Nodes after the launch that read it, or a view of its storage.
    read_after: tuple[str, ...] = ()
    #: Other arguments of the same launch that are the same tensor.
    same_tensor_as: tuple[str, ...] = ()


@dataclass(frozen=True)
class CloneSource:
    """How the final post-grad graph gives a kernel argument its copy: `clone_preserve_strides`
    (`as_strided(clone(as_strided(x, [needed], [1], 0)))`), which copies `x`'s storage from its
    start to the end of the view."""

    compile_id: str
    part: str
    #: The final graph's launch node.
    node: str
    kernel_id: str
    param: str
    #: The node cloned (the kernel's tensor before the copy) and the as_strided node that reads it.
    source: str
    as_strided: str
    #: The tensor cloned: its storage offset and size in elements, and what the copy reads.
    view_offset: int | None = None
    view_elements: int | None = None
    copied_elements: int | None = None
    itemsize: int | None = None
    #: The cloned tensor's storage belongs to a graph input.
    of_input: bool = False


@dataclass(frozen=True)
class StorageOverread:
    """Inductor lowered an `as_strided` to a view that reaches past the buffer it was resolved against
    (what pytorch issues 192219 and 192226 describe): the copy reads memory never allocated to it."""

    compile_id: str
    part: str
    #: The FX node being lowered (an as_strided of the final post-grad graph).
    node: str
    #: Inductor's buffer, its size, and the elements the view needs (offset + extent).
    buffer: str
    allocated: int | None
    needed: int | None


@dataclass(frozen=True)
class AnalysisTime:
    """One run of torch's mutation analysis (`identify_accessed_tensors`) for a kernel."""

    compile_id: str
    kernel_id: str | None
    seconds: float
    #: It raised and torch assumed every input is written.
    fell_back: bool = False


@dataclass
class HazardRecords:
    """Everything the hazard analyses read, beside the rest of the capture."""

    #: Kernel id -> the user's own `@triton.autotune` settings.
    user_autotune: dict[str, AutotuneSettings] = field(default_factory=dict)
    #: Kernel id -> its source (the analyses read how it uses its parameters).
    kernel_sources: dict[str, KernelSource] = field(default_factory=dict)
    side_table: list[SideTableKernel] = field(default_factory=list)
    layouts: list[ArgLayout] = field(default_factory=list)
    clone_causes: list[CloneCause] = field(default_factory=list)
    clone_sources: list[CloneSource] = field(default_factory=list)
    overreads: list[StorageOverread] = field(default_factory=list)
    analysis_times: list[AnalysisTime] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not any(getattr(self, f.name) for f in dataclasses.fields(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HazardRecords:
        """The records from `dataclasses.asdict` output (a saved capture's `hazards`)."""
        return cls(
            user_autotune={k: _settings(v) for k, v in data.get("user_autotune", {}).items()},
            kernel_sources={k: _plain(KernelSource, v) for k, v in data.get("kernel_sources", {}).items()},
            side_table=[_side_table(v) for v in data.get("side_table", ())],
            layouts=[_layout(v) for v in data.get("layouts", ())],
            clone_causes=[_plain(CloneCause, v) for v in data.get("clone_causes", ())],
            clone_sources=[_plain(CloneSource, v) for v in data.get("clone_sources", ())],
            overreads=[_plain(StorageOverread, v) for v in data.get("overreads", ())],
            analysis_times=[_plain(AnalysisTime, v) for v in data.get("analysis_times", ())],
        )


def _plain(cls: type, data: dict[str, Any]) -> Any:
    values = {}
    for f in dataclasses.fields(cls):
        value = data.get(f.name, f.default)
        values[f.name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)


def _settings(data: dict[str, Any]) -> AutotuneSettings:
    return _plain(AutotuneSettings, data)  # type: ignore[no-any-return]


def _side_table(data: dict[str, Any]) -> SideTableKernel:
    record = _plain(SideTableKernel, data)
    autotune = data.get("autotune")
    return dataclasses.replace(record, autotune=_settings(autotune) if autotune else None)


def _layout(data: dict[str, Any]) -> ArgLayout:
    args = tuple(_plain(TensorArg, a) for a in data.get("args", ()))
    return dataclasses.replace(_plain(ArgLayout, data), args=args, scalar_types=dict(data.get("scalar_types", {})))
