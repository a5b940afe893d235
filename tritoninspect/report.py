"""The report: one frozen, versioned model that every renderer and diff reads.

The JSON form (`Report.to_json`) is a public interface documented in the
README. Change it only by bumping `SCHEMA_VERSION` and noting why below.

Schema changelog:
  1  first version: meta, graphs, graph_breaks, recompiles, kernels with
     entries and occurrences, opaque_ops, diagnostics; Graph.compile_time_s.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from enum import Enum
from typing import Any

from tritoninspect.errors import ReportError

SCHEMA_VERSION = 1


class Entry(str, Enum):
    """How a kernel was seen by torch.compile."""

    #: A raw launch traced as `triton_kernel_wrapper_mutation/functional`.
    HOP = "hop"
    #: Inside a `torch.library.triton_op`, decomposed into the HOP before Inductor.
    TRITON_OP = "triton_op"
    #: Inside an opaque `torch.library.custom_op`: seen only when it launched.
    CUSTOM_OP = "custom_op"
    #: Launched outside every compiled graph (graph break, disabled region).
    EAGER = "eager"


class Mode(str, Enum):
    """What produced the report."""

    GPU = "gpu"
    COMPILE_ONLY = "compile-only"


#: Stages in pipeline order. `runtime` is a kernel launch seen while running.
STAGES = ("dynamo", "aot_forward", "aot_backward", "aot_inference", "post_grad", "output_code", "runtime")


@dataclass(frozen=True)
class Meta:
    tool: str
    tool_version: str
    mode: str
    device: str
    torch: str
    triton: str
    target: str
    python: str
    stage: str
    dynamic: bool | None
    backward: bool
    #: The first call's inputs, in --inputs notation.
    inputs: tuple[str, ...] = ()
    #: How many times the model was called (one per example input set).
    calls: int = 1


@dataclass(frozen=True)
class Graph:
    """One captured graph or output-code module."""

    compile_id: str
    stage: str
    #: `forward`, `backward` or `inference` for AOT and Inductor stages; "" for Dynamo.
    part: str
    #: Readable text: FX code for graphs, Python source for output code.
    code: str
    op_count: int
    #: Subgraph modules (e.g. autograd.Function bodies) inside a Dynamo graph.
    subgraphs: tuple[str, ...] = ()
    #: Seconds (wall) the compiler spent on this graph: for `dynamo`, the backend
    #: call (AOTAutograd + Inductor, every part); for `aot_*`, Inductor's compile
    #: of that part. None where nothing was compiled (other stages, --stage aot).
    compile_time_s: float | None = None


@dataclass(frozen=True)
class GraphBreak:
    compile_id: str
    reason: str
    file: str | None
    line: int | None
    #: The user's frames, innermost last, as "file:line in function".
    user_stack: tuple[str, ...] = ()
    #: True when Dynamo skipped the whole frame and ran it eagerly.
    frame_skipped: bool = False


@dataclass(frozen=True)
class Recompile:
    compile_id: str
    reason: str


@dataclass(frozen=True)
class MutationFallback:
    """Mutation analysis failed, so torch assumed every input is mutated."""

    compile_id: str
    cause: str


@dataclass(frozen=True)
class Occurrence:
    """One place a kernel was seen: a graph node, an output-code launch or a run-time launch."""

    compile_id: str | None
    stage: str
    entry: str
    node: str | None = None
    #: The custom op or triton_op the kernel ran in, e.g. "mylib::myadd".
    custom_op: str | None = None
    #: One grid per autotune config; elements are ints or symbolic expressions.
    grid: tuple[tuple[Any, ...], ...] | None = None
    #: Values of the kernel's `tl.constexpr` parameters at this launch.
    constexprs: dict[str, Any] | None = None
    #: Other non-tensor arguments (ints, floats; symbolic ones as expressions).
    scalars: dict[str, Any] | None = None
    tensors_to_clone: tuple[str, ...] | None = None
    mutation_analysis_fallback: str | None = None
    #: For graph occurrences: is there a launch of this kernel in the same
    #: compile id's output code? None when no output code was captured.
    in_output_code: bool | None = None
    #: Run-time launches: how many times.
    launches: int | None = None
    #: Inductor's name for the kernel in the output code (e.g. add_kernel_0).
    inductor_name: str | None = None
    #: The subgraph module holding the node ("" for the top level), e.g. fwd_body_0.
    subgraph: str | None = None
    #: forward / backward / inference for AOT, post-grad and output-code occurrences.
    part: str | None = None


@dataclass(frozen=True)
class Kernel:
    """One distinct user kernel, keyed by its innermost JIT function."""

    id: str
    name: str
    file: str | None
    line: int | None
    #: Decorators as the user wrote them, outermost first: "autotune", "heuristics", "jit".
    decorators: tuple[str, ...]
    constexpr_params: tuple[str, ...]
    autotune_configs: tuple[dict[str, Any], ...] = ()
    autotune_key: tuple[str, ...] = ()
    heuristics: tuple[str, ...] = ()
    entries: tuple[str, ...] = ()
    occurrences: tuple[Occurrence, ...] = ()
    #: Compile ids whose graphs hold the kernel but whose output code has no launch of it.
    missing_from_output_code: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpaqueOp:
    """A custom op that Inductor calls as a black box, per graph node."""

    compile_id: str
    stage: str
    op: str
    node: str
    #: Kernels seen launching inside it at run time.
    kernels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Diagnostic:
    """Something tritoninspect could not do or check; the run went on."""

    severity: str  # "warning" | "error"
    source: str
    message: str


@dataclass(frozen=True)
class Report:
    meta: Meta
    graphs: tuple[Graph, ...] = ()
    graph_breaks: tuple[GraphBreak, ...] = ()
    recompiles: tuple[Recompile, ...] = ()
    kernels: tuple[Kernel, ...] = ()
    opaque_ops: tuple[OpaqueOp, ...] = ()
    mutation_fallbacks_unattributed: tuple[MutationFallback, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON-able form; `schema_version` comes first."""
        body = dataclasses.asdict(self)
        return {"schema_version": body.pop("schema_version"), **body}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=str)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ReportError(
                f"report has schema_version {version!r}; this tritoninspect reads version {SCHEMA_VERSION}"
            )
        try:
            return _build(cls, data)
        except (TypeError, KeyError, ValueError) as exc:
            raise ReportError(f"report does not match schema {SCHEMA_VERSION}: {exc}") from exc

    @classmethod
    def from_json(cls, text: str) -> Report:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ReportError(f"not a JSON report: {exc}") from exc
        if not isinstance(data, dict):
            raise ReportError("not a JSON report: the top level is not an object")
        return cls.from_dict(data)

    def kernel(self, name: str) -> Kernel | None:
        """The first kernel with this name (or id)."""
        return next((k for k in self.kernels if name in (k.name, k.id)), None)


