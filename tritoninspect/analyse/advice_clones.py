"""Advice rules for the copies Inductor still makes around a kernel that writes its arguments.

The facts come from the AOT graph's functional kernel node (`ClonedArg`): how the kernel uses
the argument (load / store / atomic), what the tensor is (a graph input, an allocation and its
fill, another op's result), whether it is a view, whether another argument gets the same tensor,
and who reads its old value after the launch. A rule gives an action only for the causes whose
fix was applied and compiled again (tests/_advice_proofs.py); the remaining clones get the fact
and its reason, without an action. None of them says "write into torch.empty_like": a kernel
that loads or accumulates into the argument needs its starting values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tritoninspect.analyse.advice_text import COPIES, join
from tritoninspect.analyse.hazards.bridge import covered_kernels
from tritoninspect.analyse.summary import KernelSummary, size_text
from tritoninspect.model.report import Advice, ClonedArg, Report

_BECAUSE = ("Functionalization clones every argument that mutation analysis finds written (tensors_to_clone); "
            "Inductor's re-inplacing removes a clone only when the tensor is not another written argument's, is "
            "not read afterwards, and is a graph input only if the graph writes the result back into it.")
_CITE = ("torch/_inductor/fx_passes/reinplace.py (reinplace_inplaceable_ops, can_inplace); "
         "torch/_higher_order_ops/triton_kernel_wrap.py (tensors_to_clone)")


@dataclass(frozen=True)
class _Cloned:
    """One argument still cloned after re-inplacing, for one kernel (its first such launch)."""

    kernel: str
    arg: ClonedArg
    compile_id: str | None
    #: The launch's cloned arguments in the kernel's parameter order.
    order: tuple[str, ...] = ()

    def together(self) -> str:
        """This argument and the cloned ones sharing its tensor, in parameter order: "DW and DB"."""
        names = {self.arg.arg, *(n for n in self.arg.shares_with if n in self.order)}
        return join(sorted(names, key=lambda n: (self.order.index(n) if n in self.order else len(self.order), n)))


def _still_cloned(report: Report, kernels: Sequence[KernelSummary]) -> list[_Cloned]:
    """Every (kernel, argument) re-inplacing left cloned, from the AOT functional nodes, once each;
    arguments cloned only because mutation analysis failed are `mutation_fallback`'s."""
    wanted = {k.name for k in kernels}
    found: dict[tuple[str, str], _Cloned] = {}
    for kernel in report.kernels:
        if kernel.name not in wanted:
            continue
        for o in kernel.occurrences:
            for a in o.clones.arguments if o.clones is not None else ():
                if a.cloned and a.reason == "written" and (a.bytes is None or a.bytes > 0):
                    order = tuple(x.arg for x in o.clones.arguments)
                    found.setdefault((kernel.name, a.arg), _Cloned(kernel.name, a, o.compile_id, order))
    return list(found.values())


def _uses_text(arg: ClonedArg) -> str:
    """How the kernel uses the argument, for a sentence ("" when not analysed)."""
    if "atomic" in arg.uses:
        return f"{arg.arg} is accumulated with atomics"
    if {"load", "store"} <= set(arg.uses):
        return f"{arg.arg} is read and written (read-modify-write)"
    return ""


def _copy_text(c: _Cloned) -> str:
    return f"{size_text(c.arg.bytes)} per call" if c.arg.bytes is not None else "a copy per call"


def _fill_text(arg: ClonedArg) -> str:
    return {"0": "torch.zeros", "1": "torch.ones"}.get(arg.fill or "", f"torch.full(..., {arg.fill})" if arg.fill
                                                      else "torch.empty")


def _is_merged(a: ClonedArg) -> bool:
    return a.merged and a.made_by == "alloc" and bool(a.shares_with) and not a.view


def _is_shared(a: ClonedArg) -> bool:
    return a.view and bool(a.shares_with) and not a.merged and a.made_by in ("alloc", "input")


def _is_input_view(a: ClonedArg) -> bool:
    return a.view and a.made_by == "input" and a.written_back and not a.shares_with and not a.read_after


