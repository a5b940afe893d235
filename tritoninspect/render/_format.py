"""Plain-string formatting shared by the renderers: compile ids, grids, locations, decorators."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tritoninspect.analyse.emulation import availability_probed, tensor_probe_places
from tritoninspect.analyse.summary import short_location
from tritoninspect.model.report import Entry, Kernel, KernelGuard, Meta, Occurrence, OpaqueOp, Report, SymbolicArg
from tritoninspect.textformats.output_code import custom_ops_called, subgraph_kind

#: Stages that hold graph nodes (not launches), where `in_output_code` is meaningful.
GRAPH_STAGES = ("dynamo", "aot_forward", "aot_backward", "aot_inference", "post_grad", "post_grad_final")

#: Entries under which Inductor sees the kernel's launch as a graph node.
VISIBLE_ENTRIES = (Entry.HOP.value, Entry.TRITON_OP.value)

#: Placeholder for an empty table cell.
NONE = "-"


def compile_id_key(compile_id: str | None) -> tuple[Any, ...]:
    """Sort key for ids like "0/0", "1/0", "10/2": numeric parts compare as numbers."""
    if compile_id is None:
        return ((2, 0, ""),)  # launches outside any compile sort last
    parts = re.split(r"(\d+)", compile_id)
    # Numbers before text at each place: "!0/0/0" (compiled autograd) beside "0/0" compares int to str otherwise.
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p)


def sorted_ids(ids: Iterable[str | None]) -> list[str]:
    """Distinct non-empty compile ids in natural order."""
    return sorted({i for i in ids if i}, key=compile_id_key)


def plural(count: int, word: str, many: str | None = None) -> str:
    """ "1 graph", "2 graphs"; `many` for irregular plurals ("launches")."""
    return f"{count} {word}" if count == 1 else f"{count} {many or word + 's'}"


def first_line(text: str) -> str:
    """The first non-blank line of a message (break reasons run to many lines)."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def location(file: str | None, line: int | None, *, cwd: Path | None = None) -> str:
    """`file:line` for a table or a line of text, as the overview says it (`analyse.summary.short_path`:
    `package/module.py` for an installed package, relative to cwd when under it, else the last two path
    parts), so one file reads the same everywhere; the full path stays in the JSON report."""
    from tritoninspect.analyse.summary import short_location

    return short_location(file, line, cwd) if file else NONE


def grid_text(grid: tuple[Any, ...]) -> str:
    """One grid as "(4, 1, 1)"; symbolic elements keep their expression text."""
    return "(" + ", ".join(str(g) for g in grid) + ")"


def grids_text(grids: tuple[tuple[Any, ...], ...] | None) -> str:
    """One grid per autotune config, comma-joined; identical grids are shown once."""
    if not grids:
        return NONE
    return ", ".join(distinct_grids(grids))


def distinct_grids(grids: tuple[tuple[Any, ...], ...]) -> list[str]:
    """The grids as text, each distinct one once, in config order."""
    return list(dict.fromkeys(grid_text(g) for g in grids))


def kv_text(values: Mapping[str, Any] | None) -> str:
    """ "BLOCK=16, EVEN=True" from a mapping."""
    if not values:
        return NONE
    return ", ".join(f"{k}={v}" for k, v in values.items())


def config_text(config: Mapping[str, Any]) -> str:
    """An autotune config on one line; nested dicts (Triton's `kwargs`) are flattened first."""
    flat: dict[str, Any] = {}
    nested = {k: v for k, v in config.items() if isinstance(v, Mapping)}
    for inner in nested.values():
        flat.update(inner)
    flat.update({k: v for k, v in config.items() if k not in nested and v is not None})
    return kv_text(flat) if flat else "{}"


def decorators_text(kernel: Kernel) -> str:
    """The decorator stack as the user wrote it, e.g. `@autotune(configs=2, key=[n]) @jit`."""
    return " ".join(_decorator(name, kernel) for name in kernel.decorators) or NONE


def _decorator(name: str, kernel: Kernel) -> str:
    if name == "autotune":
        key = ", ".join(kernel.autotune_key)
        cached = ", cache_results=True" if kernel.autotune_cache_results else ""
        return f"@autotune(configs={len(kernel.autotune_configs)}, key=[{key}]{cached})"
    if name == "heuristics" and kernel.heuristics:
        return f"@heuristics({', '.join(kernel.heuristics)})"
    return f"@{name}"


def compile_ids(kernel: Kernel) -> list[str]:
    """Compile ids of every occurrence (a kernel inside a custom op: the graph calling the op), as the
    text's kernel table and summary give them."""
    return sorted_ids(o.compile_id for o in kernel.occurrences)


