"""Advice: what to change in the model, and why, from a saved report.

Each rule is a small pure function `rule(report, kernels) -> [Advice]` over the report and
its kernel summaries (`analyse/summary.py`). An `Advice` holds the finding (a fact of this
report), the action (what to change), the torch behaviour the action rests on, and where
that behaviour lives in torch (`cite`). `advise` runs every rule and orders the result by
impact. Rules state only what the report shows; tests/test_advice.py has a test per rule.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Callable, Sequence

from tritoninspect.analyse.breaks import is_size_mismatch
from tritoninspect.analyse.hazards.bridge import covered_kernels, hazard_advice
from tritoninspect.analyse.summary import KernelSummary, short_location, size_text, summarise
from tritoninspect.model.report import Advice, GraphBreak, Recompile, Report

#: Impact levels: the order findings are shown in (highest first).
BROKEN, HIDDEN, EAGER, COPIES, RECOMPILES, INFO = 60, 50, 40, 30, 20, 10


Rule = Callable[[Report, Sequence[KernelSummary]], list[Advice]]


def custom_op_hides_kernel(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """A kernel launched inside a `torch.library.custom_op`: Inductor sees only the op."""
    advice = []
    for k in kernels:
        if "custom_op" not in k.entries:
            continue
        op = ", ".join(k.ops) or "a custom op"
        around = _between(k)
        advice.append(Advice(
            rule="custom_op_hides_kernel", impact=HIDDEN, kernel=k.name,
            finding=f"custom_op {op} hides {k.name} from Inductor: the compiled code makes one extern call "
                    f"to the op{around}, and {k.name} launches inside it at run time.",
            action=f"Register {op} with torch.library.triton_op and launch {k.name} through "
                   f"torch.library.wrap_triton (see samples/triton_op.py). Expected effect: the extern call "
                   f"becomes a launch of {k.name} that Inductor sees, with its reads and writes: it schedules "
                   f"it among its own kernels with no dispatcher call per run.",
            because="Inductor lowers a custom_op to a FallbackKernel it calls as a black box; a triton_op is "
                    "decomposed into triton_kernel_wrapper_functional, which Inductor lowers to a "
                    "UserDefinedTritonKernel it can see.",
            cite="torch/_library/triton.py (triton_op, wrap_triton); torch/_inductor/ir.py (FallbackKernel, "
                 "UserDefinedTritonKernel)",
        ))
    return advice


def kernel_missing(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """A kernel held by a graph whose compiled code never launches it."""
    advice = []
    for k in kernels:
        if not k.missing:
            continue
        advice.append(Advice(
            rule="kernel_missing", impact=BROKEN, kernel=k.name,
            finding=f"{k.name} is in the graph of {', '.join(k.missing)} but its compiled code never launches "
                    "it.",
            action=f"Use what {k.name} writes (return it, or read it later): a launch whose outputs nothing "
                   "reads is removed. `--detail` shows the stage that dropped it.",
            because="After functionalization the launch is triton_kernel_wrapper_functional, a node without "
                    "side effects; dead-code elimination drops it when none of its outputs is used.",
            cite="torch/_higher_order_ops/triton_kernel_wrap.py (triton_kernel_wrapper_functional); "
                 "torch/fx/graph.py (eliminate_dead_code)",
        ))
    return advice


def inplace_clones(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """Arguments the kernel writes that Inductor still clones after re-inplacing."""
    advice = []
    covered = covered_kernels(report, ("clone_cost",))  # said per compile, with the reasons, by that finding
    for k in kernels:
        if not k.cloned or not k.clone_bytes or k.name in covered:
            continue
        args = ", ".join(k.cloned)
        advice.append(Advice(
            rule="inplace_clones", impact=COPIES, kernel=k.name,
            finding=f"{k.name} writes {args} in place: Inductor copies {size_text(k.clone_bytes)} per call "
                    "to keep the original values.",
            action=f"Write into a fresh output (torch.empty_like) instead of {args}, or launch on a tensor "
                   "that is not a view of an input and is not read again after the kernel; then "
                   "re-inplacing drops the copy.",
            because="Functionalization clones every argument that mutation analysis finds written "
                    "(tensors_to_clone); Inductor's re-inplacing pass removes a clone only when the original "
                    "is not read afterwards and is not a view of a graph input.",
            cite="torch/_inductor/fx_passes/reinplace.py (reinplace_inplaceable_ops); "
                 "torch/_higher_order_ops/triton_kernel_wrap.py (tensors_to_clone)",
        ))
    return advice


def mutation_fallback(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """Mutation analysis failed: torch assumed every input is written."""
    advice = []
    for k in kernels:
        if not k.fallbacks:
            continue
        advice.append(Advice(
            rule="mutation_fallback", impact=COPIES, kernel=k.name,
            finding=f"mutation analysis failed for {k.name} in {', '.join(k.fallbacks)}: torch assumed it "
                    "writes every input.",
            action=f"Remove what Triton's TTIR analysis cannot read from {k.name} (the cause is in "
                   "`--detail`; e.g. give tl.inline_asm_elementwise pure=True when it has no side effects).",
            because="When identify_accessed_tensors raises, torch puts every tensor argument in "
                    "tensors_to_clone: extra copies, and no epilogue fusion.",
            cite="torch/_higher_order_ops/triton_kernel_wrap.py (identify_accessed_tensors)",
        ))
    return advice


def eager_launches(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """Launches outside every compiled graph (after a graph break, in a disabled or skipped frame)."""
    advice = []
    for k in kernels:
        if not k.eager_launches:
            continue
        brk = next((b for b in report.graph_breaks if k.name in (b.kernel, *b.eager_kernels)), None)
        cause = ""
        if brk is not None:
            cause = f", after the graph break at {short_location(brk.file, brk.line)}"
        advice.append(Advice(
            rule="eager_launches", impact=EAGER, kernel=k.name,
            finding=f"{k.name} ran eagerly {_times(k.eager_launches)}{cause}, outside every compiled graph.",
            action=(brk.hint if brk is not None and brk.hint else
                    f"Find what stops Dynamo before the launch: `{_breaks_command(report)}` names each "
                    "graph break and its cause."),
            because="Code after a graph break, and frames Dynamo skips or that torch.compiler.disable marks, "
                    "run in plain Python: their kernel launches are never traced, so Inductor cannot see, "
                    "fuse or reorder them.",
            cite="torch/_dynamo/symbolic_convert.py (graph breaks); torch.compiler.disable",
        ))
    return advice


def _breaks_command(report: Report) -> str:
    """The `breaks` command for this report's own target, ready to paste (TARGET if unknown)."""
    return f"tritoninspect breaks {shlex.quote(report.meta.target) if report.meta.target else 'TARGET'}"