#: (owner, field) -> (record class, is a list). Keyed by owner because the
#: same name can mean different things (OpaqueOp.kernels holds names).
_NESTED: dict[tuple[type, str], tuple[type, bool]] = {
    (Report, "meta"): (Meta, False),
    (Report, "graphs"): (Graph, True),
    (Report, "graph_breaks"): (GraphBreak, True),
    (Report, "recompiles"): (Recompile, True),
    (Report, "kernels"): (Kernel, True),
    (Kernel, "occurrences"): (Occurrence, True),
    (Report, "opaque_ops"): (OpaqueOp, True),
    (Report, "mutation_fallbacks_unattributed"): (MutationFallback, True),
    (Report, "diagnostics"): (Diagnostic, True),
}


def _build(cls: type, data: dict[str, Any]) -> Any:
    """Rebuild a dataclass tree from `to_dict` output (lists become tuples)."""
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = set(data) - names
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)} in {cls.__name__}")
    kwargs = {name: _value(cls, name, value) for name, value in data.items()}
    return cls(**kwargs)


def _value(owner: type, name: str, value: Any) -> Any:
    nested = _NESTED.get((owner, name))
    if nested is not None:
        record, many = nested
        if many and isinstance(value, list) and all(isinstance(v, dict) for v in value):
            return tuple(_build(record, item) for item in value)
        if not many and isinstance(value, dict):
            return _build(record, value)
        raise ValueError(f"{owner.__name__}.{name} must be {'a list of objects' if many else 'an object'}")
    if name == "grid" and value is not None:
        return tuple(tuple(g) for g in value)
    if isinstance(value, list):
        return tuple(value)
    return value


def with_meta(report: Report, **changes: Any) -> Report:
    """A copy of `report` with some meta fields replaced."""
    return dataclasses.replace(report, meta=dataclasses.replace(report.meta, **changes))


__all__ = [
    "SCHEMA_VERSION",
    "Diagnostic",
    "Entry",
    "Graph",
    "GraphBreak",
    "Kernel",
    "Meta",
    "Mode",
    "MutationFallback",
    "Occurrence",
    "OpaqueOp",
    "Recompile",
    "Report",
    "STAGES",
]
