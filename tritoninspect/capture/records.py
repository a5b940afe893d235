"""Plain records of one capture: what the live torch objects said, as data.

Capture turns graphs, side-table kernels, log records and launches into these
records while the compile is alive; analyses read only these, so they can be
tested on saved captures without compiling anything (tests/fixtures/).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

CAPTURE_FORMAT = 1


@dataclass(frozen=True)
class KernelRecord:
    """A user kernel, resolved from the side table or a triton_op registration."""

    id: str
    name: str
    file: str | None
    line: int | None
    decorators: tuple[str, ...]
    constexpr_params: tuple[str, ...]
    autotune_configs: tuple[dict[str, Any], ...] = ()
    autotune_key: tuple[str, ...] = ()
    heuristics: tuple[str, ...] = ()


@dataclass(frozen=True)
class NodeRecord:
    """A graph node that launches a user kernel or calls a custom op."""

    compile_id: str
    stage: str
    part: str
    subgraph: str
    node: str
    #: "mutation" / "functional" for the HOPs, "op" for a custom-op call.
    form: str
    kernel_id: str | None = None
    #: For "op" nodes the op called; for HOP nodes the triton_op it came from.
    op: str | None = None
    is_triton_op: bool = False
    grid: tuple[tuple[Any, ...], ...] | None = None
    constexprs: dict[str, Any] | None = None
    #: Other non-tensor arguments (ints, floats, SymInts), e.g. n=64 or n=s77.
    scalars: dict[str, Any] | None = None
    tensors_to_clone: tuple[str, ...] | None = None


@dataclass(frozen=True)
class GraphRecord:
    compile_id: str
    stage: str
    part: str
    code: str
    op_count: int
    subgraphs: tuple[str, ...] = ()


@dataclass(frozen=True)
class OutputKernel:
    """A user kernel defined in an output-code module (`# Original path:`)."""

    inductor_name: str
    name: str
    file: str | None
    line: int | None
    launched: bool


@dataclass(frozen=True)
class OutputCodeRecord:
    compile_id: str
    part: str
    code: str
    user_kernels: tuple[OutputKernel, ...] = ()
    extern_ops: tuple[str, ...] = ()


@dataclass(frozen=True)
class BreakRecord:
    compile_id: str
    reason: str
    file: str | None
    line: int | None
    user_stack: tuple[str, ...] = ()
    frame_skipped: bool = False


@dataclass(frozen=True)
class RecompileRecord:
    compile_id: str
    reason: str


@dataclass(frozen=True)
class FallbackRecord:
    """Mutation analysis fell back to "every input is mutated"."""

    compile_id: str
    kernel_id: str | None
    cause: str


@dataclass(frozen=True)
class LaunchRecord:
    """Launches of one kernel from one place at run time, counted."""

    #: "jit" (a Triton launch of the user's kernel) or "inductor" (Inductor's copy).
    via: str
    kernel_id: str | None
    inductor_name: str | None
    custom_op: str | None
    in_graph: bool
    compile_id: str | None
    count: int = 1


@dataclass
class Capture:
    """Everything one `tritoninspect graph` run saw."""

    meta: dict[str, Any] = field(default_factory=dict)
    kernels: dict[str, KernelRecord] = field(default_factory=dict)
    nodes: list[NodeRecord] = field(default_factory=list)
    graphs: list[GraphRecord] = field(default_factory=list)
    output_code: list[OutputCodeRecord] = field(default_factory=list)
    breaks: list[BreakRecord] = field(default_factory=list)
    recompiles: list[RecompileRecord] = field(default_factory=list)
    fallbacks: list[FallbackRecord] = field(default_factory=list)
    launches: list[LaunchRecord] = field(default_factory=list)
    #: (source, message) pairs for things capture could not do.
    problems: list[tuple[str, str]] = field(default_factory=list)
    format: int = CAPTURE_FORMAT

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=1, default=repr)

    @classmethod
    def from_json(cls, text: str) -> Capture:
        data = json.loads(text)
        return cls(
            meta=data["meta"],
            kernels={k: _rec(KernelRecord, v) for k, v in data["kernels"].items()},
            nodes=[_rec(NodeRecord, v) for v in data["nodes"]],
            graphs=[_rec(GraphRecord, v) for v in data["graphs"]],
            output_code=[_output_code(v) for v in data["output_code"]],
            breaks=[_rec(BreakRecord, v) for v in data["breaks"]],
            recompiles=[_rec(RecompileRecord, v) for v in data["recompiles"]],
            fallbacks=[_rec(FallbackRecord, v) for v in data["fallbacks"]],
            launches=[_rec(LaunchRecord, v) for v in data["launches"]],
            problems=[tuple(p) for p in data["problems"]],
            format=data["format"],
        )


def _rec(cls: type, data: dict[str, Any]) -> Any:
    values = {}
    for f in dataclasses.fields(cls):
        value = data.get(f.name, f.default)
        if f.name == "grid" and value is not None:
            value = tuple(tuple(g) for g in value)
        elif isinstance(value, list):
            value = tuple(value)
        values[f.name] = value
    return cls(**values)


def _output_code(data: dict[str, Any]) -> OutputCodeRecord:
    kernels = tuple(_rec(OutputKernel, k) for k in data.get("user_kernels", ()))
    return dataclasses.replace(_rec(OutputCodeRecord, data), user_kernels=kernels)
