"""The report: one frozen, versioned model that every renderer and diff reads.

The JSON form (`Report.to_json`) is a public interface documented in docs/json.md. Change it
only by bumping `SCHEMA_VERSION` and noting why in model/versions.py, which lists what each
version added and which older reports still read.

The JSON Schema of this model, `tritoninspect/schemas/report.schema.json`, is generated
from the dataclasses below (`json_schema()`; tests/test_schema.py keeps the file equal to
it) and every saved report is validated against it when read (`read_report`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tritoninspect.model import notebook, schema
from tritoninspect.model._json import Schema, parse_json, read_json
from tritoninspect.model.errors import ReportError, UsageError
from tritoninspect.model.stored import StoredText, verify_stored
from tritoninspect.model.versions import (
    ADDED_IN_VERSION_1,
    ADDED_IN_VERSION_5,
    MAY_BE_ABSENT,
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    upgraded,
)
from tritoninspect.model.report_kernel import (
    STAGES,
    CallKind,
    ClonedArg,
    Clones,
    DroppedNode,
    Entry,
    EntryKind,
    Kernel,
    Mode,
    ModeName,
    MutationFallback,
    Neighbour,
    OpsSource,
    Neighbourhood,
    Occurrence,
    KernelGuard,
    Resources,
    Severity,
    SymbolicArg,
    SharedBuffer,
    StageName,
)
from tritoninspect.model.report_advice import Advice, Library
from tritoninspect.model.report_breaks import (
    DEVICE_PROBE_MEANING,
    ArgChange,
    DecompiledFrame,
    GraphBreak,
    UNRECORDED,
    Recompile,
    RecompileLimit,
    said,
)
from tritoninspect.model.report_cudagraphs import CudagraphReason, CudagraphUse, EpilogueFusion, EpilogueNeighbour
from tritoninspect.model.report_findings import SEVERITIES, Evidence, EvidenceKind, Finding, FindingSeverity
from tritoninspect.model.report_export import (
    AotiPackage,
    ArgConstraint,
    DynamicDim,
    ExportedKernel,
    ExportFinding,
    ExportInfo,
    SignatureEntry,
)


@dataclass(frozen=True)
class Meta:
    tool: str
    tool_version: str
    mode: ModeName
    device: str
    torch: str
    triton: str
    target: str
    python: str
    stage: str
    #: torch.compile's `dynamic` argument as the capture passed it: true (--dynamic), false, or null:
    #: torch's default, automatic dynamic shapes (sizes start static and turn dynamic when they change),
    #: which the text and HTML show as "dynamic: auto".
    dynamic: bool | None
    backward: bool
    #: The first call's inputs, in --inputs notation.
    inputs: tuple[str, ...] = ()
    #: How many times the model was called (one per example input set).
    calls: int = 1
    #: mode "trace": the rank whose log this is (None: not distributed).
    rank: int | None = None
    #: mode "trace": what the report cannot know from a trace (each a short phrase).
    unknown: tuple[str, ...] = ()
    #: --backward: calls whose outputs held no tensor requiring grad, so backward did not run.
    backward_skipped_calls: int = 0
    #: --backward: the module's parameters that require grad but got no gradient.
    params_without_grad: tuple[str, ...] = ()
    #: Whether the forward recorded autograd (true) or ran under no_grad (false): true whenever
    #: `backward` is; `breaks` runs a training step's forward (grad on) without its backward.
    #: null: not said (a trace; reports before schema 6, whose forward had grad on exactly when
    #: `backward` is true).
    grad: bool | None = None


@dataclass(frozen=True)
class CodeCall:
    """A kernel launch or extern call in an output module's `call()`, in order."""

    #: "inductor" (a kernel Inductor generated), "user" (a user-defined Triton kernel) or "extern".
    kind: CallKind
    #: As called: cpp_fused_sin_0, add_kernel_0, extern_kernels.mm, torch.ops.ns.op.default.
    name: str
    #: ATen ops fused into an Inductor kernel, as `ops_source` says (never guessed from its name).
    ops: tuple[str, ...] = ()
    #: Buffers it reads and writes, as named in the code (unknown accesses count as reads).
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    #: A copy: a clone/copy kernel or a copy_ call.
    copy: bool = False
    #: 1-based line in the output code.
    line: int | None = None
    #: Inductor kernels: "inductor" (Inductor's record of what the kernel was made from),
    #: "comment" (its `Original ATen` comment) or "unknown" (neither; `ops` is empty).
    ops_source: OpsSource = ""
    #: The output-code function it is written in: "call", or a sub-graph function such as
    #: "true_graph_0" (a torch.cond branch) or "repeated_subgraph0" (an invoke_subgraph body).
    function: str = "call"