def graph_breaks(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """Graph breaks not already explained by a kernel's eager launches, one per place and cause."""
    eager = {k.name for k in kernels if k.eager_launches}
    places: dict[tuple[object, ...], list[GraphBreak]] = {}
    for b in report.graph_breaks:
        if {b.kernel, *b.eager_kernels} & eager:
            continue  # said with the kernel's eager launches
        places.setdefault((b.file, b.line, b.headline or _first_line(b.reason)), []).append(b)
    advice = []
    for (file, line, headline), group in places.items():
        b = group[0]
        near = f" next to {b.kernel}" if b.kernel else ""
        times = f" (logged {len(group)} times)" if len(group) > 1 else ""
        skipped = "; Dynamo skipped the frame" if any(g.frame_skipped for g in group) else ""
        advice.append(Advice(
            rule="graph_breaks", impact=EAGER if skipped else INFO, kernel=b.kernel,
            finding=f"graph break at {short_location(b.file, b.line)}{near}{times}: {headline}{skipped}.",
            action=b.hint or f"If the break is not intended, `{_breaks_command(report)}` shows its cause.",
            because="Each graph break ends one graph and starts another: Inductor optimises each part alone "
                    "and nothing fuses across the break.",
            cite="torch/_dynamo/symbolic_convert.py (graph breaks)",
        ))
    return advice


def recompiles(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """Recompiles, grouped by the guard that failed (or the kernel argument it guarded); limits hit."""
    groups: dict[tuple[str, ...], list[Recompile]] = {}
    for r in report.recompiles:
        groups.setdefault(_recompile_key(r), []).append(r)
    advice = [_recompile_advice(key, group) for key, group in groups.items()]
    for limit in report.recompile_limits:
        advice.append(Advice(
            rule="recompiles", impact=BROKEN,
            finding=f"Dynamo hit {limit.limit_type}"
                    + (f" ({limit.limit})" if limit.limit is not None else "")
                    + (f" for {limit.function}" if limit.function else "")
                    + ": later calls ran eagerly, uncompiled.",
            action="Stop the values that change per call from being specialised (see the recompiles), or "
                   f"raise torch._dynamo.config.{limit.limit_type}.",
            because="After the limit Dynamo stops compiling the frame and runs it in plain Python.",
            cite=f"torch._dynamo.config.{limit.limit_type}",
        ))
    return advice


_VALUE_RE = re.compile(r"(==|!=|<=|>=|<|>)\s*-?[\d.e+-]+(\s*#.*)?$")


def _recompile_key(r: Recompile) -> tuple[str, ...]:
    """What the recompile is about: a kernel argument the failed guard held (kernel, kind, name);
    else the failed guard itself, its compared value left out so repeats group; else a changed constexpr."""
    guarded = [c for c in r.changes if c.guarded]
    guard = _guard_of(r)
    if guarded and not is_size_mismatch(guard):
        return (guarded[0].kernel, guarded[0].kind, guarded[0].name)
    if guard:
        return ("guard", _VALUE_RE.sub(r"\1 <value>", guard.split("  # ")[0].strip()))
    changed = [c for c in r.changes if c.kind == "constexpr"] or list(r.changes)
    if changed:
        return (changed[0].kernel, changed[0].kind, changed[0].name)
    return ("guard", _first_line(r.reason))


def _guard_of(r: Recompile) -> str:
    """The failed guard; for reports without `guard`, the reason's first line without its `0/0: ` prefix."""
    return r.guard or re.sub(r"^\d+/\d+: ", "", _first_line(r.reason))


def _recompile_advice(key: tuple[str, ...], group: list[Recompile]) -> Advice:
    ids = ", ".join(r.compile_id for r in group)
    head = f"{_plural(len(group), 'recompile')} ({ids})"
    kernel, action = None, next((r.hint for r in reversed(group) if r.hint), None)
    if key[0] != "guard":
        kernel, kind, name = key
        values = [c for r in group for c in r.changes if (c.kernel, c.kind, c.name) == key]
        steps = " -> ".join([values[0].before, *(c.after for c in values)]) if values else "?"
        finding = f"{head}: {kind} {name} of {kernel} took {steps}."
        if kind == "constexpr":  # said here, not from the stored hint: reports saved before said it unconditionally
            action = (f"{name} takes a new value per size and a tl.constexpr is specialised: each value compiles "
                      f"again. If {name} bounds tl.arange or sets a block shape it must stay a constexpr: round it "
                      "to a few values (a power of two, capped) so few compiles happen; if it only selects a code "
                      "path, pass it as a plain argument.")
    else:
        finding = f"{head}: guard failed: {_guards_text(key[1], group)}"
        along = _along(group)
        finding += f"; with it {along}." if along else "."
        size = is_size_mismatch(_guard_of(group[0]))
        action = _size_action(_guard_of(group[0])) if size else _guard_action(key[1], action)
    return Advice(
        rule="recompiles", impact=RECOMPILES, kernel=kernel, finding=finding,
        action=action or (f"Keep what the failed guard `{key[-1]}` checks the same between calls, or compile "
                          "with dynamic=True (or torch._dynamo.mark_dynamic) if it is a size that changes."),
        because="Dynamo guards on the values it specialised on (constexpr arguments, int arguments, static "
                "shapes); a call that fails a guard compiles the frame again.",
        cite="torch/_dynamo/guards.py; torch._dynamo.config.recompile_limit",
    )


def _guards_text(expression: str, group: list[Recompile]) -> str:
    """One guard as the first recompile logged it, or the expression and each compared value."""
    if len(group) == 1 or "<value>" not in expression:
        return _guard_of(group[0]).split("  # ")[0].strip()
    values = [m[0] for r in group if (m := re.search(r"-?[\d.e+-]+(?=\s*(#|$))", _guard_of(r).split("  # ")[0]))]
    return f"{expression} ({', '.join(values)})"


def _size_action(guard: str) -> str:
    """Automatic dynamic: the value is the tensor size the guard names."""
    match = re.search(r"tensor '(?P<t>.+?)' size mismatch at index (?P<i>\d+)\. expected (?P<a>-?\d+), "
                      r"actual (?P<b>-?\d+)", guard)
    what = (f"dimension {match['i']} of {match['t']} ({match['a']}, then {match['b']})" if match else "a tensor size")
    return (f"{what[0].upper()}{what[1:]} changed after the first compile, so Dynamo compiled again with it dynamic (automatic "
            "dynamic shapes; later sizes reuse that compile). Mark it dynamic from the start "
            "(torch._dynamo.mark_dynamic on the input it comes from, or dynamic=True / --dynamic) to compile "
            "once; values computed from the size (a constexpr block size, a grid) can still recompile.")


def _along(group: list[Recompile]) -> str:
    """The kernel arguments that changed in those recompiles, said as consequences, not causes."""
    seen: dict[tuple[str, str, str], list[str]] = {}
    for r in group:
        for c in r.changes:
            if c.kind != "grid":
                seen.setdefault((c.kernel, c.kind, c.name), [c.before]).append(c.after)
    return ", ".join(f"{kind} {name} of {kernel} took {' -> '.join(steps)}"
                     for (kernel, kind, name), steps in list(seen.items())[:2])


def _guard_action(guard: str, hint: str | None) -> str | None:
    """A guard on `___stackN`: a Python number passed into a resumed frame (after a graph break)."""
    if guard.startswith("___stack"):
        return ("The failed guard checks a Python number carried across a graph break (___stack: a value on "
                "the stack of the resumed frame, e.g. from .item()): each new value compiles again. Keep it a "
                "tensor (pass the 0-d tensor to the kernel and tl.load it), or avoid the break.")
    return hint


def backward_cut(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """--backward ran, but autograd never reached some parameters (or no output required grad)."""
    meta = report.meta
    if not meta.backward or not (meta.backward_skipped_calls or meta.params_without_grad):
        return []
    # Entering the graph raw (hop) or eagerly: no autograd formula unless registered.
    cut = [k.name for k in kernels if {"hop", "eager", "custom_op", "triton_op"} & set(k.entries)]
    params = ", ".join(meta.params_without_grad) or "the model's parameters"
    who = (f"{_join(cut)} {'has' if len(cut) == 1 else 'have'} no autograd formula, so"
           if cut else "an operation without an autograd formula cut the graph, so")
    if meta.backward_skipped_calls:
        # Not "requested": backward is on by default when parameters require grad (most models).
        finding = (f"backward was to run (--backward, or parameters requiring grad) but no output requires grad "
                   f"({_plural(meta.backward_skipped_calls, 'call')} ran forward only): {who} no gradient reaches "
                   f"{params}.")
    else:
        finding = f"backward ran, but {who} no gradient reaches {params}."
    return [Advice(
        rule="backward_cut", impact=BROKEN, kernel=cut[0] if len(cut) == 1 else None, finding=finding,
        action="Give the kernel a backward: register it with torch.library.triton_op and "
               "torch.library.register_autograd (see samples/triton_op_autograd.py), or wrap the launch in a "
               "torch.autograd.Function with a backward.",
        because="A Triton launch writes into a tensor autograd did not create (torch.empty_like): its output "
                "has no grad_fn, so nothing before it gets a gradient; a triton_op or custom_op gets one only "
                "from register_autograd.",
        cite="torch/_library/autograd.py (register_autograd); torch/autograd/function.py (Function)",
    )]


def _join(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


#: Every rule, by name, in the order they run (ties in impact keep this order).
RULES: dict[str, Rule] = {
    "kernel_missing": kernel_missing,
    "backward_cut": backward_cut,
    "custom_op_hides_kernel": custom_op_hides_kernel,
    "eager_launches": eager_launches,
    "graph_breaks": graph_breaks,
    "inplace_clones": inplace_clones,
    "mutation_fallback": mutation_fallback,
    "recompiles": recompiles,
    # Issue 24's findings (analyse/hazards/): each error or warning, ranked with the rest.
    "hazards": hazard_advice,
}


def advise(report: Report, kernels: Sequence[KernelSummary] | None = None) -> list[Advice]:
    """Every rule's advice for `report`, highest impact first."""
    kernels = summarise(report) if kernels is None else kernels
    found = [a for rule in RULES.values() for a in rule(report, kernels)]
    return sorted(found, key=lambda a: -a.impact)


def with_advice(report: Report) -> Report:
    """`report` holding its advice (`Report.advice`), computed when it holds none."""
    if report.advice:
        return report
    return dataclasses.replace(report, advice=tuple(advise(report)))


def _between(k: KernelSummary) -> str:
    if k.before and k.after:
        return f" (between the Inductor kernels of {', '.join(k.before)} and of {', '.join(k.after)})"
    if k.before:
        return f" (after the Inductor kernel of {', '.join(k.before)})"
    if k.after:
        return f" (before the Inductor kernel of {', '.join(k.after)})"
    return ""


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
