"""Advice on eager launches that no graph break explains: those inside a `torch.compiler.disable`d
function, and those from the backward of an autograd.Function whose forward ran outside the graph
(fla-core's `chunk_gla` is disabled by fla-core itself, so the autograd engine runs ChunkGLAFunction's
backward kernels eagerly). The facts are the run-time occurrences' `disabled_by`, `disabled_library`
and `backward_of` (analyse/eager_causes.py); where they are missing, the advice says what the report
knows and guesses no cause."""

from __future__ import annotations

from collections.abc import Sequence

from tritoninspect.analyse.advice_text import EAGER, TRITON_OP_DOC, library_of, times, upstream
from tritoninspect.analyse.summary import short_location
from tritoninspect.model.report import Advice, GraphBreak, Occurrence, Report
from tritoninspect.textformats.breaks import frame_location

BECAUSE = ("The autograd engine runs an autograd.Function's backward in plain Python when its forward ran "
           "outside every compiled graph (torch.compile compiles a backward only with its forward), and "
           "torch.compiler.disable keeps Dynamo out of the function it wraps and everything it calls: "
           "Inductor cannot see, fuse or reorder those launches.")
#: The same, when a graph break inside the forward, not a disable, kept it out.
BECAUSE_BREAK = ("The autograd engine runs an autograd.Function's backward in plain Python when its forward ran "
                 "outside every compiled graph (torch.compile compiles a backward only with its forward): Inductor "
                 "cannot see, fuse or reorder those launches.")
CITE = "torch/autograd/function.py (BackwardCFunction.apply); torch/_dynamo/eval_frame.py (DisableContext)"


def eager_occurrences(report: Report, kernel: str) -> list[Occurrence]:
    """The kernel's eager run-time occurrences (one per place it launched from)."""
    k = report.kernel(kernel)
    return [o for o in (k.occurrences if k else ()) if o.stage == "runtime" and o.entry == "eager"]


def backward_advice(report: Report, kernel: str) -> list[Advice]:
    """One finding per autograd.Function backward the kernel ran eagerly in."""
    groups: dict[tuple[str, str | None, str | None, str | None], int] = {}
    for o in eager_occurrences(report, kernel):
        if o.backward_of:
            key = (o.backward_of, o.disabled_by, o.disabled_library, o.forward_break)
            groups[key] = groups.get(key, 0) + (o.launches or 0)
    return [_backward(report, kernel, n, *key) for key, n in groups.items()]


def _backward(report: Report, kernel: str, launches: int, forward: str, disabled: str | None,
              owner: str | None, broken: str | None) -> Advice:
    function = _function(forward).rsplit(".", 1)[0]
    where = _place(forward)
    found = next((b for b in report.graph_breaks if b.compile_id == broken), None) if broken else None
    if disabled:
        why, action = (f"its forward's kernels ran inside {disable_text(report, disabled, owner)}",
                       disable_action(report, disabled, owner))
    elif found is not None:
        why, action = _break_cause(report, found, function, forward)
    else:
        why, action = ("its forward ran outside every compiled graph, and this report ties no graph break or "
                       "torch.compiler.disable to that forward"), _unknown_action(report, function)
    cause = f"kernels ran eagerly in the backward of {function} ({where}): {why}"
    return Advice(
        rule="eager_launches", impact=EAGER, kernel=kernel, kernels=(kernel,), library=owner if disabled else None,
        finding=f"{kernel} ran eagerly {times(launches)} in the backward of {function} ({where}), outside every "
                f"compiled graph: {why}.",
        action=action, because=BECAUSE_BREAK if found is not None and not disabled else BECAUSE, cite=CITE,
        cause=cause,
    )


