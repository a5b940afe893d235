"""Plain records of one capture: what the live torch objects said, as data.

Capture turns graphs, side-table kernels, log records and launches into these
records while the compile is alive; analyses read only these, so they can be
tested on saved captures without compiling anything (tests/fixtures/).

Where the report carries the same facts, the capture records them in the report's own classes
(`Failure`, `Resources`, `RecompileLimit`, `DecompiledFrame`), or in the records the report's
classes extend (`KernelRecord`, `GraphRecord`, `RecompileRecord`, `DynamoBreak`): an analysis
turns one into the other with `extended`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, TypeVar

from tritoninspect.model.cudagraph_records import CudagraphRecords, EpilogueRecord, epilogue_from_dict
from tritoninspect.model.hazard_records import HazardRecords
from tritoninspect.model.report import Failure, GraphRecord, Library
from tritoninspect.model.report_breaks import DecompiledFrame, DynamoBreak, RecompileLimit, RecompileRecord
from tritoninspect.model.report_kernel import KernelRecord, Resources
from tritoninspect.model.stored import StoredText, raw_fields

T = TypeVar("T")

CAPTURE_FORMAT = 1


@dataclass(frozen=True)
class BufferRecord:
    """Where one tensor argument of a functional kernel node comes from, in that graph."""

    #: The kernel parameter.
    arg: str
    #: What the tensor at the bottom of its view chain is: "input" (a graph input), "alloc" (made
    #: empty or filled in the graph: torch.empty/zeros/full...), "computed" (another op's result).
    made_by: str
    #: That tensor's node, and the op that made it ("placeholder" for an input).
    base: str
    base_op: str
    #: The argument is a view of the base (a slice, select, as_strided...), not the base itself.
    view: bool = False
    #: allocs: the value it was filled with ("0", "1", ...), None when left uninitialised.
    fill: str | None = None
    #: Other tensor arguments of the same node made from the same base.
    shares_base_with: tuple[str, ...] = ()
    #: Nodes after the launch that read the base or a view of it (the value before the kernel
    #: wrote it), "output" when the graph returns it.
    read_after: tuple[str, ...] = ()
    #: inputs: the graph copies the kernel's result back into it (`copy_`), i.e. the program mutates it.
    written_back: bool = False


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
    #: HOP nodes: tensor arguments as "dtype[shape]" (e.g. "float32[64]"), from node meta.
    tensor_types: dict[str, str] | None = None
    #: HOP nodes: bytes of each tensor argument (None for symbolic sizes).
    tensor_bytes: dict[str, int | None] | None = None
    #: post_grad_final mutation nodes: arguments Inductor cloned before the
    #: launch (what re-inplacing left of tensors_to_clone) -> bytes copied.
    inductor_clones: dict[str, int | None] | None = None
    #: A backward-graph node that recomputes a forward op (activation checkpointing).
    recompute: bool = False
    #: "file:line" of the user's launch (the node's stack trace), when known.
    source: str | None = None
    #: Functional HOP nodes: where each tensor argument comes from in this graph.
    buffers: tuple[BufferRecord, ...] | None = None
    #: HOP nodes: how the kernel's body uses each tensor argument ("load", "store", "atomic"),
    #: from its source (textformats/kernel_access.py); None when not analysed.
    uses: dict[str, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class OutputKernel:
    """A user kernel defined in an output-code module (`# Original path:`)."""

    inductor_name: str
    name: str
    file: str | None
    line: int | None
    launched: bool


@dataclass(frozen=True)
class ArgRecord:
    """One argument of a launch in an output module's `call()`."""

    #: The kernel parameter (in_ptr0, x_ptr) or, for extern calls, the position ("0") or keyword.
    param: str
    #: The buffer as written in the call (buf3, arg0_1).
    buffer: str
    #: The tensor it stands for, aliases and views followed (`buf2 = buf1` -> buf1).
    storage: str
    #: "r", "w", "rw" from Inductor's parameter names (in_ptr / out_ptr / in_out_ptr); "" when unknown.
    access: str = ""
    #: For a buffer made by `buf3 = buf1; del buf1  # reuse`: the tensor whose memory it
    #: took over (an Inductor kernel updating it in place reads that tensor's values).
    reuses: str = ""
    #: The tensor was allocated empty in `call()` (not a graph input or a call's result).
    allocated: bool = False


