"""The report model, part one: its vocabulary (entry kinds, modes, stages) and the records
of one user kernel (occurrences, clones, neighbourhoods, resources). `tritoninspect.model.report`
holds the rest and re-exports these names: import them from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, get_args

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
    #: Read from a TORCH_TRACE log made elsewhere (`meta.torch`, `meta.device`: the traced run's).
    TRACE = "trace"


#: Stages in pipeline order. `runtime` is a kernel launch seen while running.
#: `post_grad` is the graph as post-grad passes begin; `post_grad_final` after
#: all of them (re-inplacing, clones decomposed), the graph Inductor lowers.
#: `export` is torch.export's program, `aoti_output_code` AOTInductor's generated C++
#: (`tritoninspect export` only).
StageName = Literal[
    "dynamo", "aot_forward", "aot_backward", "aot_inference", "post_grad", "post_grad_final", "output_code",
    "export", "aoti_output_code", "runtime",
]
STAGES: tuple[str, ...] = get_args(StageName)

# The closed sets of values a field may hold (Literal, so the JSON Schema generated from these
# hints lists them: tritoninspect/model/schema.py). `EntryKind` is `Entry`'s values, `ModeName` `Mode`'s.
EntryKind = Literal["hop", "triton_op", "custom_op", "eager"]
ModeName = Literal["gpu", "compile-only", "trace"]
Severity = Literal["error", "warning", "note"]
#: Who made a launch in an output module's `call()`.
CallKind = Literal["inductor", "user", "extern"]
#: Where an Inductor kernel's fused ops come from ("" for other calls, and in reports before version 3).
OpsSource = Literal["inductor", "comment", "unknown", ""]
#: Where a kernel runs in the compiled program: the forward, the backward, the backward recomputing
#: a forward op (activation checkpointing), or an inference graph.
Placement = Literal["forward", "backward", "recompute", "inference"]


@dataclass(frozen=True)
class MutationFallback:
    """Mutation analysis failed, so torch assumed every input is mutated."""

    compile_id: str
    cause: str


@dataclass(frozen=True)
class ClonedArg:
    """A kernel argument torch.compile clones because the kernel may write it."""

    #: The kernel parameter, e.g. "x_ptr".
    arg: str
    #: "written": mutation analysis found a write to it; "assumed": the analysis
    #: failed and torch assumed every input is written.
    reason: Literal["written", "assumed"]
    #: Its dtype and shape for the example inputs, e.g. "float32[64]".
    tensor: str | None = None
    #: Still cloned after Inductor's re-inplacing? False: re-inplaced, no copy.
    #: None when the final post-grad graph was not captured.
    cloned: bool | None = None
    #: Bytes one clone copies (read once, written once); None for symbolic sizes.
    bytes: int | None = None
    #: How the kernel's body uses it: "load", "store", "atomic" (a load and a store of the same
    #: pointer: read-modify-write); empty when not analysed.
    uses: tuple[str, ...] = ()
    #: In the AOT graph, what the tensor it is (a view of) is: "input" (a graph input), "alloc"
    #: (allocated in the graph), "computed" (another op's result); "" when not known.
    made_by: Literal["input", "alloc", "computed", ""] = ""
    #: It is a view of that tensor (a slice, select, as_strided...), not the tensor itself.
    view: bool = False
    #: "alloc": what it was filled with ("0" for torch.zeros); None: left uninitialised (torch.empty).
    fill: str | None = None
    #: Other arguments of the launch that get the same tensor (or views of it) in the AOT graph.
    shares_with: tuple[str, ...] = ()
    #: Those arguments were separate tensors in the Dynamo graph: the compiler merged them
    #: (AOTAutograd's common-subexpression elimination of identical allocations).
    merged: bool = False
    #: Graph nodes after the launch that read its value from before the launch ("output": returned,
    #: e.g. saved for backward).
    read_after: tuple[str, ...] = ()
    #: "input": the graph writes the kernel's result back into the input (the program mutates it).
    written_back: bool = False


@dataclass(frozen=True)
class Clones:
    """What torch.compile clones and copies around one kernel node, and why."""

    #: `tensors_to_clone` of the AOT graph's functional HOP (before re-inplacing).
    before_reinplace: tuple[str, ...] = ()
    #: What re-inplacing left; None when the final post-grad graph was not captured.
    after_reinplace: tuple[str, ...] | None = None
    arguments: tuple[ClonedArg, ...] = ()
    #: Bytes the remaining clones copy per call for the example inputs.
    bytes: int | None = None
    #: Copy launches (clone/copy kernels, copy_ calls) in the output code that
    #: write the kernel's inputs or read its outputs; None without output code.
    copies: tuple[str, ...] | None = None
    #: Mutation analysis fell back: the exception, and the kernel line it failed on.
    fallback: str | None = None
    fallback_file: str | None = None
    fallback_line: int | None = None


@dataclass(frozen=True)
class SharedBuffer:
    """A buffer a neighbouring launch and the user kernel (or opaque op) both touch."""

    #: As the output code names it where the kernel gets it, e.g. "buf1".
    buffer: str
    #: The kernel parameter (or extern argument position) it is passed as.
    arg: str
    #: "producer": the neighbour wrote what the kernel reads; "consumer": the
    #: neighbour reads what the kernel wrote; "reads_same": both read it.
    flow: Literal["producer", "consumer", "reads_same"]


@dataclass(frozen=True)
class Neighbour:
    """Another launch in the same `call()`: adjacent, or sharing buffers."""

    name: str
    #: "inductor", "user" or "extern" (as CodeCall.kind).
    kind: CallKind
    #: Its position in the graph's `code_calls`.
    index: int
    ops: tuple[str, ...] = ()
    shared: tuple[SharedBuffer, ...] = ()
    #: As CodeCall.ops_source.
    ops_source: OpsSource = ""


@dataclass(frozen=True)
class Neighbourhood:
    """Where one launch of a kernel, or the extern call of the opaque op it runs
    in, sits among the launches of a compiled graph's `call()`."""

    compile_id: str
    part: str
    #: Its position in that output_code Graph's `code_calls`.
    index: int
    #: The launch or call as written, e.g. add_kernel_0, torch.ops.ns.op.default.
    call: str
    #: The nearest Inductor-generated kernel before and after it.
    before: Neighbour | None = None
    after: Neighbour | None = None
    #: Every other launch that shares a buffer with it, in order.
    related: tuple[Neighbour, ...] = ()
    #: User kernels: "off" (torch can fuse epilogues into user kernels, but the
    #: option is off), "on" (on, nothing fused here), "fused"; None where this
    #: torch cannot. Opaque ops: None.
    epilogue_fusion: Literal["off", "on", "fused"] | None = None
    #: The output-code function it is written in: "call", or a sub-graph function (as CodeCall.function).
    function: str = "call"
    #: What that function is: "torch.cond branch", "while_loop body", "invoke_subgraph body"...; "" for call.
    function_kind: str = ""
    #: Sub-graph functions: the places the code calls the function from (an invoke_subgraph body
    #: called twice: 2); 0 for call.
    call_sites: int = 0
    #: Sub-graph functions: the nearest Inductor kernels before and after its first call site, in
    #: the calling function (what runs around the sub-graph).
    caller_before: Neighbour | None = None
    caller_after: Neighbour | None = None
    #: A backward launch that recomputes the forward's (activation checkpointing).
    recompute: bool = False