def merged_allocations(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """Two written arguments that were separate allocations in the Dynamo graph but one tensor in
    the AOT graph (AOTAutograd's CSE merged identical allocations): one of them is copied."""
    advice = []
    for c in _still_cloned(report, kernels):
        a = c.arg
        if not _is_merged(a):
            continue
        pair = c.together()
        starting = ""
        if a.fill is not None and ({"atomic", "load"} & set(a.uses)):
            starting = (f" Keep {a.arg} as {_fill_text(a)}: {_uses_text(a)}, so its starting value is part of "
                        "the result.")
        advice.append(Advice(
            rule="clone_merged_allocations", impact=COPIES, kernel=c.kernel, kernels=(c.kernel,),
            finding=f"{c.kernel} gets {pair} as one tensor in the compiled graph: identical {_fill_text(a)} "
                    f"allocations were merged, so Inductor copies {a.arg} before the launch ({_copy_text(c)}).",
            # `import torch._functorch.config`: torch 2.11 does not import the module with torch.
            action=f"Keep {pair} apart: allocate one that the kernel writes in full, and never reads first, with "
                   "torch.empty (AOTAutograd never merges torch.empty); or `import torch._functorch.config` and set "
                   "torch._functorch.config.cse = False before compiling (AOTAutograd then keeps identical "
                   "allocations separate; it turns that elimination off for the whole graph); or "
                   "allocate one tensor for both and pass it once, the kernel indexing each part (an offset)."
                   + starting,
            because="AOTAutograd's common-subexpression elimination merges identical ops of the joint graph, "
                    "allocations included; two written arguments then share one tensor, and re-inplacing can "
                    "write only one of them in place: the other is cloned.",
            cite="torch/_functorch/compile_utils.py (fx_graph_cse: aten.empty is never merged); "
                 "torch._functorch.config.cse; "
                 "torch/_inductor/fx_passes/reinplace.py (tensor_with_same_storage_already_reinplaced)",
            cause=f"arguments {pair} were merged into one allocation by the compiler",
        ))
    return advice


def shared_allocation(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """Written arguments that are views of one tensor the user made: one launch writes parts of one
    tensor through several pointers, and re-inplacing copies them."""
    advice = []
    for c in _still_cloned(report, kernels):
        a = c.arg
        # A tensor shared with a parameter the kernel only reads (Liger's rms_norm backward gets dY as dY_ptr
        # and dX_ptr, in place) has no second written part to pass once: the aliasing hazard's advice applies.
        if not _is_shared(a) or not any(name in c.order for name in a.shares_with):
            continue
        pair = c.together()
        advice.append(Advice(
            rule="clone_shared_allocation", impact=COPIES, kernel=c.kernel, kernels=(c.kernel,),
            finding=f"{c.kernel} writes {pair}, views of one tensor, so Inductor copies {a.arg} around the launch "
                    f"({_copy_text(c)}).",
            action=f"Pass the tensor {pair} are views of once and let the kernel index each part (an offset "
                   "argument): one written argument is re-inplaced, and the copies go.",
            because=_BECAUSE + " Views of one tensor share its storage, so only one of them can be written in place.",
            cite=_CITE,
            cause=f"written arguments {pair} are views of one tensor",
        ))
    return advice


def input_view(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """A written argument that is a view of a graph input the program updates (`x[:n]` passed to a
    kernel that writes it): re-inplacing cannot write the view in place, and copies it."""
    advice = []
    for c in _still_cloned(report, kernels):
        a = c.arg
        if not _is_input_view(a):
            continue
        advice.append(Advice(
            rule="clone_input_view", impact=COPIES, kernel=c.kernel, kernels=(c.kernel,),
            finding=f"{c.kernel} writes {a.arg}, a view of a graph input, so Inductor copies it before the launch "
                    f"and back after ({_copy_text(c)}).",
            action=f"Pass the input tensor itself instead of the view as {a.arg}, and select the part inside the "
                   "kernel (an offset argument, and the mask): re-inplacing then writes the input in place and the "
                   "copies go.",
            because=_BECAUSE,
            cite=_CITE,
            cause="kernels write views of graph inputs, which are copied",
        ))
    return advice


def inplace_clones(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """The copies no rule above explains: the fact and its reason, without an action."""
    advice = []
    covered = covered_kernels(report, ("clone_cost",))  # said per compile, with the reasons, by that finding
    for c in _still_cloned(report, kernels):
        if c.kernel in covered or any(explained(c.arg) for explained in (_is_merged, _is_shared, _is_input_view)):
            continue
        advice.append(Advice(
            rule="inplace_clones", impact=COPIES, kernel=c.kernel, kernels=(c.kernel,),
            finding=f"{c.kernel} writes {c.arg.arg} in place: Inductor copies it ({_copy_text(c)}) to keep "
                    f"its value from before the launch{_reason(c.arg)}.",
            action="",
            because=_BECAUSE,
            cite=_CITE,
        ))
    return advice


def _reason(a: ClonedArg) -> str:
    """Why re-inplacing kept the copy, as far as the facts tell."""
    if a.read_after:
        readers = ["the graph's output (returned, or saved for backward)" if r == "output" else r for r in a.read_after]
        return f": {join(readers)} {'reads' if len(readers) == 1 else 'read'} that value after the launch"
    if a.made_by == "input" and not a.written_back:
        return (": it is a graph input the compiled graph does not update (the program never sees the kernel's "
                "write to it, e.g. a tensor saved for backward or an incoming gradient)")
    if a.shares_with:
        return f": {join(list(a.shares_with))} {'gets' if len(a.shares_with) == 1 else 'get'} the same tensor"
    return ""


#: The clone rules, in the order they run.
CLONE_RULES = {
    "clone_merged_allocations": merged_allocations,
    "clone_shared_allocation": shared_allocation,
    "clone_input_view": input_view,
    "inplace_clones": inplace_clones,
}

CLONE_PRECONDITIONS = {
    "clone_merged_allocations": "an argument still cloned after re-inplacing (ClonedArg.cloned) gets, in the AOT "
                                "graph, the same allocation as another written argument of the launch "
                                "(.shares_with, .made_by alloc, not a view), although the Dynamo graph gave them "
                                "separate tensors (.merged). It warns against torch.empty when the kernel "
                                "accumulates into or reads the argument (.uses) and it was filled (.fill).",
    "clone_shared_allocation": "an argument still cloned is a view of a tensor another argument of the launch is "
                               "also a view of (.view, .shares_with, not .merged), made in the graph or a graph "
                               "input.",
    "clone_input_view": "an argument still cloned is a view of a graph input (.view, .made_by input) that the "
                        "graph writes back (.written_back), shared with no other argument and read by nothing "
                        "after the launch (.read_after empty).",
    "inplace_clones": "an argument still cloned (because the kernel writes it, not because the analysis failed) "
                      "that no rule above covers: the fact and the reason the facts show (read after the launch, "
                      "a graph input the graph does not update), no action; none for a kernel whose clone_cost "
                      "finding (Report.findings) already says its copies with their reasons.",
}