def graph_compile_ids(kernel: Kernel) -> list[str]:
    """Compile ids whose graphs hold the kernel as a node Inductor can see."""
    return sorted_ids(
        o.compile_id for o in kernel.occurrences if o.stage in GRAPH_STAGES and o.entry in VISIBLE_ENTRIES
    )


def custom_ops(kernel: Kernel, entry: str) -> list[str]:
    """Distinct custom op names the kernel ran in under one entry kind."""
    names = (o.custom_op for o in kernel.occurrences if o.entry == entry and o.custom_op)
    return list(dict.fromkeys(names))


def fallback_occurrences(kernel: Kernel) -> list[Occurrence]:
    """Occurrences where mutation analysis failed and every input was assumed mutated."""
    return [o for o in kernel.occurrences if o.mutation_analysis_fallback]


def output_code_status(kernel: Kernel) -> str:
    """yes / no / n/a / "inside custom_op" / "MISSING in 1/0" for the kernel table.

    "n/a" means the kernel sat in graphs but no output code was captured to check against.
    """
    if kernel.missing_from_output_code:
        return "MISSING in " + ", ".join(sorted_ids(kernel.missing_from_output_code))
    occurrences = kernel.occurrences
    if any(o.in_output_code for o in occurrences) or any(o.stage == "output_code" for o in occurrences):
        return "yes"
    in_graphs = [o for o in occurrences if o.stage in GRAPH_STAGES and o.entry in VISIBLE_ENTRIES]
    if in_graphs and all(o.in_output_code is None for o in in_graphs):
        return "n/a"
    if Entry.CUSTOM_OP.value in kernel.entries and not in_graphs:
        # Not a bug: the output code calls the op, which launches the kernel at run time.
        return "inside custom_op"
    return "no"


def graph_name(stage: str, part: str) -> str:
    """ "aot_forward" or "output_code_forward": the part is added unless the stage already names it."""
    if not part or stage.endswith(f"_{part}"):
        return stage
    return f"{stage}_{part}"


def verdict(kernel: Kernel) -> str:
    """One sentence on what torch.compile could do with the kernel, for the report's end."""
    parts = [*_visible_clauses(kernel), *_hidden_clauses(kernel)]
    if not parts:
        parts = ["seen, but no entry into torch.compile was recorded"]
    return f"{kernel.name}: " + "; ".join(parts) + "."


def _visible_clauses(kernel: Kernel) -> list[str]:
    entries = [e for e in kernel.entries if e in VISIBLE_ENTRIES]
    if not entries:
        return []
    ids = graph_compile_ids(kernel)
    visible = f"visible to Inductor ({', '.join(entries)}) in {plural(len(ids), 'graph')}"
    if kernel.missing_from_output_code:
        missing = ", ".join(sorted_ids(kernel.missing_from_output_code))
        visible += f", but MISSING from the output code of {missing}"
    clauses = [visible, *_inside_forward_clauses(kernel)]
    fallbacks = sorted_ids(o.compile_id for o in fallback_occurrences(kernel))
    if fallbacks:
        clauses.append(f"mutation analysis fell back in {', '.join(fallbacks)} (every input assumed written)")
    return clauses


def _inside_forward_clauses(kernel: Kernel) -> list[str]:
    """Launches from graphs compiled inside an autograd.Function's forward that ran outside every graph (a
    graph break inside it): said, or "visible" beside that Function's eager backward reads as a contradiction."""
    forwards: dict[str, list[Occurrence]] = {}
    for o in kernel.occurrences:
        if o.stage == "runtime" and o.inside_forward and o.compile_id:
            forwards.setdefault(o.inside_forward, []).append(o)
    clauses = []
    for forward, occurrences in forwards.items():
        location, _, function = forward.rpartition(" in ")
        file, _, line = location.rpartition(":")
        place = short_location(file, int(line) if line.isdigit() else None)
        ids = ", ".join(sorted_ids(o.compile_id for o in occurrences))
        graphs = "inference graph" if all(o.placement == "inference" for o in occurrences) else "graph"
        clauses.append(f"launched inside {function} ({place}), which ran outside every compiled graph: Dynamo "
                       f"compiled that forward's own code apart ({graphs} {ids}), so no backward is compiled with it")
    return clauses


def _hidden_clauses(kernel: Kernel) -> list[str]:
    clauses = []
    if Entry.CUSTOM_OP.value in kernel.entries:
        ops = ", ".join(custom_ops(kernel, Entry.CUSTOM_OP.value)) or "a custom op"
        clauses.append(f"opaque inside custom_op {ops}: Inductor cannot see or fuse it (a "
                       "torch.library.triton_op launching it through wrap_triton would let Inductor see it)")
    if Entry.EAGER.value in kernel.entries:
        clauses.append("launched eagerly outside compiled graphs")
    return clauses


