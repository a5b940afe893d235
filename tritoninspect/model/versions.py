"""The report schema's versions: what each added, and which older reports still read.

The JSON form (`Report.to_json`) is a public interface documented in docs/json.md. Change it only
by bumping `SCHEMA_VERSION` and noting why below.

Schema changelog:
  1  first version: meta, graphs, graph_breaks, recompiles, kernels with
     entries and occurrences, opaque_ops, diagnostics; Graph.compile_time_s;
     stage post_grad_final; Occurrence.clones and .neighbourhood, Graph.code_calls
     and its totals (inductor_kernels, extern_calls, user_kernels, copies),
     Kernel.dropped_nodes; GraphBreak.headline, gb_id, doc_url, skipped_rest,
     library_frame, context, context_start, kernel, kernel_relation,
     eager_kernels, hint, hint_source; Recompile.guard, previous, changes
     (ArgChange), hint; Report.decompiled (DecompiledFrame); Kernel.resources (Resources).
     Reports written before those additions (and Meta.calls, Occurrence.scalars and
     .part) still read: `ADDED_IN_VERSION_1` lists them. From now on, adding a field
     bumps the version.
  2  Report.failure (Failure): a compile or run that raised still gives a report,
     holding everything captured before the failure. Report.recompile_limits
     (RecompileLimit); a compile that Dynamo refused at the limit is no longer listed
     as a recompile. Version 1 reports still read (`READABLE_VERSIONS`): they lack
     exactly these two fields.
  3  CodeCall.ops_source and Neighbour.ops_source: where an Inductor kernel's fused
     ops come from ("inductor": Inductor's record of the kernel's origins; "comment":
     the output code's `Original ATen` comment; "unknown": neither, ops empty).
     Before, ops missing from a comment were split out of the kernel's name, which
     also holds ops the kernel does not run. Version 1 and 2 reports still read:
     they lack these two fields (reading as "", not said).
  4  Reports read from a TORCH_TRACE log: Meta.mode "trace" (Meta.torch, .triton and
     .device are the traced run's), Meta.rank (the log's rank, None when not
     distributed or not a trace) and Meta.unknown (what a trace cannot tell: launch
     counts, eager launches, kernels inside opaque custom ops...). Report.export
     (ExportInfo, `tritoninspect export`): the exported program's signature, dynamic
     dims, kernel entries and constraints, the AOTInductor package, findings with hints;
     graph stages "export" and "aoti_output_code". GraphBreak.device_probe: in compile-only
     mode, the place ("file:line in function") where `torch.cuda.is_available()` answered
     False while Dynamo traced a function the break's user stack runs through: the break may
     be compile-only's own (a GPU run answers True there). Versions 1-3 still read: they
     lack these fields (Meta.rank None, Meta.unknown empty, Report.export None,
     GraphBreak.device_probe None). Meta.backward_skipped_calls and .params_without_grad:
     what --backward could not reach (0 and empty: not said). Report.advice (Advice): the
     default view's findings with what to change (empty in reports written before it).
  5  Kernels in sub-graphs (torch.cond / while_loop branches, invoke_subgraph bodies, recomputed
     under activation checkpointing): CodeCall.function (the output-code function a launch is
     written in: "call" or a sub-graph function such as "true_graph_0"); Neighbourhood.function,
     .function_kind, .call_sites, .caller_before, .caller_after, .recompute; Occurrence.placement
     (forward, backward, recompute, inference), .function and .line. Kernel.guards (KernelGuard:
     guards on sizes a kernel's launch added, e.g. a heuristics value or a constexpr from a size, a
     recompile risk) and Kernel.symbolic_args (SymbolicArg: arguments and grids holding symbolic
     sizes, unbacked ones marked). And the facts the advice rules rest on (issue 23), with
     merged advice: ClonedArg.uses, .made_by, .view, .fill, .shares_with, .merged, .read_after,
     .written_back (how the kernel uses a cloned argument, load / store / atomic, and where it
     comes from in the AOT graph); GraphBreak.value_uses (what the user's code does with a
     `.item()` value) and .library; Kernel.library, OpaqueOp.file / .line / .library and
     Report.libraries (Library): whose code a kernel, op or break is; Advice.kernels, .cause,
     .details, .library: findings with the same rule, cause and action merged into one.
     Report.findings (Finding, Evidence): what torch.compile changes about a user kernel's result
     or speed (issue 24), each with a rule, a severity ("error": results can differ from eager;
     "warning": speed or memory suffer; "note"), its evidence, one action, the torch source or
     issue it rests on and the torch versions affected (empty in versions 1-4: not analysed).
     Report.cudagraphs (CudagraphUse, CudagraphReason: `graph --cudagraphs`, per compiled graph
     whether Inductor's CUDA-graph tree took it, the reason tied to a kernel, recorded/replayed counts
     on a GPU, "predicted" in compile-only mode) and Report.epilogues (EpilogueFusion,
     EpilogueNeighbour: the neighbours Inductor fused into a user kernel or refused; issue 24 items 6-7).
     Versions 1-4 still read: they lack these fields (function "call", placement None, no
     guards; otherwise empty, None, False, "").
     These sets of fields were made on separate branches, each as version 5, and merged into one
     version 5. Evidence.seconds was added while version 5 was being made: reports written
     before it lack it (read as null).
  6  Meta.grad: whether the forward recorded autograd. `breaks` now runs a training step's
     forward (grad on) without its backward unless --backward asks (issue 26: its backward ran
     every backward kernel, autotuning them, for graph breaks that are all the forward's), so
     "backward: false" no longer means "under no_grad". Versions 1-5 still read: they lack it
     (null: their forward had grad on exactly when Meta.backward is true).
  7  Occurrence.disabled_by, .disabled_library and .backward_of: why an eager run-time launch ran
     outside the graph when no graph break is tied to it: the `torch.compiler.disable` it (or, from
     an autograd.Function's backward, its forward) ran inside, whose code that is, and the forward
     of the backward it ran in (fla-core's backward kernels of a forward its own disable keeps out of
     the graph). Versions 1-6 still read: they lack them (null: not known).
  8  Occurrence.forward_break: for such a backward launch whose forward no disable kept out, the
     graph break Dynamo met while tracing that forward (Liger's LigerSiLUMulFunction in compile-only
     mode: a device probe, then an import Dynamo cannot trace). Versions 1-7 still read: they lack it
     (null: not known).
  9  Kernel.autotune_cache_results: the Autotuner keeps its tuning in Triton's disk cache
     (`@triton.autotune(cache_results=True)`, or TRITON_CACHE_AUTOTUNING=1); the decorator line says so.
     Versions 1-8 still read: they lack it (false: not said).
 10  Occurrence.inside_forward: a run-time launch from a compiled graph that ran inside an autograd.Function's
     forward run eagerly (a graph break inside it): that forward. Dynamo compiled the forward's code as
     inference graphs of their own, with no backward; a `hop` row beside the Function's eager backward read
     as a contradiction. Versions 1-9 still read: they lack it (null: not known).
 11  Kernel.untraceable_autotune: the settings of the kernel's @triton.autotune torch refuses to trace a launch
     with (a Config pre_hook, ...): the custom_op advice no longer sends such a kernel to a triton_op, where
     wrap_triton fails the compile (torchao 0.18's hqq kernel, torch 2.13). Versions 1-10 still read: they lack
     it (empty: not known).
 12  GraphBreak.attempt: Dynamo's attempt at the compile that logged the break (torch's TraceId, `1/0_1`): the
     restart of a compile logs the same break again ("Skipping the function"), and both showed as `[1/0]`.
     Versions 1-11 still read: they lack it (0: the first attempt).
"""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 12
#: Versions this tritoninspect reads: every change so far only added fields.
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)

