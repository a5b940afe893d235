"""Advice: what to change in the model, and why, from a saved report.

Each rule is a small pure function `rule(report, kernels) -> [Advice]` over the report and
its kernel summaries (`analyse/summary.py`), registered in `RULES` with its precondition
(`PRECONDITIONS`): the facts of the report it fires on. A rule gives its action only when
the facts show the action is right; otherwise it says the fact and a weaker, true line, or
nothing. An `Advice` holds the finding (a fact of this report), the action, the torch
behaviour the action rests on and where that lives in torch (`cite`), and the cause in one
kernel-free sentence: `advise` merges the findings with the same rule, cause and action
into one that lists the kernels (`merge`), then orders by impact.

Advice about code the user does not own (an installed library: `Report.libraries`) says so,
names the library and what the user can do from their side; no advice points at a file of
this repository. tests/test_advice.py has a test per rule on saved reports, and
tests/_advice_proofs.py applies each action to a model and compiles it again.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable, Sequence

from tritoninspect.analyse.advice_clones import CLONE_PRECONDITIONS, CLONE_RULES
from tritoninspect.analyse.advice_custom_op import custom_op_hides_kernel
from tritoninspect.analyse.advice_eager import (
    backward_advice,
    disable_action,
    disable_text,
    eager_occurrences,
    forward_disables,
)
from tritoninspect.analyse.advice_recompiles import RECOMPILE_PRECONDITION, recompiles
from tritoninspect.analyse.advice_text import (
    BROKEN,
    COPIES,
    EAGER,
    HIDDEN,
    INFO,
    RECOMPILES,
    TRITON_OP_DOC,
    in_library,
    join,
    library_of,
    plural,
    times,
    upstream,
)
from tritoninspect.analyse.break_causes import refused_by_wrap_triton
from tritoninspect.analyse.breaks import library_place
from tritoninspect.analyse.hazards.bridge import HAZARD_PRECONDITION, hazard_advice
from tritoninspect.analyse.summary import KernelSummary, short_location, summarise
from tritoninspect.model.report import Advice, GraphBreak, Report

__all__ = [
    "Advice", "BROKEN", "COPIES", "EAGER", "HIDDEN", "INFO", "PRECONDITIONS", "RECOMPILES", "RULES", "advise",
    "merge", "with_advice",
]

Rule = Callable[[Report, Sequence[KernelSummary]], list[Advice]]


def kernel_missing(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """A kernel held by a graph whose compiled code never launches it."""
    advice = []
    for k in kernels:
        if not k.missing:
            continue
        advice.append(Advice(
            rule="kernel_missing", impact=BROKEN, kernel=k.name, kernels=(k.name,),
            finding=f"{k.name} is in the graph of {', '.join(k.missing)} but its compiled code never launches "
                    "it.",
            action="Use what the kernel writes (return it, or read it later): a launch whose outputs nothing "
                   "reads is removed. `--detail` shows the stage that dropped it.",
            because="After functionalization the launch is triton_kernel_wrapper_functional, a node without "
                    "side effects; dead-code elimination drops it when none of its outputs is used.",
            cite="torch/_higher_order_ops/triton_kernel_wrap.py (triton_kernel_wrapper_functional); "
                 "torch/fx/graph.py (eliminate_dead_code)",
            cause="compiled code never launches kernels whose outputs nothing reads",
        ))
    return advice


def mutation_fallback(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """Mutation analysis failed: torch assumed every input is written."""
    advice = []
    for k in kernels:
        if not k.fallbacks:
            continue
        causes = _fallback_causes(report, k.name)
        asm = any("tt.elementwise_inline_asm" in c for c in causes)
        owner = k.library
        lib = library_of(report, owner)
        if asm and owner is None:
            action = (f"If the tl.inline_asm_elementwise in {k.name} has no side effects (it only computes its "
                      "result from its operands), pass pure=True: the analysis then reads past it. With side "
                      "effects, leave it: the copies keep it correct.")
        elif owner is not None:
            action = (f"{k.name} is {lib.distribution if lib else owner}'s code (installed library, not yours): "
                      f"{upstream(lib, owner)} with the cause `--detail` shows.")
        else:
            action = ""
        advice.append(Advice(
            rule="mutation_fallback", impact=COPIES, kernel=k.name, kernels=(k.name,), library=owner,
            finding=f"mutation analysis failed for {k.name} in {', '.join(k.fallbacks)}: torch assumed it "
                    "writes every input.",
            action=action,
            because="When identify_accessed_tensors raises, torch puts every tensor argument in "
                    "tensors_to_clone: extra copies, and no epilogue fusion.",
            cite="torch/_higher_order_ops/triton_kernel_wrap.py (identify_accessed_tensors)",
        ))
    return advice


def _fallback_causes(report: Report, kernel: str) -> list[str]:
    k = report.kernel(kernel)
    found = [o.mutation_analysis_fallback for o in (k.occurrences if k else ()) if o.mutation_analysis_fallback]
    return list(dict.fromkeys(found))


def eager_launches(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """Launches outside every compiled graph (after a graph break, in a disabled or skipped frame, in
    the backward of an autograd.Function whose forward ran eagerly: `advice_eager`)."""
    advice = []
    for k in kernels:
        if not k.eager_launches:
            continue
        # A launch from a backward is counted with that backward, not with the forward's break
        # (fla's chunk_fwd_kernel_h, recomputed in ChunkGLAFunction's backward).
        forward = k.eager_launches - sum(o.launches or 0 for o in eager_occurrences(report, k.name) if o.backward_of)
        if forward > 0:
            advice.append(_eager_forward(report, k.name, forward))
        advice += backward_advice(report, k.name)
    return advice


def _eager_forward(report: Report, kernel: str, launches: int) -> Advice:
    """The kernel's launches outside a backward: after the graph break tied to it, or with none."""
    # The break that made it eager first; one merely next to it (its kernel) only when none did.
    brk = next((b for b in report.graph_breaks if kernel in b.eager_kernels),
               next((b for b in report.graph_breaks if kernel == b.kernel), None))
    place = short_location(brk.file, brk.line) if brk is not None else ""
    cause = f", after the graph break at {place}" if brk is not None else ""
    action, owner = _break_action(report, brk)
    inside = ""
    disabled, library = forward_disables(eager_occurrences(report, kernel))
    # The user's call of a library's disabled function (fla's chunk_gla) breaks at the user's line, whose
    # hint says to drop the disable: that disable is the library's, so say whose it is and what fits.
    if disabled and library and (brk is None or (brk.library is None and "compiler.disable" in brk.headline)):
        action, owner = disable_action(report, disabled, library), library
        inside = f", inside {disable_text(report, disabled, library)}"
    elif disabled and brk is None:  # the user's own disable, no break tied to the launch: it is the cause
        action, inside = disable_action(report, disabled, None), f", inside {disable_text(report, disabled, None)}"
    # Only the break the launch is tied to: another break's probe says nothing of this launch (fla's backward
    # kernels of a disabled forward were said to "follow" Liger's infer_device probe).
    probed = [brk] if brk is not None and brk.device_probe else []
    if probed:  # compile-only mode's CPU answer may have made the break: check on a GPU first
        action = _check_on_a_gpu(report, action)
    return Advice(
        rule="eager_launches", impact=EAGER, kernel=kernel, kernels=(kernel,), library=owner,
        finding=f"{kernel} ran eagerly {times(launches)}{cause}{inside}, outside every compiled graph"
                f"{_probe_caveat(probed, brk is not None)}.",
        action=action,
        because="Code after a graph break, and frames Dynamo skips or that torch.compiler.disable marks, "
                "run in plain Python: their kernel launches are never traced, so Inductor cannot see, "
                "fuse or reorder them.",
        cite="torch/_dynamo/symbolic_convert.py (graph breaks); torch.compiler.disable",
        cause=(f"kernels ran eagerly after the graph break at {place}{inside}" if brk is not None
               else f"kernels ran eagerly{inside}, outside every compiled graph" if inside
               else "kernels ran eagerly, outside every compiled graph, with no graph break tied to them"),
    )