@dataclass(frozen=True)
class DroppedNode:
    """A graph node of the kernel whose compile's output code never launches it."""

    compile_id: str
    #: forward / backward / inference; "" for the Dynamo graph.
    part: str
    node: str
    #: The last stage whose graph still held it, e.g. "dynamo" when AOTAutograd
    #: dropped it (nothing used its outputs), "post_grad_final" when lowering did.
    last_stage: StageName


@dataclass(frozen=True)
class Occurrence:
    """One place a kernel was seen: a graph node, an output-code launch or a run-time launch."""

    compile_id: str | None
    stage: StageName
    entry: EntryKind
    node: str | None = None
    #: The custom op or triton_op the kernel ran in, e.g. "mylib::myadd".
    custom_op: str | None = None
    #: One grid per autotune config; elements are ints or symbolic expressions.
    grid: tuple[tuple[int | str, ...], ...] | None = None
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
    #: AOT functional-HOP nodes: what gets cloned or copied for the kernel, and why.
    clones: Clones | None = None
    #: output_code occurrences (one per launch) and runtime custom_op occurrences
    #: (one per extern call of the op): the launches around it. None elsewhere.
    neighbourhood: tuple[Neighbourhood, ...] | None = None
    #: Graph nodes and run-time launches from compiled code: forward, backward, recompute (a
    #: backward node or launch recomputing a forward one) or inference. None where not known.
    placement: Placement | None = None
    #: Run-time launches from an output module: the function that launched ("call", "true_graph_0")
    #: and the line of the output code it launched from.
    function: str | None = None
    line: int | None = None
    #: Eager run-time launches: the `torch.compiler.disable` that kept them out of the graph, "file:line
    #: in func" (the line of the disable): the outermost disabled function they ran inside that is an installed
    #: library's (its disable holds whatever the user's code does), else the outermost; for a launch
    #: from an autograd.Function's backward, the one its forward's launches ran inside. None: none seen.
    disabled_by: str | None = None
    #: The installed distribution `disabled_by` is in; None: the user's own code (or no disable).
    disabled_library: str | None = None
    #: Eager run-time launches from an autograd.Function's backward that the autograd engine ran (as it
    #: does when the forward ran outside every compiled graph): that forward, "file:line in Class.forward".
    backward_of: str | None = None
    #: For such a launch whose forward no disable kept out: the compile id of the graph break Dynamo met
    #: while tracing that forward (which then ran eagerly); None when no break's stack runs through it.
    forward_break: str | None = None
    #: Run-time launches from a compiled graph that ran while an autograd.Function's forward ran outside every
    #: graph (its `apply` run eagerly, as after a graph break inside it): that forward, "file:line in
    #: Class.forward". Dynamo compiled the forward's own code as graphs apart, with grad off (inference
    #: graphs): no backward is compiled with them, and the autograd engine runs the Function's backward.
    inside_forward: str | None = None