@dataclass(frozen=True)
class CallRecord:
    """A kernel launch or extern call in an output module's `call()`, in order."""

    #: "inductor" (a kernel Inductor generated), "user" (a user-defined Triton kernel) or "extern".
    kind: str
    #: As called: cpp_fused_sin_0, add_kernel_0, extern_kernels.mm, torch.ops.ns.op.default.
    name: str
    #: 1-based line in the output code.
    line: int
    args: tuple[ArgRecord, ...] = ()
    #: ATen ops Inductor fused into the kernel, as `ops_source` says.
    ops: tuple[str, ...] = ()
    #: The graph nodes of its `Topologically Sorted Source Nodes` comment.
    source_nodes: tuple[str, ...] = ()
    #: Inductor kernels: "inductor" (Inductor's record of the kernel's origins, taken
    #: while it generated the code), "comment" (the `Original ATen` comment above the
    #: call) or "unknown" (neither: `ops` is empty). "" for user kernels and extern calls.
    ops_source: str = ""
    #: The output-code function it is written in: "call", or a sub-graph function such as
    #: "true_graph_0" (a torch.cond branch) or "repeated_subgraph0" (an invoke_subgraph body).
    function: str = "call"


@dataclass(frozen=True)
class OutputCodeRecord:
    compile_id: str
    part: str
    code: str = StoredText()  # type: ignore[assignment]  # (model/stored.py)
    user_kernels: tuple[OutputKernel, ...] = ()
    extern_ops: tuple[str, ...] = ()
    #: Launches and extern calls of `call()`, in order.
    calls: tuple[CallRecord, ...] = ()
    #: torch._inductor.config.epilogue_fusion_user_defined_triton_kernel when
    #: this code was generated; None where this torch has no such option.
    epilogue_fusion: bool | None = None
    #: Inductor names of user kernels whose source Inductor rewrote (an epilogue fused in).
    rewritten_kernels: tuple[str, ...] = ()
    #: Where the code calls its sub-graph functions: (function, calling function, line), in order.
    subgraph_calls: tuple[tuple[str, str, int], ...] = ()


@dataclass(frozen=True)
class BreakRecord(DynamoBreak):
    """A graph break as the capture records it: what Dynamo logged, and the source around the
    library frame it happened in (to find a kernel launched next to a break inside a library)."""

    #: Source lines around `library_frame` (read while capturing), the first being `library_context_start`.
    library_context: tuple[str, ...] = ()
    library_context_start: int | None = None
    #: A break at `.item()`: what the value read is used for in the user's function, kind -> first
    #: line ("branch", "kernel", "size", "other"; textformats/value_use.py); None when not known.
    value_uses: dict[str, int] | None = None
    #: "file:line in func" of the outermost frame Dynamo was tracing, the frame it converts (None: not
    #: known, as in a TORCH_TRACE log). A break inside Triton's runtime is a follow-on of an earlier one only
    #: when this frame is Triton's own (an eager launch's frame Dynamo compiled): a bare `triton.heuristics`
    #: launch is inlined from the user's frame through `Heuristics.run`, and breaks there itself.
    traced_from: str | None = None


@dataclass(frozen=True)
class GuardRecord:
    """A guard on sizes the ShapeEnv added while a frame was compiled (Dynamo installs it: a call
    whose sizes fail it recompiles)."""

    compile_id: str
    #: Over the inputs' sizes, e.g. "x.size(1) == 48"; `symbolic`: over torch's symbols, "s27 == 48".
    expression: str
    symbolic: str
    symbols: tuple[str, ...] = ()
    #: Where torch added it, as it names the place (its file path shortened to the end).
    file: str | None = None
    line: int | None = None
    #: The source line there.
    code: str = ""