def _probe_caveat(probed: Sequence[GraphBreak], tied: bool) -> str:
    """What a finding adds when compile-only mode's device probe may have made its graph break."""
    if not probed:
        return ""
    probe = _probe_place(probed[0].device_probe)
    if tied:
        return f"; that break follows a device probe answered for the CPU in compile-only mode ({probe}): " \
               "a GPU run may not break there, and may compile this launch"
    follow = "follows" if len(probed) == 1 else "follow"
    return (f"; compile-only mode: {plural(len(probed), 'graph break')} of this run {follow} a device probe "
            f"answered for the CPU ({probe}), so a GPU run may compile this launch")


def _probe_place(frame: str | None) -> str:
    """A device probe's "file:line in function", its file said as everywhere else."""
    function = (frame or "").rsplit(" in ", 1)[1] if " in " in (frame or "") else ""
    where = short_location(*_frame(frame))
    return f"{where} in {function}" if function else where


def _check_on_a_gpu(report: Report, then: str) -> str:
    """Check on a GPU first, then `then`: the probe may have made the break, or may not (a `print` after
    the user's own `torch.cuda.is_available()` breaks on any device), so the break's own action stays."""
    target = shlex.quote(report.meta.target) if report.meta.target else "TARGET"
    return (f"Check on a GPU before changing code for this: `tritoninspect graph {target}` on a machine with one "
            "(or `tritoninspect graph LOG` on a TORCH_TRACE log of a GPU run) shows whether the break is there. "
            f"If it is: {then}")