@dataclass(frozen=True)
class Resources:
    """What a kernel uses when compiled for one autotune config (`--resources`)."""

    #: The autotune config's kwargs and launch options that are set; {} without autotune (as launched).
    config: dict[str, Any]
    #: The architecture it was compiled for, e.g. "sm_90".
    target: str
    #: "gpu" (compiled for and loaded on this machine's GPU) or "compiled for sm_90" (compile-only mode).
    source: str
    registers: int | None = None
    #: Shared memory, bytes.
    shared: int | None = None
    #: Spilled registers (local memory bytes / 4, as Triton's driver counts them).
    spills: int | None = None
    num_warps: int | None = None
    num_stages: int | None = None


@dataclass(frozen=True)
class KernelGuard:
    """A guard on sizes the kernel's launch added: a call whose sizes fail it recompiles."""

    compile_id: str
    #: Over the inputs' sizes, e.g. "x.size(1) == 48" or "(x.size(0) % 16) == 0".
    guard: str
    #: The same over torch's symbols, e.g. "s27 == 48".
    symbolic: str
    #: "heuristics": a `@triton.heuristics` value computed from a size; "constexpr": a size passed to
    #: (or used to compute) a `tl.constexpr` parameter; "launch": another computation on the launch line.
    cause: Literal["heuristics", "constexpr", "launch"]
    #: The kernel parameters (or heuristics) it is about, when they can be told.
    params: tuple[str, ...] = ()
    #: Where torch added it, "file:line" (torch shortens the file to the path's end).
    where: str | None = None


@dataclass(frozen=True)
class SymbolicArg:
    """A kernel argument (or the grid) holding a symbolic size at one launch."""

    compile_id: str
    #: The parameter, or "grid".
    param: str
    #: As the graph holds it, e.g. "s77", "((u0 + 15)//16)".
    value: str
    #: What each symbol in it stands for: "s77 = x.size(0)", "u0 = n = count.item() (model.py:41)".
    symbols: tuple[str, ...] = ()
    #: An unbacked symbol (data-dependent, e.g. from `.item()`) is in it: no guard can specialise it.
    unbacked: bool = False


@dataclass(frozen=True)
class KernelRecord:
    """A user kernel as it is defined, as the capture records it (from the side table or a triton_op
    registration); the report's `Kernel` adds where torch.compile saw it."""

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
    #: `@triton.autotune(cache_results=True)` (or TRITON_CACHE_AUTOTUNING=1): eager launches keep the chosen
    #: config in Triton's disk cache. Inductor tunes a compiled launch's configs itself, without it.
    autotune_cache_results: bool = False
    #: Settings of its `@triton.autotune` torch refuses to trace a launch with ("pre_hook", "post_hook",
    #: "Config.pre_hook", "warmup", "rep", "use_cuda_graph"): Dynamo breaks the graph there, and `wrap_triton`
    #: inside a `torch.library.triton_op` fails the compile.
    untraceable_autotune: tuple[str, ...] = ()


@dataclass(frozen=True)
class Kernel(KernelRecord):
    """One distinct user kernel, keyed by its innermost JIT function."""

    entries: tuple[EntryKind, ...] = ()
    occurrences: tuple[Occurrence, ...] = ()
    #: Compile ids whose graphs hold the kernel but whose output code has no launch of it.
    missing_from_output_code: tuple[str, ...] = ()
    #: The graph nodes behind `missing_from_output_code`.
    dropped_nodes: tuple[DroppedNode, ...] = ()
    #: --resources: one per autotune config (one for a kernel without autotune).
    resources: tuple[Resources, ...] = ()
    #: Guards on sizes its launches added (a recompile risk).
    guards: tuple[KernelGuard, ...] = ()
    #: Arguments and grids holding symbolic sizes.
    symbolic_args: tuple[SymbolicArg, ...] = ()
    #: The installed distribution its source is in (Report.libraries); None: the user's own code.
    library: str | None = None