def _break_cause(report: Report, b: GraphBreak, function: str, forward: str) -> tuple[str, str]:
    """Why and what to do when a graph break inside the forward made the Function (and so its backward) run
    outside the graph. Dynamo still compiles the forward's own code, apart: what it launched from there is
    said, so its `hop` row does not read as a contradiction."""
    at = short_location(b.file, b.line)
    part = "backward (Dynamo traces it with the forward)" if _in_backward(b, forward) else "forward"
    why = (f"Dynamo met the graph break at {at} [{b.compile_id}] while tracing its {part}, so the Function ran "
           "outside that graph and the autograd engine runs its backward")
    compiled = compiled_inside(report, forward)
    if compiled:
        listed = "; ".join(f"{name} in {', '.join(dict.fromkeys(c for c, _ in ids))}" for name, ids in compiled.items())
        inference = all(p == "inference" for ids in compiled.values() for _, p in ids)
        how = ("as inference graphs (grad is off in a Function's forward) with no backward" if inference
               else "as graphs of their own")
        why += f"; Dynamo still compiled the forward's own code apart, {how}: {listed}"
    if b.device_probe:
        why += (f" (that break follows a compile-only device probe, {_place(b.device_probe)} in "
                f"{_function(b.device_probe)}: a GPU run may not break there, and then compiles this backward with "
                "its forward)")
    return why, (f"Remove the graph break at {at} (its own finding says how); Dynamo then traces {function}'s "
                 "forward into the graph and compiles its backward with it.")


def _in_backward(b: GraphBreak, forward: str) -> bool:
    """Whether the break's stack runs through the Function's `backward` (in the forward's file)."""
    file = frame_location(forward)[0]
    return any(frame_location(f)[0] == file and f.endswith(" in backward") for f in b.user_stack)


def compiled_inside(report: Report, forward: str) -> dict[str, list[tuple[str, str | None]]]:
    """Kernel -> (compile id, placement) of its launches from compiled graphs that ran inside `forward` (run
    eagerly: `Occurrence.inside_forward`), in report order."""
    found: dict[str, list[tuple[str, str | None]]] = {}
    for k in report.kernels:
        for o in k.occurrences:
            if o.stage == "runtime" and o.inside_forward == forward and o.compile_id:
                found.setdefault(k.name, []).append((o.compile_id, o.placement))
    return found


def disable_text(report: Report, disabled: str, owner: str | None) -> str:
    """"chunk_gla, which fla-core 0.6.0 disables for torch.compile itself (torch.compiler.disable at ...)"."""
    who = _owner_name(report, owner) if owner else "your code"
    itself = " itself" if owner else ""
    return (f"{_function(disabled)}, which {who} disables for torch.compile{itself} (torch.compiler.disable at "
            f"{_place(disabled)})")


def disable_action(report: Report, disabled: str, owner: str | None) -> str:
    """What to do about launches a disable keeps out of the graph: the library's choice, or the user's."""
    function, place = _function(disabled), _place(disabled)
    if owner is None:
        return (f"If {function} only launches Triton kernels, drop the torch.compiler.disable at {place} (Dynamo "
                "traces kernel[grid](...) launches), or register the launcher as a torch.library.triton_op calling "
                f"wrap_triton(kernel) ({TRITON_OP_DOC}).")
    lib = library_of(report, owner)
    return (f"The disable is {_owner_name(report, owner)}'s code (installed library, not yours): the library "
            f"keeps {function} out of torch.compile by design, and nothing in your model turns that off. If these "
            f"kernels must be in the graph, {upstream(lib, owner)}, or launch them from an op of your own "
            f"registered with torch.library.triton_op and wrap_triton ({TRITON_OP_DOC}).")


def _unknown_action(report: Report, function: str) -> str:
    target = report.meta.target or "TARGET"
    return (f"Find what kept {function}'s forward out of the graph: `tritoninspect breaks {target}` names each "
            "graph break and its cause; a forward called outside the compiled module runs eagerly too.")


def _owner_name(report: Report, owner: str) -> str:
    lib = library_of(report, owner)
    return f"{lib.distribution} {lib.version}" if lib else owner


def _function(frame: str) -> str:
    return frame.rsplit(" in ", 1)[1] if " in " in frame else frame


def _place(frame: str) -> str:
    return short_location(*frame_location(frame))


def forward_disables(occurrences: Sequence[Occurrence]) -> tuple[str | None, str | None]:
    """The disable the launches outside a backward ran inside, and whose code it is (the first
    found); (None, None) when none did."""
    found = next((o for o in occurrences if not o.backward_of and o.disabled_by), None)
    return (found.disabled_by, found.disabled_library) if found else (None, None)