#: Fields added to schema 1 after its first release: a report written before them lacks them and
#: reads with their defaults. Every other field must be present. Closed: a new field bumps the version.
ADDED_IN_VERSION_1 = frozenset({
    "Meta.calls", "Graph.compile_time_s", "Graph.code_calls", "Graph.inductor_kernels", "Graph.extern_calls",
    "Graph.user_kernels", "Graph.copies", "Occurrence.scalars", "Occurrence.part", "Occurrence.clones",
    "Occurrence.neighbourhood", "Kernel.dropped_nodes", "Kernel.resources", "GraphBreak.headline",
    "GraphBreak.gb_id", "GraphBreak.doc_url", "GraphBreak.skipped_rest", "GraphBreak.library_frame",
    "GraphBreak.context", "GraphBreak.context_start", "GraphBreak.kernel", "GraphBreak.kernel_relation",
    "GraphBreak.eager_kernels", "GraphBreak.hint", "GraphBreak.hint_source", "Recompile.guard",
    "Recompile.previous", "Recompile.changes", "Recompile.hint", "Report.decompiled",
})
#: Version 5's advice facts (issue 23), findings, CUDA graphs and epilogues (issue 24; see the changelog
#: above): a version 1-4 report lacks them.
ADDED_IN_VERSION_5 = frozenset({
    "ClonedArg.uses", "ClonedArg.made_by", "ClonedArg.view", "ClonedArg.fill", "ClonedArg.shares_with",
    "ClonedArg.merged", "ClonedArg.read_after", "ClonedArg.written_back", "GraphBreak.value_uses",
    "GraphBreak.library", "Kernel.library", "OpaqueOp.file", "OpaqueOp.line", "OpaqueOp.library",
    "Report.libraries", "Advice.kernels", "Advice.cause", "Advice.details", "Advice.library",
    "Report.findings", "Evidence.seconds", "Report.cudagraphs", "Report.epilogues",
})
#: Fields a readable report may lack: those added in version 1, and versions 2 to 12's additions.
MAY_BE_ABSENT = ADDED_IN_VERSION_1 | {
    "Report.failure", "Report.recompile_limits", "CodeCall.ops_source", "Neighbour.ops_source",
    "Meta.rank", "Meta.unknown", "Report.export", "GraphBreak.device_probe",
    "Meta.backward_skipped_calls", "Meta.params_without_grad", "Report.advice",
    "CodeCall.function", "Neighbourhood.function", "Neighbourhood.function_kind", "Neighbourhood.call_sites",
    "Neighbourhood.caller_before", "Neighbourhood.caller_after", "Neighbourhood.recompute",
    "Occurrence.placement", "Occurrence.function", "Occurrence.line", "Kernel.guards", "Kernel.symbolic_args",
    "Meta.grad", "Occurrence.disabled_by", "Occurrence.disabled_library", "Occurrence.backward_of",
    "Occurrence.forward_break", "Kernel.autotune_cache_results", "Occurrence.inside_forward",
    "Kernel.untraceable_autotune", "GraphBreak.attempt",
} | ADDED_IN_VERSION_5


def upgraded(data: Any) -> Any:
    """An older readable report as this version's: only fields were added since, and the
    schema lets each added field be absent (`MAY_BE_ABSENT`)."""
    # `type is int`: `true` equals 1 in Python, and must not pass for version 1.
    version = data.get("schema_version") if isinstance(data, dict) else None
    if type(version) is int and version in READABLE_VERSIONS:
        return {**data, "schema_version": SCHEMA_VERSION}
    return data
