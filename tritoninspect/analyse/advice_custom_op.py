"""Advice rule `custom_op_hides_kernel`: a kernel launched inside a `torch.library.custom_op`, which Inductor
calls as a black box. The action is a `triton_op` with `wrap_triton`, yours or of your own around a library's
kernel, except where torch refuses to trace the kernel's launch there too (`Kernel.untraceable_autotune`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tritoninspect.analyse.advice_text import HIDDEN, TRITON_OP_DOC, join, library_of, upstream
from tritoninspect.analyse.summary import KernelSummary
from tritoninspect.model.report import Advice, Report


def custom_op_hides_kernel(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """A kernel launched inside a `torch.library.custom_op`: Inductor sees only the op."""
    advice = []
    for k in kernels:
        if "custom_op" not in k.entries:
            continue
        ops = [op for op in k.ops if not _is_triton_op(report, op)] or list(k.ops)
        owner = _op_library(report, ops)
        refused = _untraceable_autotune(report, k.name)
        if refused:
            advice.append(_refused_custom_op(report, k, ops, owner, refused))
        else:
            advice.append(_library_custom_op(report, k, ops, owner) if owner else _user_custom_op(k, ops))
    return advice


def _untraceable_autotune(report: Report, kernel: str) -> tuple[str, ...]:
    return next((k.untraceable_autotune for k in report.kernels if k.name == kernel), ())


def _refused_custom_op(report: Report, k: KernelSummary, ops: list[str], owner: str | None,
                       refused: tuple[str, ...]) -> Advice:
    """The kernel's @triton.autotune has settings torch refuses to trace: a triton_op would fail the compile
    (wrap_triton runs the same checks as Dynamo: torch/_higher_order_ops/triton_kernel_wrap.py, torch 2.13;
    run with torchao 0.18's hqq kernel and its Config pre_hooks), so the custom_op is the way it compiles.
    The change that lets Inductor see it is in the kernel's Autotuner: its owner's (`k.library`) to make."""
    op = ", ".join(ops) or "a custom op"
    name = _owner_text(report, owner)
    why = (f"torch refuses {k.name}'s launch inside a torch.library.triton_op as it does in Dynamo (its "
           f"@triton.autotune has {join(refused)}: wrap_triton fails the compile)")
    keep = (f"The op is {name}'s, and {why}: keep calling it." if owner else f"Keep the custom_op: {why}.")
    change = ("replace a Config pre_hook that zeroes or restores outputs by @triton.autotune(reset_to_zero=[...]) "
              "or restore_value=[...] and drop post_hook, warmup, rep and use_cuda_graph; then a triton_op "
              f"launching it through torch.library.wrap_triton ({TRITON_OP_DOC}) compiles")
    kernel_lib = library_of(report, k.library) if k.library else None
    then = (f" To let Inductor see the kernel, {upstream(kernel_lib, k.library)} ({_owner_text(report, k.library)}'s "
            f"Autotuner) to {change}." if k.library else f" To let Inductor see the kernel, {change}.")
    return Advice(
        rule="custom_op_hides_kernel", impact=HIDDEN, kernel=k.name, kernels=(k.name,), library=owner,
        finding=_finding(k, op, name if owner else None), action=keep + then, because=_CUSTOM_OP_BECAUSE, cite=_CUSTOM_OP_CITE,
        cause="custom ops hide the kernels they launch from Inductor (extern calls)",
    )


def _finding(k: KernelSummary, op: str, library: str | None) -> str:
    """What the rule found: the op (of `library`, "distribution version", when installed code) and the extern call."""
    if library:
        return (f"custom_op {op} of {library} (installed library code, not yours) hides {k.name} from Inductor: "
                f"the compiled code makes one extern call to the op{_between(k)}.")
    return (f"custom_op {op} hides {k.name} from Inductor: the compiled code makes one extern call to the "
            f"op{_between(k)}, and {k.name} launches inside it at run time.")


def _owner_text(report: Report, owner: str | None) -> str:
    lib = library_of(report, owner) if owner else None
    return f"{lib.distribution} {lib.version}" if lib else str(owner)


_CUSTOM_OP_BECAUSE = ("Inductor lowers a custom_op to a FallbackKernel it calls as a black box; a triton_op is "
                      "decomposed into triton_kernel_wrapper_functional, which Inductor lowers to a "
                      "UserDefinedTritonKernel it can see.")
_CUSTOM_OP_CITE = ("torch/_library/triton.py (triton_op, wrap_triton); torch/_inductor/ir.py (FallbackKernel, "
                   "UserDefinedTritonKernel)")


def _user_custom_op(k: KernelSummary, ops: list[str]) -> Advice:
    return Advice(
        rule="custom_op_hides_kernel", impact=HIDDEN, kernel=k.name, kernels=(k.name,),
        finding=_finding(k, ", ".join(ops) or "a custom op", None),
        action="Register the op with torch.library.triton_op instead of torch.library.custom_op and launch its "
               f"kernel through torch.library.wrap_triton ({TRITON_OP_DOC}). Expected effect: the extern call "
               "becomes a launch of the kernel that Inductor sees, with its reads and writes: it schedules it "
               "among its own kernels with no dispatcher call per run.",
        because=_CUSTOM_OP_BECAUSE, cite=_CUSTOM_OP_CITE,
        cause="custom ops hide the kernels they launch from Inductor (extern calls)",
    )


def _library_custom_op(report: Report, k: KernelSummary, ops: list[str], owner: str) -> Advice:
    lib = library_of(report, owner)
    name = _owner_text(report, owner)
    return Advice(
        rule="custom_op_hides_kernel", impact=HIDDEN, kernel=k.name, kernels=(k.name,), library=owner,
        finding=_finding(k, ", ".join(ops), name),
        action=f"The ops are {name}'s: your model cannot change how they are registered. From your side: register "
               f"an op of your own with torch.library.triton_op that launches {name}'s kernel through "
               f"torch.library.wrap_triton, and call it instead of the library's function ({TRITON_OP_DOC}); "
               f"or {upstream(lib, owner)} to register its ops with triton_op. Expected effect: the kernel is "
               "launched in Inductor's code, where it is scheduled with Inductor's own kernels.",
        because=_CUSTOM_OP_BECAUSE, cite=_CUSTOM_OP_CITE,
        cause=f"custom ops of {name} (installed library code) hide their kernels from Inductor",
    )


def _is_triton_op(report: Report, op: str) -> bool:
    return any(o.custom_op == op and o.entry == "triton_op" for k in report.kernels for o in k.occurrences)


def _op_library(report: Report, ops: Iterable[str]) -> str | None:
    """The library that registered these ops (all of them), else None (the user's, or unknown)."""
    owners = {o.library for o in report.opaque_ops if o.op in set(ops)}
    return owners.pop() if len(owners) == 1 and None not in owners else None


def _between(k: KernelSummary) -> str:
    if k.before and k.after:
        return f" (between the Inductor kernels of {', '.join(k.before)} and of {', '.join(k.after)})"
    if k.before:
        return f" (after the Inductor kernel of {', '.join(k.before)})"
    if k.after:
        return f" (before the Inductor kernel of {', '.join(k.after)})"
    return ""

