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
    #: Functional HOP nodes: where each tensor argument comes from in this graph.
    buffers: tuple[BufferRecord, ...] | None = None
    #: HOP nodes: how the kernel's body uses each tensor argument ("load", "store", "atomic"),
    #: from its source (textformats/kernel_access.py); None when not analysed.
    uses: dict[str, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class GraphRecord:
    compile_id: str
    stage: str
    part: str
    code: str
    op_count: int
    subgraphs: tuple[str, ...] = ()
    #: Wall time of the compile step that consumed this graph (see report.Graph).
    compile_time_s: float | None = None


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


@dataclass(frozen=True)
class OutputCodeRecord:
    compile_id: str
    part: str
    code: str
    user_kernels: tuple[OutputKernel, ...] = ()
    extern_ops: tuple[str, ...] = ()
    #: Launches and extern calls of `call()`, in order.
    calls: tuple[CallRecord, ...] = ()
    #: torch._inductor.config.epilogue_fusion_user_defined_triton_kernel when
    #: this code was generated; None where this torch has no such option.
    epilogue_fusion: bool | None = None
    #: Inductor names of user kernels whose source Inductor rewrote (an epilogue fused in).
    rewritten_kernels: tuple[str, ...] = ()


@dataclass(frozen=True)
class BreakRecord:
    compile_id: str
    reason: str
    file: str | None
    line: int | None
    user_stack: tuple[str, ...] = ()
    frame_skipped: bool = False
    #: One line: the graph-break type (and what it says about a Triton kernel).
    headline: str = ""
    #: torch's graph-break id ("GB0361") and its documentation page, when given.
    gb_id: str | None = None
    doc_url: str | None = None
    #: Dynamo could not resume after the break: the rest of the frame ran eagerly.
    skipped_rest: bool = False
    #: "file:line in func" of the library frame the break happened in, if not the user's.
    library_frame: str | None = None
    #: Source lines around `line` (read while capturing), the first being `context_start`.
    context: tuple[str, ...] = ()
    context_start: int | None = None
    #: The same around `library_frame`, to find a kernel launched next to a break inside a library.
    library_context: tuple[str, ...] = ()
    library_context_start: int | None = None
    #: A break at `.item()`: what the value read is used for in the user's function, kind -> first
    #: line ("branch", "kernel", "size", "other"; textformats/value_use.py); None when not known.
    value_uses: dict[str, int] | None = None


@dataclass(frozen=True)
class RecompileRecord:
    compile_id: str
    reason: str


@dataclass(frozen=True)
class RecompileLimitRecord:
    """Dynamo hit a recompile limit for a frame and runs that frame eagerly from then on."""

    #: The compile that was refused (it has no graph), e.g. "0/8".
    compile_id: str
    #: Which limit, as Dynamo names it: "recompile_limit" or "accumulated_recompile_limit".
    limit_type: str
    limit: int | None
    function: str | None = None
    file: str | None = None
    line: int | None = None


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


@dataclass(frozen=True)
class LibraryRecord:
    """The installed distribution a kernel's or op's file belongs to (origin.library_of)."""

    distribution: str
    version: str
    #: Its top-level import package.
    package: str
    #: Where to report a problem (issue tracker, else repository or home page); "" when unknown.
    url: str = ""


@dataclass(frozen=True)
class DecompiledRecord:
    """Dynamo's transformed bytecode of one compiled frame, decompiled by depyf."""

    compile_id: str
    #: The code object's name: "forward", or a resume function such as
    #: "torch_dynamo_resume_in_forward_at_55".
    function: str
    file: str | None
    line: int | None
    source: str


@dataclass(frozen=True)
class ResourceRecord:
    """What one kernel, compiled for one autotune config, uses (`--resources`)."""

    kernel_id: str
    #: The config's kwargs and launch options that are set; {} for a kernel without autotune.
    config: dict[str, Any]
    #: The architecture compiled for, e.g. "sm_90".
    target: str
    #: "gpu" (loaded on this machine's GPU) or "compiled for sm_90" (compile-only mode).
    source: str
    registers: int | None = None
    #: Shared memory the kernel asks for, in bytes.
    shared: int | None = None
    #: Spilled registers (local memory bytes / 4, as Triton's driver counts them).
    spills: int | None = None
    num_warps: int | None = None
    num_stages: int | None = None


@dataclass(frozen=True)
class DeviceQueryRecord:
    """One device query compile-only mode answered for its emulated GPU, e.g. `get_device_name`."""

    function: str
    calls: int
    #: "file:line" of the first call (the user's, a library's, or the graph line repeating it).
    first_caller: str | None


@dataclass(frozen=True)
class DeviceProbeRecord:
    """`torch.cuda.is_available()` answered False here, where the GPU compile-only mode
    stands for answers True: the code after it took its no-GPU path."""

    #: "file:line" of the call (the traced instruction, when Dynamo evaluated it).
    place: str
    #: The function that asked (e.g. `infer_device`; `<module>` at import).
    function: str
    #: Asked while Dynamo traced the call (the answer is folded into the graph), not run eagerly.
    traced: bool
    calls: int
    #: The compiles it was traced in, in order (traced only).
    compile_ids: tuple[str, ...] = ()


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


@dataclass(frozen=True)
class FailureRecord:
    """Why the capture stopped early: the compile or the compiled module's run raised.

    Everything recorded before it stays in the capture, so the report still shows it.
    """

    #: Where it failed: "dynamo", "aot", "inductor", "kernel_compile", "run" or "backward".
    stage: str
    compile_id: str | None
    #: forward / backward / inference for the AOT and Inductor stages, else "".
    part: str
    #: The innermost exception (Dynamo's and Inductor's wrappers removed).
    exc_type: str
    message: str
    #: The user's innermost frame, "file:line in function", when there is one.
    user_frame: str | None = None
    #: All of the user's own frames, outermost first (the innermost is `user_frame`).
    user_stack: tuple[str, ...] = ()
    #: The innermost torch or Triton frame, "file:line in function".
    torch_frame: str | None = None
    #: The failure is in tritoninspect's own code (a bug of ours), not in the user's or torch's.
    in_tool: bool = False
    #: The kernel it is about, when known (e.g. the kernel that failed to compile).
    kernel: str | None = None


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
    decompiled: list[DecompiledRecord] = field(default_factory=list)
    #: --resources: per kernel and autotune config.
    resources: list[ResourceRecord] = field(default_factory=list)
    #: (source, message) pairs for things capture could not do.
    problems: list[tuple[str, str]] = field(default_factory=list)
    #: Frames Dynamo stopped compiling because a recompile limit was hit.
    recompile_limits: list[RecompileLimitRecord] = field(default_factory=list)
    #: Set when the compile or a run raised: the capture holds what came before.
    failure: FailureRecord | None = None
    #: Compile-only mode: the emulated CUDA device and the queries it answered.
    emulation: EmulationRecord | None = None
    #: Custom ops and triton_ops seen -> (file, line) of the function registered for them.
    op_sources: dict[str, tuple[str | None, int | None]] = field(default_factory=dict)
    #: Files of kernels and ops that are installed library code -> the library.
    libraries: dict[str, LibraryRecord] = field(default_factory=dict)
    format: int = CAPTURE_FORMAT

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        # Absent when empty: a capture without them reads as before they were recorded.
        for optional in ("failure", "recompile_limits", "emulation", "op_sources", "libraries"):
            if not data[optional]:
                del data[optional]
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
            decompiled=[_rec(DecompiledRecord, v) for v in data.get("decompiled", [])],
            resources=[_resource(v) for v in data.get("resources", [])],
            problems=[tuple(p) for p in data["problems"]],
            recompile_limits=[_rec(RecompileLimitRecord, v) for v in data.get("recompile_limits", [])],
            failure=_rec(FailureRecord, data["failure"]) if data.get("failure") else None,
            emulation=_emulation(data["emulation"]) if data.get("emulation") else None,
            op_sources={op: (f, ln) for op, (f, ln) in data.get("op_sources", {}).items()},
            libraries={f: _rec(LibraryRecord, v) for f, v in data.get("libraries", {}).items()},
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


def _resource(data: dict[str, Any]) -> ResourceRecord:
    # `config` is a dict of values: _rec would leave it alone, but be explicit.
    return dataclasses.replace(_rec(ResourceRecord, data), config=dict(data.get("config", {})))


def _output_code(data: dict[str, Any]) -> OutputCodeRecord:
    kernels = tuple(_rec(OutputKernel, k) for k in data.get("user_kernels", ()))
    calls = tuple(_call(c) for c in data.get("calls", ()))
    return dataclasses.replace(_rec(OutputCodeRecord, data), user_kernels=kernels, calls=calls)


def _call(data: dict[str, Any]) -> CallRecord:
    args = tuple(_rec(ArgRecord, a) for a in data.get("args", ()))
    return dataclasses.replace(_rec(CallRecord, data), args=args)