@dataclass(frozen=True)
class GraphRecord:
    """A graph as the capture records it (tritoninspect/model/records.py); the report's `Graph`
    adds what an output-code module launches."""

    compile_id: str
    stage: StageName
    #: `forward`, `backward` or `inference` for AOT and Inductor stages; "" for Dynamo.
    part: str
    #: Readable text: FX code for graphs, Python source for output code.
    code: str = StoredText()  # type: ignore[assignment]  # a trace's report reads it from the log: model/stored.py
    op_count: int
    #: Subgraph modules (e.g. autograd.Function bodies) inside a Dynamo graph.
    subgraphs: tuple[str, ...] = ()
    #: Seconds (wall) the compiler spent on this graph: for `dynamo`, the backend
    #: call (AOTAutograd + Inductor, every part); for `aot_*`, Inductor's compile
    #: of that part. None where nothing was compiled (other stages, --stage aot).
    compile_time_s: float | None = None


@dataclass(frozen=True)
class Graph(GraphRecord):
    """One captured graph or output-code module."""

    #: output_code: the launches and extern calls of `call()`, in order.
    code_calls: tuple[CodeCall, ...] = ()
    #: output_code totals (None for other stages): Inductor-generated kernels,
    #: extern calls, user-kernel launches, and copies among them.
    inductor_kernels: int | None = None
    extern_calls: int | None = None
    user_kernels: int | None = None
    copies: int | None = None


@dataclass(frozen=True)
class OpaqueOp:
    """A custom op that Inductor calls as a black box, per graph node."""

    compile_id: str
    stage: StageName
    op: str
    node: str
    #: Kernels seen launching inside it at run time.
    kernels: tuple[str, ...] = ()
    #: Where the function it was registered with is defined; its installed distribution (None: the user's).
    file: str | None = None
    line: int | None = None
    library: str | None = None


@dataclass(frozen=True)
class Diagnostic:
    """Something tritoninspect could not do or check (the run went on), or a note on
    what the mode cannot show."""

    #: "note"s (what the mode cannot show) do not count for --strict.
    severity: Severity
    source: str
    message: str


@dataclass(frozen=True)
class Failure:
    """The compile or a run of the compiled module raised: the report holds what came before."""

    #: "dynamo", "aot", "inductor", "kernel_compile", "run" (a forward call) or "backward".
    stage: str
    compile_id: str | None
    #: forward / backward / inference for the AOT and Inductor stages, else "".
    part: str
    #: The innermost exception, without Dynamo's and Inductor's wrappers.
    exc_type: str
    message: str
    #: The user's innermost frame, "file:line in function", when there is one.
    user_frame: str | None = None
    #: All of the user's own frames, outermost first (the innermost is `user_frame`).
    user_stack: tuple[str, ...] = ()
    #: The innermost torch, Triton or installed-library frame, "file:line in function".
    torch_frame: str | None = None
    #: The kernel the failure is about, when one is known (e.g. it failed to compile).
    kernel: str | None = None

    def summary(self) -> str:
        """`failed at inductor [0/0]: TypeError: <headline>`: the failure on one line."""
        head = self.headline()
        cid = f" [{self.compile_id}]" if self.compile_id else ""
        return f"failed at {self.stage}{cid}: {self.exc_type}" + (f": {head}" if head else "")

    def headline(self) -> str:
        """The message's line that says what failed: the first, except for a Triton compile
        error, which starts with the place (`at 5:24:`) and the source and ends with the error."""
        lines = [line.strip() for line in self.message.strip().splitlines() if line.strip()] or [""]
        return lines[-1] if self.stage == "kernel_compile" else lines[0]

    def details(self) -> list[str]:
        """The message's lines the headline leaves out, in order."""
        lines = self.message.strip().splitlines()
        if not lines:
            return []
        return lines[:-1] if self.stage == "kernel_compile" else lines[1:]