def _break_action(report: Report, brk: GraphBreak | None) -> tuple[str, str | None]:
    """What to do about the break a kernel ran eagerly after, and the library it is in (if any)."""
    if brk is None:
        return (f"Find what stops Dynamo before the launch: `{_breaks_command(report)}` names each graph break "
                "and its cause."), None
    if brk.library is not None:
        return _library_break_action(report, brk), brk.library
    return (brk.hint or f"`{_breaks_command(report)}` shows the break's cause."), None


def _library_break_action(report: Report, brk: GraphBreak) -> str:
    lib, where = library_of(report, brk.library), _in_library_code(report, brk)
    bare = _bare_heuristics(report, brk)
    if refused_by_wrap_triton(f"{brk.headline}\n{brk.reason}") or bare:
        # wrap_triton runs the same checks on the launch: an own triton_op fails the compile instead.
        change = f" (the change: {brk.hint.rstrip('.')})" if brk.hint else ""
        refused = (f"torch.library.wrap_triton refuses {join(bare)}: its outermost decorator is "
                   "@triton.heuristics, and wrap_triton takes only a triton.jit or triton.autotune kernel" if bare
                   else "Torch refuses that launch inside a torch.library.triton_op too (wrap_triton checks it the "
                        "same way, and the compile fails)")
        # A custom_op passes no gradient without register_autograd: said where the run trains.
        grads = (" and torch.library.register_autograd giving it the library's backward (without it no gradient "
                 "passes the op)" if report.meta.backward else "")
        return (f"{where}, so its kernels run eagerly. {refused}, so from your side: call the library from a "
                f"torch.library.custom_op of your own{grads} ({TRITON_OP_DOC}), which keeps one graph with the "
                f"kernels opaque inside the op, or {upstream(lib, brk.library)}{change}.")
    return (f"{where}, so its kernels run eagerly. From your side: launch the library's kernels from an op of your own "
            f"registered with torch.library.triton_op and torch.library.wrap_triton ({TRITON_OP_DOC}), or "
            f"{upstream(lib, brk.library)}.")


def _library_split_action(report: Report, brk: GraphBreak) -> str:
    """A library's graph break no kernel ran eagerly after (Liger's cross entropy reads .item(): its kernel
    compiles in the graph after the break): the cost is the cut, not eager kernels, which the action said."""
    lib = library_of(report, brk.library)
    side = f"Torch's hint, for your side: {brk.hint.rstrip('.')}. Otherwise" if brk.hint else "To change that,"
    # A trace records no launches: whether kernels ran eagerly after the break is unknown there.
    eager = ("" if report.meta.mode == "trace" else
             "; no kernel ran eagerly because of it (they compile in the graphs on either side), but nothing fuses "
             "across it")
    return f"{_in_library_code(report, brk)}{eager}. {side} {upstream(lib, brk.library)}."


def _in_library_code(report: Report, brk: GraphBreak) -> str:
    """"The break is in liger_kernel 0.8.5's code at f.py:3 (installed library, not yours): it breaks the graph
    (...)": whose code, where (when the break names a library frame), and what the code does."""
    lib = library_of(report, brk.library)
    name = f"{lib.distribution} {lib.version}" if lib else str(brk.library)
    where = short_location(*_frame(library_place(brk)))
    at = f" at {where}" if where and where != "-" else ""
    what = ("disables compilation around its code (torch.compiler.disable)" if "compiler.disable" in brk.headline
            else f"breaks the graph ({brk.title()})")
    return f"The break is in {name}'s code{at} (installed library, not yours): it {what}"