@dataclass(frozen=True)
class SymbolRecord:
    """What one symbol of a compile stands for: `s77` = `x.size(0)`, `u0` = `count.item()`."""

    compile_id: str
    symbol: str
    source: str
    #: "file:line" where an unbacked symbol was made (the `.item()` call), when known.
    where: str | None = None


@dataclass(frozen=True)
class FallbackRecord:
    """Mutation analysis fell back to "every input is mutated"."""

    compile_id: str
    kernel_id: str | None
    cause: str
    #: Where in the kernel the analysis gave up (the op it could not analyse), when known.
    file: str | None = None
    line: int | None = None


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
    #: Eager launches: the user's frames at the launch, "file:line in func", innermost last.
    site: tuple[str, ...] = ()
    #: Eager launches: the functions of user or library code `torch.compiler.disable` wraps that the
    #: launch ran inside, outermost first, "file:line in func" with the line of the disable.
    disabled: tuple[str, ...] = ()
    #: Eager launches from an autograd.Function's backward the autograd engine ran: its forward,
    #: "file:line in Class.forward" (first line), and that forward's first and last lines.
    backward_of: str | None = None
    forward_lines: tuple[int, int] | None = None
    #: The same backward's own first and last lines, when it is in the forward's file: Dynamo traces a
    #: Function's backward with its forward, and a graph break there drops the Function too.
    backward_lines: tuple[int, int] | None = None
    #: Launches from a compiled graph: the user's autograd.Function whose forward ran eagerly around the
    #: launch (Function.apply outside every graph), "file:line in Class.forward".
    inside_forward: str | None = None
    #: Launches from an output module: its part (forward, backward, inference), the function
    #: of it that launched (call, true_graph_0, ...) and the line.
    part: str | None = None
    function: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class DeviceQueryRecord:
    """One device query compile-only mode answered for its emulated GPU, e.g. `get_device_name`."""

    function: str
    calls: int
    #: "file:line" of the first call (the user's, a library's, or the graph line repeating it).
    first_caller: str | None


@dataclass(frozen=True)
class DeviceProbeRecord:
    """A device probe answered for the CPU here, where the GPU compile-only mode stands in for
    answers CUDA: `torch.cuda.is_available()` False, or a tensor not on CUDA (`x.is_cuda`, its
    device compared with "cuda"); the code after it may have taken its no-GPU path."""

    #: "file:line" of the call (the traced instruction, when Dynamo evaluated it).
    place: str
    #: The function that asked (e.g. `infer_device`; `<module>` at import).
    function: str
    #: Asked while Dynamo traced the call (the answer is folded into the graph), not run eagerly.
    traced: bool
    calls: int
    #: The compiles it was traced in, in order (traced only).
    compile_ids: tuple[str, ...] = ()
    #: What was asked: "torch.cuda.is_available()", "x.is_cuda" or "x.device.type" (a tensor's device
    #: compared with "cuda").
    asked: str = "torch.cuda.is_available()"
    #: A traced probe: what the function does with the answer, kind -> first line
    #: ("branch": it decides a path there; "passed": it leaves the function; `probe_uses` in
    #: textformats/value_use.py), read from the source while capturing. {} for neither; None when
    #: not known (no source, an eager probe, a capture from before it was recorded).
    uses: dict[str, int] | None = None