@dataclass(frozen=True)
class Report:
    """What `tritoninspect graph --json` and `breaks --json` write: one target's graphs, graph breaks,
    recompiles and user Triton kernels (docs/json.md)."""

    meta: Meta
    #: Set when the compile or a run raised; None for a complete run.
    failure: Failure | None = None
    graphs: tuple[Graph, ...] = ()
    graph_breaks: tuple[GraphBreak, ...] = ()
    recompiles: tuple[Recompile, ...] = ()
    #: Frames whose compiles stopped at a recompile limit.
    recompile_limits: tuple[RecompileLimit, ...] = ()
    kernels: tuple[Kernel, ...] = ()
    opaque_ops: tuple[OpaqueOp, ...] = ()
    mutation_fallbacks_unattributed: tuple[MutationFallback, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    #: --decompile: each compiled frame's transformed code.
    decompiled: tuple[DecompiledFrame, ...] = ()
    #: `tritoninspect export`: what torch.export and AOTInductor did; None for a compile's report.
    export: ExportInfo | None = None
    #: The findings of the default view, highest impact first, each with its advice (what to change,
    #: why, where in torch). Filled when the report is built or written as JSON.
    advice: tuple[Advice, ...] = ()
    #: What torch.compile changes about each user kernel's result or speed (analyse/hazards/), worst first.
    findings: tuple[Finding, ...] = ()
    #: Installed libraries whose code holds kernels, ops or graph breaks (Kernel.library and the like).
    libraries: tuple[Library, ...] = ()
    #: `graph --cudagraphs`: what Inductor's CUDA graphs did with each compiled graph.
    cudagraphs: tuple[CudagraphUse, ...] = ()
    #: Each user-kernel launch Inductor scheduled and the epilogues it fused into it or refused.
    epilogues: tuple[EpilogueFusion, ...] = ()
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON-able form; `schema_version` comes first."""
        from tritoninspect.model.spill import materialized

        body = dataclasses.asdict(materialized(self))  # a long trace's rows read back from their file
        return {"schema_version": body.pop("schema_version"), **body}

    def to_json(self, indent: int | None = 2) -> str:
        return self.json_text if indent == 2 else json.dumps(self.to_dict(), indent=indent, default=str)

    @functools.cached_property
    def json_text(self) -> str:
        """`to_json()`, made once: the ranks of a trace make theirs in the worker that read them, in
        parallel, and the text travels back with the report (run/traces.py). A replaced report is a new
        object, so the text never outlives the fields it was made from. Made from the fields directly
        (model/jsontext.py): the text `json.dumps(self.to_dict(), indent=2, default=str)` gives."""
        return self.json_text_in(margin="")

    def write_json(self, write: Callable[[str], Any]) -> None:
        """`json_text` handed to `write` in pieces, never held whole unless it was made already
        (a report of a 100 MiB trace has 75 MB of it: model/jsontext.py `write_json`)."""
        if "json_text" in vars(self):
            write(self.json_text)
            return
        from tritoninspect.model.jsontext import write_json

        verify_stored(self.graphs)  # a text left in its log that no longer reads back fails before any piece
        write_json(self._json_fields(), write)

    def _json_fields(self) -> dict[str, Any]:
        from tritoninspect.model.jsontext import fields_of

        fields = {name: getattr(self, name) for name in fields_of(self) or ()}
        return {"schema_version": fields.pop("schema_version"), **fields}

    def json_text_in(self, margin: str) -> str:
        """`json_text` with every line but the first starting with `margin`: the text as it sits inside
        a larger document (`graph DIR --json`'s, analyse/ranks.py)."""
        from tritoninspect.model.jsontext import json_text

        return json_text(self._json_fields(), margin)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Report:
        version = data.get("schema_version")
        if version not in READABLE_VERSIONS:
            raise ReportError(
                f"report has schema_version {version!r}; this tritoninspect reads version "
                f"{', '.join(map(str, READABLE_VERSIONS))}"
            )
        try:
            return _SCHEMA.build(cls, upgraded(data))
        except (TypeError, KeyError, ValueError) as exc:
            raise ReportError(f"report does not match schema {SCHEMA_VERSION}: {exc}") from exc

    @classmethod
    def from_json(cls, text: str | bytes, source: str = "report") -> Report:
        """A saved report's text, validated against the JSON Schema; `source` names it in errors."""
        data = parse_json(text, source)
        _refuse_ranks_document(data, source)
        schema.validate(upgraded(data), schema.REPORT_SCHEMA, source)
        return cls.from_dict(data)

    def kernel(self, name: str) -> Kernel | None:
        """The first kernel with this name (or id). `name` is read as Python reads an identifier (NFKC, PEP
        3131): `def ﬁll_kernel` defines `fill_kernel`, and either spelling finds it."""
        name = unicodedata.normalize("NFKC", name)
        return next((k for k in self.kernels if name in (k.name, k.id)), None)

    def breaks_shown(self) -> tuple[GraphBreak, ...]:
        """The graph breaks said with this report's kernels: those tied to no kernel (the run's) or to a
        kernel the report holds. Every break of a whole report (it holds each kernel a break is tied to);
        of one `narrowed` to a kernel (`graph --kernel NAME`), not those tied only to other kernels, as
        their findings are left out."""
        shown = {k.name for k in self.kernels}
        return tuple(b for b in self.graph_breaks if not b.tied_kernels() or b.tied_kernels() & shown)

    def narrowed(self, name: str) -> Report:
        """This report with kernel `name` (by name or id) and what is said per kernel of it only (its
        findings, its epilogues), for `graph --kernel NAME`. Raises UsageError naming the kernels there
        are when none has that name."""
        kernel = self.kernel(name)
        if kernel is None:
            names = ", ".join(dict.fromkeys(k.name for k in self.kernels)) or "none"
            raise UsageError(f"--kernel {name}: no such kernel in this report; kernels: {names}")
        findings = tuple(f for f in self.findings if f.kernel == kernel.name)
        epilogues = tuple(e for e in self.epilogues if e.kernel == kernel.name)
        return dataclasses.replace(self, kernels=(kernel,), findings=findings, epilogues=epilogues)

    def __repr__(self) -> str:
        return notebook.report_repr(self)

    def _repr_html_(self) -> str | None:  # Jupyter: the page `-o report.html` writes, in a frame of its own
        return notebook.page_html(self)


#: How JSON maps back onto the records: nested records keyed by (owner, field), because
#: the same name can mean different things (OpaqueOp.kernels holds names).
_SCHEMA = Schema(
    nested={
        (Report, "meta"): (Meta, False),
        (Report, "failure"): (Failure, False),
        (Report, "graphs"): (Graph, True),
        (Report, "graph_breaks"): (GraphBreak, True),
        (Report, "recompiles"): (Recompile, True),
        (Report, "recompile_limits"): (RecompileLimit, True),
        (Report, "kernels"): (Kernel, True),
        (Kernel, "occurrences"): (Occurrence, True),
        (Report, "opaque_ops"): (OpaqueOp, True),
        (Report, "mutation_fallbacks_unattributed"): (MutationFallback, True),
        (Report, "diagnostics"): (Diagnostic, True),
        (Graph, "code_calls"): (CodeCall, True),
        (Occurrence, "clones"): (Clones, False),
        (Clones, "arguments"): (ClonedArg, True),
        (Occurrence, "neighbourhood"): (Neighbourhood, True),
        (Neighbourhood, "before"): (Neighbour, False),
        (Neighbourhood, "after"): (Neighbour, False),
        (Neighbourhood, "caller_before"): (Neighbour, False),
        (Neighbourhood, "caller_after"): (Neighbour, False),
        (Neighbourhood, "related"): (Neighbour, True),
        (Neighbour, "shared"): (SharedBuffer, True),
        (Kernel, "dropped_nodes"): (DroppedNode, True),
        (Kernel, "resources"): (Resources, True),
        (Kernel, "guards"): (KernelGuard, True),
        (Kernel, "symbolic_args"): (SymbolicArg, True),
        (Recompile, "changes"): (ArgChange, True),
        (Report, "decompiled"): (DecompiledFrame, True),
        (Report, "export"): (ExportInfo, False),
        (Report, "advice"): (Advice, True),
        (Report, "findings"): (Finding, True),
        (Finding, "evidence"): (Evidence, True),
        (Report, "libraries"): (Library, True),
        (ExportInfo, "signature"): (SignatureEntry, True),
        (ExportInfo, "decomposed_signature"): (SignatureEntry, True),
        (ExportInfo, "dynamic_dims"): (DynamicDim, True),
        (ExportInfo, "kernels"): (ExportedKernel, True),
        (ExportInfo, "constraints"): (ArgConstraint, True),
        (ExportInfo, "aoti"): (AotiPackage, False),
        (ExportInfo, "findings"): (ExportFinding, True),
        (Report, "cudagraphs"): (CudagraphUse, True),
        (CudagraphUse, "reasons"): (CudagraphReason, True),
        (Report, "epilogues"): (EpilogueFusion, True),
        (EpilogueFusion, "neighbours"): (EpilogueNeighbour, True),
    },
    nullable=frozenset(
        {(Report, "export"), (ExportInfo, "aoti"), (Report, "failure"), (Occurrence, "clones"), (Occurrence, "neighbourhood"), (Neighbourhood, "before"), (Neighbourhood, "after"),
         (Neighbourhood, "caller_before"), (Neighbourhood, "caller_after")}
    ),
    convert={"grid": lambda grid: tuple(tuple(g) for g in grid)},
)


def json_schema() -> dict[str, Any]:
    """The JSON Schema of `Report.to_json()`, generated from the dataclasses (shipped as
    `tritoninspect/schemas/report.schema.json`)."""
    return schema.generate(Report, version=SCHEMA_VERSION, title="tritoninspect report",
                           schema_id="urn:tritoninspect:schema:report", optional=MAY_BE_ABSENT)


def read_report(path: Path | str) -> Report:
    """A report saved as JSON, validated against the JSON Schema before it is built.

    A file that cannot be read, is not JSON, or does not match the schema is a one-line
    ReportError naming the file and, for a mismatch, the field (`kernels[2].occurrences[0].grid`).
    """
    data = read_json(path)
    _refuse_ranks_document(data, str(path))
    schema.validate(upgraded(data), schema.REPORT_SCHEMA, str(path))
    _refuse_backward_without_grad(data["meta"], str(path))
    return Report.from_dict(data)


def _refuse_backward_without_grad(meta: dict[str, Any], source: str) -> None:
    """A backward needs the forward's autograd record: tritoninspect never writes `backward: true` with
    `grad: false` (run/pipeline.py `_calls`), so a file saying both was edited (a hostile user's)."""
    if meta.get("backward") is True and meta.get("grad") is False:
        raise ReportError(f"{source}: meta.grad: false with meta.backward: true: a backward runs only after a "
                          "forward with grad on")


def _refuse_ranks_document(data: Any, source: str) -> None:
    """`graph DIR --json -o`'s document of several ranks (analyse/ranks.py) is not one report: said as such,
    not as a dozen unknown fields (a hostile user saved one and read it back)."""
    if isinstance(data, dict) and {"ranks", "reports", "differences"} <= data.keys():
        raise ReportError(f"{source}: holds the reports of {len(data.get('reports') or ())} ranks (graph DIR "
                          "--json), not one report: read the trace folder itself, or one rank's log")


def with_meta(report: Report, **changes: Any) -> Report:
    """A copy of `report` with some meta fields replaced."""
    return dataclasses.replace(report, meta=dataclasses.replace(report.meta, **changes))


__all__ = [
    "CudagraphReason", "CudagraphUse", "EpilogueFusion", "EpilogueNeighbour", "ADDED_IN_VERSION_1",
    "MAY_BE_ABSENT", "upgraded", "json_schema", "read_report", "SCHEMA_VERSION", "READABLE_VERSIONS",
    "AotiPackage", "DEVICE_PROBE_MEANING", "ArgChange", "ArgConstraint", "DecompiledFrame", "DynamicDim",
    "ExportedKernel", "ExportFinding", "ExportInfo", "SignatureEntry", "ClonedArg", "Clones", "CodeCall",
    "Diagnostic", "DroppedNode", "Entry", "EntryKind", "Evidence", "EvidenceKind", "Failure", "Finding",
    "FindingSeverity", "SEVERITIES", "Graph", "GraphBreak", "Kernel", "KernelGuard", "Meta", "Mode",
    "MutationFallback", "Neighbour", "Neighbourhood", "Occurrence", "OpaqueOp", "Recompile", "RecompileLimit",
    "Report", "Resources", "STAGES", "SharedBuffer", "SymbolicArg", "UNRECORDED", "said",
]