def kernels_inside(report: Report, op: OpaqueOp) -> list[str]:
    """Kernels seen launching inside an opaque op at its compile id.

    `OpaqueOp.kernels` is used when set; otherwise the kernels' own run-time
    occurrences tell (schema 1 cannot load a report whose `OpaqueOp.kernels`
    is non-empty, see tests/test_render.py, so this is the usual path).
    """
    if op.kernels:
        return list(op.kernels)
    return [
        k.name
        for k in report.kernels
        if any(o.custom_op == op.op and o.compile_id == op.compile_id and o.entry == Entry.CUSTOM_OP.value
               for o in k.occurrences)
    ]


def backward_text(meta: Meta) -> str:
    """`--backward` in the header: "yes", "no", or what it could not do (its outputs required no grad)."""
    if not meta.backward:
        # `breaks` runs a training step's forward without its backward: say so, and how to get it.
        return "no (forward with grad on; --backward runs it)" if meta.grad else "no"
    skipped = meta.backward_skipped_calls
    if not skipped:
        return "yes"
    if skipped >= meta.calls:
        return "requested, not run (no output requires grad)"
    return f"yes (not run for {skipped} of {meta.calls} calls: no output required grad)"


def no_kernels_text(report: Report) -> str:
    """What to say when a report lists no user kernel: after a failure, that the compile stopped
    before any ran, and the user ops the graphs call whose kernels it never reached."""
    if report.failure is None:
        probes = tensor_probe_places(report)
        if probes is not None:
            return ("no user-defined Triton kernels were seen: compile-only mode runs on CPU tensors, and the code "
                    f"asked a tensor whether it is on CUDA, so it may have taken its CPU path at: {probes}; a GPU "
                    "run may launch kernels there")
        if availability_probed(report):
            return ("no user-defined Triton kernels were seen: compile-only mode answered torch.cuda.is_available() "
                    "False to the code (the compile-only diagnostic names where), so it may have taken its no-GPU "
                    "path; a GPU run may launch kernels there")
        return "no user-defined Triton kernels were seen"
    ops = list(dict.fromkeys(op for g in report.graphs if g.stage == "dynamo" for op in custom_ops_called(g.code)))
    called = f"; the Dynamo graphs call {', '.join(ops)}, whose kernels the compile did not reach" if ops else ""
    return f"no user-defined Triton kernel was seen before the failure{called}"


def subgraph_place(o: Occurrence) -> str:
    """Where in the compiled program an occurrence sits, when that is more than the graph itself:
    "recomputed in the backward" (activation checkpointing) and, for launches, the output-code
    sub-graph function ("in true_graph_0, a torch.cond branch"). "" otherwise."""
    parts = ["recomputed in the backward"] if o.placement == "recompute" else []
    functions = [o.function] if o.function else [n.function for n in o.neighbourhood or ()]
    for function in dict.fromkeys(f for f in functions if f and f != "call"):
        kind = subgraph_kind(function)
        parts.append(f"in {function}" + (f", a {kind}" if kind else ""))
    if o.placement != "recompute" and any(n.recompute for n in o.neighbourhood or ()):
        parts.append("one launch recomputes the forward's" if len(o.neighbourhood or ()) > 1 else "recomputes the forward's")
    return "; ".join(parts)


#: What each cause of a kernel's guard is, in words.
_GUARD_CAUSES = {"heuristics": "@triton.heuristics", "constexpr": "constexpr", "launch": "the launch"}


def guard_text(guard: KernelGuard) -> str:
    """`x.size(1) == 48 [0/0]: constexpr N_COLS (model.py:36); a call where it fails recompiles`."""
    params = f" {', '.join(guard.params)}" if guard.params else ""
    where = f" ({guard.where})" if guard.where else ""
    return (f"{guard.guard} [{guard.compile_id}]: {_GUARD_CAUSES.get(guard.cause, guard.cause)}{params}{where}; "
            "a call where it fails recompiles")


def symbolic_arg_text(arg: SymbolicArg) -> str:
    """`n = u0 [0/0]: u0 = n = (x > 0).sum().item() (model.py:41), unbacked`."""
    known = [s for s in arg.symbols if " = " in s]
    said = f": {'; '.join(known)}" if known else ""
    return f"{arg.param} = {arg.value} [{arg.compile_id}]{said}" + (", unbacked (data-dependent)" if arg.unbacked else "")