@dataclass(frozen=True)
class EmulationRecord:
    """Compile-only mode's emulated CUDA device, and the queries the run asked it."""

    #: The architecture answered for, e.g. "sm_90".
    target: str
    #: The GPU model the values are from, e.g. "H100".
    like: str
    #: What `torch.cuda.get_device_name()` answered.
    device_name: str
    queries: tuple[DeviceQueryRecord, ...] = ()
    #: Where `torch.cuda.is_available()` answered False to the user's or a library's code.
    probes: tuple[DeviceProbeRecord, ...] = ()
    #: What `torch.cuda.is_available()` answered on this machine (True on a GPU machine
    #: in forced compile-only mode).
    cuda_available: bool = False
    #: "kernel(param, ...)": Python bool arguments passed to Triton's interpreter as int1
    #: (its own converter rejects them before triton 3.8).
    bool_arguments: tuple[str, ...] = ()


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
    #: --decompile: each compiled frame's transformed code.
    decompiled: list[DecompiledFrame] = field(default_factory=list)
    #: --resources: kernel id -> one per autotune config, in config order.
    resources: dict[str, list[Resources]] = field(default_factory=dict)
    #: (source, message) pairs for things capture could not do.
    problems: list[tuple[str, str]] = field(default_factory=list)
    #: Frames Dynamo stopped compiling because a recompile limit was hit.
    recompile_limits: list[RecompileLimit] = field(default_factory=list)
    #: Set when the compile or a run raised: the capture holds what came before.
    failure: Failure | None = None
    #: Compile-only mode: the emulated CUDA device and the queries it answered.
    emulation: EmulationRecord | None = None
    #: Guards on sizes each compile added, and what its symbols stand for.
    guards: list[GuardRecord] = field(default_factory=list)
    symbols: list[SymbolRecord] = field(default_factory=list)
    #: --cudagraphs: what Inductor's CUDA graphs did with each compiled graph (None: not asked for).
    cudagraphs: CudagraphRecords | None = None
    #: Each user-kernel launch Inductor scheduled, and the epilogues it considered fusing into it.
    epilogues: list[EpilogueRecord] = field(default_factory=list)
    #: The evidence the hazard analyses read (model/hazard_records.py).
    hazards: HazardRecords = field(default_factory=HazardRecords)
    #: Custom ops and triton_ops seen -> (file, line) of the function registered for them.
    op_sources: dict[str, tuple[str | None, int | None]] = field(default_factory=dict)
    #: Files of kernels and ops that are installed library code -> the library.
    libraries: dict[str, Library] = field(default_factory=dict)
    #: A segment of a trace's compiles (analyse/segments.py): the launch nodes of earlier segments' compiles
    #: that its recompiles compare with, each kernel's first launch node with a grid in each such compile.
    earlier_nodes: list[NodeRecord] = field(default_factory=list)
    format: int = CAPTURE_FORMAT

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        # Saved as one list, each entry naming its kernel (`kernel_id` first), as captures always were.
        data["resources"] = [{"kernel_id": kernel_id, **dataclasses.asdict(r)}
                             for kernel_id, records in self.resources.items() for r in records]
        # Absent when empty: a capture without them reads as before they were recorded.
        for optional in ("failure", "recompile_limits", "emulation", "guards", "symbols", "op_sources", "libraries",
                         "cudagraphs", "epilogues", "earlier_nodes"):
            if not data[optional]:
                del data[optional]
        for brk in data["breaks"]:  # absent when not known, as in captures saved before it was recorded
            if brk["traced_from"] is None:
                del brk["traced_from"]
        if self.hazards.is_empty():
            del data["hazards"]
        return json.dumps(data, indent=1, default=repr)

    @classmethod
    def from_json(cls, text: str) -> Capture:
        data = json.loads(text)
        return cls(
            meta=data["meta"],
            kernels={k: _rec(KernelRecord, v) for k, v in data["kernels"].items()},
            nodes=[_node(v) for v in data["nodes"]],
            graphs=[_rec(GraphRecord, v) for v in data["graphs"]],
            output_code=[_output_code(v) for v in data["output_code"]],
            breaks=[_rec(BreakRecord, v) for v in data["breaks"]],
            recompiles=[_rec(RecompileRecord, v) for v in data["recompiles"]],
            fallbacks=[_rec(FallbackRecord, v) for v in data["fallbacks"]],
            launches=[_rec(LaunchRecord, v) for v in data["launches"]],
            decompiled=[_rec(DecompiledFrame, v) for v in data.get("decompiled", [])],
            resources=_resources(data.get("resources", [])),
            problems=[tuple(p) for p in data["problems"]],
            recompile_limits=[_rec(RecompileLimit, v) for v in data.get("recompile_limits", [])],
            failure=_rec(Failure, data["failure"]) if data.get("failure") else None,
            emulation=_emulation(data["emulation"]) if data.get("emulation") else None,
            guards=[_rec(GuardRecord, v) for v in data.get("guards", [])],
            symbols=[_rec(SymbolRecord, v) for v in data.get("symbols", [])],
            cudagraphs=CudagraphRecords.from_dict(data["cudagraphs"]) if data.get("cudagraphs") else None,
            epilogues=[epilogue_from_dict(e) for e in data.get("epilogues", ())],
            hazards=HazardRecords.from_dict(data["hazards"]) if data.get("hazards") else HazardRecords(),
            op_sources={op: (f, ln) for op, (f, ln) in data.get("op_sources", {}).items()},
            libraries={f: _rec(Library, v) for f, v in data.get("libraries", {}).items()},
            earlier_nodes=[_node(v) for v in data.get("earlier_nodes", ())],
            format=data["format"],
        )


