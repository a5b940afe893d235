"""Plain records of one export capture: what torch.export and AOTInductor said, as data.

`capture/export.py` fills an `ExportCapture` while the exported program and the package
are alive; `analyse/export.py` turns it into the report without torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tritoninspect.model.records import Failure, KernelRecord


@dataclass(frozen=True)
class ExportNode:
    """A node of the exported graph that launches a user kernel or calls a custom op."""

    node: str
    #: "hop" (triton_kernel_wrapper_mutation/functional), "op" (a custom op or triton_op call).
    form: str
    kernel_id: str | None = None
    #: The op called ("ns::name"), for "op" nodes.
    op: str | None = None
    is_triton_op: bool = False
    kernel_idx: int | None = None
    grid: tuple[tuple[Any, ...], ...] | None = None
    constexprs: dict[str, Any] | None = None
    scalars: dict[str, Any] | None = None


@dataclass(frozen=True)
class EagerLaunch:
    """A user-kernel launch seen while the model ran eagerly on the example inputs."""

    kernel_id: str
    #: The custom op (or triton_op) it ran inside, when any.
    custom_op: str | None
    constexprs: dict[str, Any]
    scalars: dict[str, Any]
    count: int = 1


@dataclass(frozen=True)
class InputDims:
    """One user input tensor: its sizes in the example, and in the exported program."""

    name: str
    example: tuple[int, ...]
    #: As the exported graph's placeholder has them: an int, or a symbol such as "s6".
    exported: tuple[str, ...]
    #: What was asked per dimension: "static", "auto", or the Dim's name.
    requested: tuple[str, ...]


@dataclass
class AotiRecord:
    """What AOTInductor did: built a package or not, loaded and ran it or not."""

    #: "built", "failed", "unavailable" (compile-only mode cannot build these kernels).
    status: str
    device: str
    files: list[tuple[str, int]] = field(default_factory=list)
    #: File base name -> text: the generated C++ wrapper and its extern-node JSON.
    code: dict[str, str] = field(default_factory=dict)
    build_time_s: float | None = None
    loaded: bool | None = None
    matches_eager: bool | None = None
    max_abs_diff: float | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class ExportCapture:
    """Everything one `tritoninspect export` run recorded."""

    meta: dict[str, Any] = field(default_factory=dict)
    strict: bool = False
    #: "--strict", "--non-strict" or "torch default".
    strict_source: str = "torch default"
    #: How dynamic shapes were asked for: "none", "auto", or "target".
    dynamic: str = "none"
    kernels: dict[str, KernelRecord] = field(default_factory=dict)
    #: Custom ops the model called eagerly -> is it a triton_op.
    ops: dict[str, bool] = field(default_factory=dict)
    #: Custom ops without a fake (meta) implementation.
    ops_without_fake: list[str] = field(default_factory=list)
    launches: list[EagerLaunch] = field(default_factory=list)
    graph_code: str | None = None
    #: call_function nodes of the exported graph.
    op_count: int = 0
    signature: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    #: The signature after `run_decompositions()` (what AOTInductor lowers): kernel writes show as mutations.
    decomposed_signature: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    #: Kernel id -> the arguments its functional HOP clones (it writes them), after run_decompositions().
    writes: dict[str, list[str]] = field(default_factory=dict)
    tensors: dict[str, str] = field(default_factory=dict)
    ranges: dict[str, tuple[str, str]] = field(default_factory=dict)
    inputs: list[InputDims] = field(default_factory=list)
    nodes: list[ExportNode] = field(default_factory=list)
    export_time_s: float | None = None
    aoti: AotiRecord | None = None
    failure: Failure | None = None
    problems: list[tuple[str, str]] = field(default_factory=list)