def _bare_heuristics(report: Report, brk: GraphBreak) -> list[str]:
    """The break's kernels whose outermost decorator is @triton.heuristics (cut-cross-entropy's): a
    `triton.runtime.Heuristics` that torch.library.wrap_triton refuses ("wrap_triton only works on
    functions annotated with triton.jit or triton.autotune", torch/_library/triton.py, torch 2.11-2.14)."""
    kernels = [report.kernel(name) for name in sorted(brk.tied_kernels())]
    return [k.name for k in kernels if k is not None and tuple(k.decorators[:1]) == ("heuristics",)]


def _frame(frame: str | None) -> tuple[str | None, int | None]:
    loc = (frame or "").rsplit(" in ", 1)[0]
    file, _, line = loc.rpartition(":")
    return (file, int(line)) if file and line.isdigit() else (frame, None)


def _breaks_command(report: Report) -> str:
    """The `breaks` command for this report's own target, ready to paste (TARGET if unknown)."""
    return f"tritoninspect breaks {shlex.quote(report.meta.target) if report.meta.target else 'TARGET'}"


def graph_breaks(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """Graph breaks not already explained by a kernel's eager launches, one per place and cause."""
    eager = {k.name for k in kernels if k.eager_launches}
    places: dict[tuple[object, ...], list[GraphBreak]] = {}
    for b in report.breaks_shown():  # not those tied only to kernels `graph --kernel NAME` left out
        if b.tied_kernels() & eager:
            continue  # said with the kernel's eager launches
        places.setdefault((b.file, b.line, b.title()), []).append(b)
    advice = []
    for (file, line, headline), group in places.items():
        b = group[0]
        near = f" next to {b.kernel}" if b.kernel else ""
        logged = f" (logged {len(group)} times)" if len(group) > 1 else ""
        skipped = "; Dynamo skipped the frame" if any(g.frame_skipped for g in group) else ""
        probed = next((g for g in group if g.device_probe), None)
        probe = (f"; it follows a device probe answered for the CPU in compile-only mode "
                 f"({_probe_place(probed.device_probe)}): "
                 "a GPU run may not break here") if probed else ""
        cause = f"`{_breaks_command(report)}` shows its cause."
        action = (_library_split_action(report, b) if b.library is not None else
                  b.hint or (cause if probed else f"If the break is not intended, {cause}"))
        if probed:
            action = _check_on_a_gpu(report, action)
        advice.append(Advice(
            rule="graph_breaks", impact=EAGER if skipped else INFO, kernel=b.kernel,
            kernels=(b.kernel,) if b.kernel else (), library=b.library,
            finding=f"graph break at {short_location(b.file, b.line)}{near}{logged}: {headline}{skipped}{probe}.",
            action=action,
            because="Each graph break ends one graph and starts another: Inductor optimises each part alone "
                    "and nothing fuses across the break.",
            cite="torch/_dynamo/symbolic_convert.py (graph breaks)",
        ))
    return advice


def backward_cut(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """--backward ran, but autograd never reached some parameters (or no output required grad)."""
    meta = report.meta
    if not meta.backward or not (meta.backward_skipped_calls or meta.params_without_grad):
        return []
    # A raw launch (hop) or an eager one writes into a tensor autograd did not make: no gradient passes it
    # unless it sits in a function with a backward (autograd.Function: a backward graph of its own). A
    # triton_op or custom_op passes one when register_autograd gave it a formula, which the report cannot
    # see (its backward need not launch the kernel): it is named only when no raw launch explains the cut.
    unseen = _in_no_graph(report, meta.params_without_grad)
    if unseen and len(unseen) == len(meta.params_without_grad) and not meta.backward_skipped_calls:
        return [_unused_params(unseen)]
    raw = [k for k in kernels if {"hop", "eager"} & set(k.entries) and not _has_backward(report, k.name)]
    cut = raw or [k for k in kernels
                  if {"custom_op", "triton_op"} & set(k.entries) and not _has_backward(report, k.name)]
    seen = [p for p in meta.params_without_grad if p not in unseen]
    params = ", ".join(seen) or "the model's parameters"
    if unseen:
        params += f" ({', '.join(unseen)} {'is' if len(unseen) == 1 else 'are'} in no compiled graph: unused, or used eagerly)"
    who = (f"{join(_told_apart(cut))} {'has' if len(cut) == 1 else 'have'} no autograd formula, so"
           if cut else "an operation without an autograd formula cut the graph, so")
    if meta.backward_skipped_calls:
        # Not "requested": backward is on by default when parameters require grad (most models).
        finding = (f"backward was to run (--backward, or parameters requiring grad) but no output requires grad "
                   f"({plural(meta.backward_skipped_calls, 'call')} ran forward only): {who} no gradient reaches "
                   f"{params}.")
    else:
        finding = f"backward ran, but {who} no gradient reaches {params}."
    return [Advice(
        rule="backward_cut", impact=BROKEN, kernel=cut[0].name if len(cut) == 1 else None,
        kernels=tuple(k.name for k in cut),
        finding=finding,
        action="Give the kernel a backward: register it with torch.library.triton_op and "
               "torch.library.register_autograd, or wrap the launch in a torch.autograd.Function with a "
               f"backward ({TRITON_OP_DOC}).",
        because="A Triton launch writes into a tensor autograd did not create (torch.empty_like): its output "
                "has no grad_fn, so nothing before it gets a gradient; a triton_op or custom_op gets one only "
                "from register_autograd.",
        cite="torch/_library/autograd.py (register_autograd); torch/autograd/function.py (Function)",
    )]


def _in_no_graph(report: Report, params: Sequence[str]) -> list[str]:
    """Of `params` (dotted names), those no Dynamo graph takes as an input: Dynamo names a module's parameter
    `L_self_modules_dyt_parameters_alpha_` (torch 2.11-2.14, nn modules inlined). A parameter the forward never
    used gets no gradient either, and no kernel cut it (a Liger model with an unused LigerDyT blamed its
    JSD and KL-divergence kernels)."""
    if not params:
        return []
    codes = [g.code for g in report.graphs if g.stage == "dynamo"]

    def placeholder(name: str) -> str:
        *modules, param = name.split(".")
        return "L_self_" + "".join(f"modules_{m}_" for m in modules) + f"parameters_{param}_"

    return [p for p in params if not any(placeholder(p) in code for code in codes)]


def _unused_params(params: Sequence[str]) -> Advice:
    """Parameters without a gradient that no compiled graph uses: nothing says a kernel cut them."""
    return Advice(
        rule="backward_cut", impact=INFO,
        finding=f"backward ran, but no gradient reaches {', '.join(params)}, which no compiled graph uses: unused "
                "by the forward, or used only by code that ran eagerly.",
        action="If they are meant to train, check that the forward uses them (a layer defined but never "
               "called, a head left out of the loss).",
        because="A parameter gets a gradient only through the operations that used it; one in no compiled graph "
                "was not used there.",
        cite="torch/autograd/__init__.py (backward)",
    )


def _told_apart(kernels: Sequence[KernelSummary]) -> list[str]:
    """The kernels' names, each with its source where two of them share a name (two modules' `scale_kernel`)."""
    names = [k.name for k in kernels]
    return [f"{k.name} ({k.source})" if names.count(k.name) > 1 else k.name for k in kernels]


def _has_backward(report: Report, name: str) -> bool:
    k = report.kernel(name)
    return k is not None and any(
        o.part == "backward" or (o.subgraph or "").startswith(("fwd_body", "bwd_body")) for o in k.occurrences)


#: Every rule, by name, in the order they run (ties in impact keep this order).
#: The clone rules whose action was proved by applying it (tests/_advice_proofs.py).
_PROVED_CLONE_RULES = ("clone_merged_allocations", "clone_shared_allocation", "clone_input_view")


def hazards(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """Issue 24's findings (analyse/hazards/): each error or warning, ranked with the rest. A kernel's
    clone_cost warning steps aside where a proved clone rule already gives its action (the finding
    itself stays in `Report.findings`, with its evidence)."""
    proved = {a.kernel for rule in _PROVED_CLONE_RULES for a in CLONE_RULES[rule](report, kernels)}
    return [a for a in hazard_advice(report, kernels) if not (a.rule == "clone_cost" and a.kernel in proved)]


def _library_aware(rule: Rule) -> Rule:
    """`rule` whose action, on an installed library's kernel, says it is the library's code to change."""
    def aware(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
        owners = {k.name: k.library for k in kernels if k.library}
        return [in_library(report, a, owners.get(a.kernel or "")) for a in rule(report, kernels)]

    aware.__doc__ = rule.__doc__
    return aware


RULES: dict[str, Rule] = {
    "kernel_missing": kernel_missing,
    "backward_cut": backward_cut,
    "custom_op_hides_kernel": custom_op_hides_kernel,
    "eager_launches": eager_launches,
    "graph_breaks": graph_breaks,
    **{name: _library_aware(rule) for name, rule in CLONE_RULES.items()},
    "mutation_fallback": mutation_fallback,
    "recompiles": recompiles,
    "hazards": hazards,
}

#: What each rule fires on, in terms of the report's facts (docs/advice.md lists them).
PRECONDITIONS: dict[str, str] = {
    "kernel_missing": "a graph of compile C holds the kernel's launch node, and C's output code has no launch of "
                      "it (Kernel.missing_from_output_code).",
    "backward_cut": "backward was to run (Meta.backward) and a call's outputs held no tensor requiring grad "
                    "(Meta.backward_skipped_calls), or parameters requiring grad got none "
                    "(Meta.params_without_grad); it names the kernels that entered without a backward graph of "
                    "their own.",
    "custom_op_hides_kernel": "the kernel launched at run time inside a torch.library.custom_op that a compiled "
                              "graph calls (entry custom_op). The action depends on who registered the op "
                              "(OpaqueOp.library): the user (register it as a triton_op) or an installed "
                              "library (wrap its kernel yourself, or ask upstream).",
    "eager_launches": "the kernel launched outside every compiled graph (runtime launches of entry eager). The "
                      "action is the hint of the graph break tied to it (GraphBreak.kernel / .eager_kernels), "
                      "library-aware when the break is in an installed library's code (GraphBreak.library) or "
                      "the disable it calls is (Occurrence.disabled_library); "
                      "launches from an autograd.Function's backward (Occurrence.backward_of): the disable its "
                      "forward's kernels ran inside (Occurrence.disabled_by, .disabled_library), whose code it is; "
                      "without a tied break or disable, the `breaks` command.",
    "graph_breaks": "a graph break not already said with a kernel's eager launches. The action is the break's "
                    "hint, given only for a known cause; for `.item()` it depends on what the value feeds "
                    "(GraphBreak.value_uses): capture_scalar_outputs only when every use is a size or a kernel "
                    "argument, torch.where when a use is a Python branch, else a conditional line.",
    **CLONE_PRECONDITIONS,
    "mutation_fallback": "torch's mutation analysis raised for the kernel (Occurrence.mutation_analysis_fallback). "
                         "pure=True is suggested only when the failing op is tt.elementwise_inline_asm in the "
                         "user's own kernel, and only for asm without side effects; a library's kernel gets the "
                         "upstream line; otherwise the finding alone.",
    "recompiles": RECOMPILE_PRECONDITION,
    "hazards": HAZARD_PRECONDITION,
}


def advise(report: Report, kernels: Sequence[KernelSummary] | None = None) -> list[Advice]:
    """Every rule's advice for `report`, merged by cause (`merge`), highest impact first."""
    kernels = summarise(report) if kernels is None else kernels
    found = [a for rule in RULES.values() for a in rule(report, kernels)]
    return sorted(merge(found), key=lambda a: -a.impact)


def merge(advice: Sequence[Advice]) -> list[Advice]:
    """One finding per cause: findings with the same rule, cause, action and library (and a cause
    at all) become one that says the cause and lists the kernels, each finding kept in `details`.
    Order: where the first of each group was."""
    groups: dict[tuple[object, ...], list[Advice]] = {}
    for i, a in enumerate(advice):
        key = (a.rule, a.cause, a.action, a.library) if a.cause else (i,)
        groups.setdefault(key, []).append(a)
    return [group[0] if len(group) == 1 else _merged(group) for group in groups.values()]


def _merged(group: list[Advice]) -> Advice:
    first = group[0]
    kernels = tuple(dict.fromkeys(k for a in group for k in (a.kernels or ((a.kernel,) if a.kernel else ()))))
    listed = f" ({plural(len(kernels), 'kernel')}: {', '.join(kernels)})" if kernels else ""
    return dataclasses.replace(
        first, kernel=None, kernels=kernels, impact=max(a.impact for a in group),
        finding=f"{first.cause[0].upper()}{first.cause[1:]}{listed}.",
        details=tuple(a.finding for a in group),
    )


def with_advice(report: Report) -> Report:
    """`report` holding its advice (`Report.advice`), computed when it holds none."""
    if report.advice:
        return report
    return dataclasses.replace(report, advice=tuple(advise(report)))