def extended(record: Any, cls: type[T], **more: Any) -> T:
    """`record` as `cls`, a record that shares its facts (the report's `Kernel` made from a
    `KernelRecord`, say): the fields they share copied, then `more` set."""
    shared = {f.name for f in dataclasses.fields(record)} & {f.name for f in dataclasses.fields(cls)}
    return cls(**{**raw_fields(record, shared), **more})


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


def _node(data: dict[str, Any]) -> NodeRecord:
    node = _rec(NodeRecord, data)
    buffers = data.get("buffers")
    uses = data.get("uses")
    return dataclasses.replace(
        node, buffers=None if buffers is None else tuple(_rec(BufferRecord, b) for b in buffers),
        uses=None if uses is None else {k: tuple(v) for k, v in uses.items()},
    )


def _emulation(data: dict[str, Any]) -> EmulationRecord:
    queries = tuple(_rec(DeviceQueryRecord, q) for q in data.get("queries", ()))
    probes = tuple(_rec(DeviceProbeRecord, p) for p in data.get("probes", ()))
    return dataclasses.replace(_rec(EmulationRecord, data), queries=queries, probes=probes)


def _resources(saved: list[dict[str, Any]]) -> dict[str, list[Resources]]:
    by_kernel: dict[str, list[Resources]] = {}
    for data in saved:
        # `config` is a dict of values: _rec would leave it alone, but be explicit.
        record = dataclasses.replace(_rec(Resources, data), config=dict(data.get("config", {})))
        by_kernel.setdefault(data["kernel_id"], []).append(record)
    return by_kernel


def _output_code(data: dict[str, Any]) -> OutputCodeRecord:
    kernels = tuple(_rec(OutputKernel, k) for k in data.get("user_kernels", ()))
    calls = tuple(_call(c) for c in data.get("calls", ()))
    sites = tuple(tuple(site) for site in data.get("subgraph_calls", ()))
    return dataclasses.replace(_rec(OutputCodeRecord, data), user_kernels=kernels, calls=calls, subgraph_calls=sites)


def _call(data: dict[str, Any]) -> CallRecord:
    args = tuple(_rec(ArgRecord, a) for a in data.get("args", ()))
    return dataclasses.replace(_rec(CallRecord, data), args=args)


#: The capture imports every record from here, those the report's modules define too.
__all__ = [
    "CAPTURE_FORMAT", "ArgRecord", "BreakRecord", "BufferRecord", "CallRecord", "Capture", "DecompiledFrame", "DeviceProbeRecord",
    "DeviceQueryRecord", "DynamoBreak", "EmulationRecord", "Failure", "FallbackRecord", "GraphRecord",
    "KernelRecord", "LaunchRecord", "NodeRecord", "OutputCodeRecord", "OutputKernel", "RecompileLimit",
    "RecompileRecord", "Resources", "extended",
]
