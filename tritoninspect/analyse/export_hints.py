"""Known ways torch.export and AOTInductor fail for user Triton kernels: findings with hints.

Each rule reads the export capture (torch-free) and returns findings; each hint names the
upstream issue it comes from. The rules look at what failed (stage, exception text) and at
how each kernel was launched in the eager run (raw, inside a triton_op, inside a custom_op).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tritoninspect.model.export_records import ExportCapture
from tritoninspect.model.report_export import ExportFinding

ISSUE = "https://github.com/pytorch/pytorch/issues/{}"
#: torch's custom-op guide, which its own "no fake impl" error points to.
CUSTOM_OPS_GUIDE = "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html"

Rule = Callable[[ExportCapture], list[ExportFinding]]


def _failed(cap: ExportCapture, stage: str, *needles: str) -> bool:
    failure = cap.failure
    if failure is None or failure.stage != stage:
        return False
    text = failure.message.lower()
    return any(n.lower() in text for n in needles)


def _raw_kernels(cap: ExportCapture) -> list[str]:
    """Kernels the eager run launched outside every custom op (raw launches), by name."""
    return sorted({cap.kernels[launch.kernel_id].name for launch in cap.launches if launch.custom_op is None})


def raw_launch_non_strict(cap: ExportCapture) -> list[ExportFinding]:
    """Non-strict export runs the Python of a raw launch on fake tensors: Triton asks for a data pointer
    ("Cannot access data pointer of Tensor", torch 2.11-2.13). https://github.com/pytorch/pytorch/pull/185827
    (fixes #146066) rewrites that error to name triton_op / wrap_triton: both wordings match."""
    if cap.strict or not _failed(cap, "export", "data pointer", "data_ptr", "wrap_triton", "triton_op"):
        return []
    kernels = _raw_kernels(cap) or [None]
    return [
        ExportFinding(
            "error", "export", "raw_launch_non_strict",
            f"raw launch{f' of {k}' if k else ''} in non-strict export: export traced into Triton's launcher "
            "with fake tensors", kernel=k,
            hint="wrap the kernel in torch.library.triton_op and launch it through torch.library.wrap_triton, "
                 "or export strictly (--strict)",
            issue=ISSUE.format(146066),
        )
        for k in kernels
    ]


def raw_launch_strict_only(cap: ExportCapture) -> list[ExportFinding]:
    """A raw launch exported strictly works, but only strictly: torch's default export fails on it."""
    if not cap.strict or cap.failure is not None:
        return []
    raw = sorted({cap.kernels[n.kernel_id].name for n in cap.nodes if n.form == "hop" and n.kernel_id})
    return [
        ExportFinding(
            "note", "export", "raw_launch_strict_only",
            f"{name} is a raw launch: it exports as a triton_kernel_wrapper node in strict mode only; "
            "non-strict export (torch's default) fails on it", kernel=name,
            hint="wrap it in torch.library.triton_op (+ wrap_triton) to export either way",
            issue=ISSUE.format(146066),
        )
        for name in raw
    ]


def custom_op_without_fake(cap: ExportCapture) -> list[ExportFinding]:
    """A custom op without a fake implementation cannot be traced (its output shapes are unknown)."""
    findings = []
    for op in cap.ops_without_fake:
        inside = sorted({cap.kernels[launch.kernel_id].name for launch in cap.launches if launch.custom_op == op})
        for kernel in inside or [None]:
            findings.append(ExportFinding(
                "error" if _failed(cap, "export", "fake") else "warning", "export", "custom_op_without_fake",
                f"custom op {op} has no fake (meta) implementation: export cannot know its outputs' shapes",
                kernel=kernel,
                hint=f"register one with @{op.split('::')[-1]}.register_fake returning empty tensors of the "
                     "outputs' shapes and dtypes, or make it a torch.library.triton_op (its body is its fake)",
                issue=CUSTOM_OPS_GUIDE,
            ))
    return findings


#: symbolic_shapes.py's ConstraintViolation line for one dimension (torch 2.11-2.14).
_SPECIALISED = re.compile(r"You marked (?P<name>.+?) as dynamic but your code speciali[sz]ed it to be a "
                          r"constant \((?P<value>-?\d+)\)")
#: torch/_export/non_strict_utils.py's own line for a Dim.DYNAMIC whose example size is 0 or 1.
_ZERO_ONE = re.compile(r"0/1 speciali[sz]ed due to hint of (?P<value>[01]) for dimension (?P<name>\S+?)\.?$",
                       re.MULTILINE)
#: torch.export specialises example sizes 0 and 1: the export tutorial's "0/1 specialization"
#: ("specify ... non-0/1 sample inputs when dynamic behavior is desirable"); pytorch/pytorch#133653.
ZERO_ONE_DOC = "https://pytorch.org/tutorials/intermediate/torch_export_tutorial.html"


def constexpr_specialises_dynamic_dim(cap: ExportCapture) -> list[ExportFinding]:
    """A dimension marked dynamic that the program fixed to a constant: export fails. Said as its cause:
    an example size of 0 or 1 (torch specialises those), a kernel's `tl.constexpr` equal to the size
    (it must be known when the kernel compiles), or else something in the model, unnamed."""
    failure = cap.failure
    if failure is None or failure.stage != "export":
        return []
    found = [(m["name"], int(m["value"])) for m in _SPECIALISED.finditer(failure.message)]
    found += [(m["name"], int(m["value"])) for m in _ZERO_ONE.finditer(failure.message)]
    findings = []
    for name, value in dict.fromkeys(found):
        if value in (0, 1) and _example_sizes(cap, name, value):
            findings.append(_zero_one(name, value, _example_sizes(cap, name, value)))
            continue
        constexprs = _constexprs_equal(cap, value)
        findings += [_by_constexpr(name, value, kernel, arg) for kernel, arg in constexprs]
        if not constexprs:
            findings.append(_by_model(name, value))
    return findings


def _example_sizes(cap: ExportCapture, name: str, value: int) -> list[str]:
    """The dimensions asked to be dynamic, named `name` (else any) whose example size is `value`."""
    dims = [(f"{i.name}.size({d})", req, size) for i in cap.inputs for d, (req, size) in
            enumerate(zip(i.requested, i.example)) if req != "static" and size == value]
    named = [where for where, req, _ in dims if req == name]
    return named or [where for where, _, _ in dims]


def _zero_one(name: str, value: int, dims: list[str]) -> ExportFinding:
    return ExportFinding(
        "error", "export", "zero_one_specialised_dim",
        f"dimension {name} was marked dynamic, but its example size is {value} ({', '.join(dims)}): "
        "torch.export specialises sizes 0 and 1 to constants",
        hint="give an example size of at least 2 for a dynamic dimension (--inputs, or example_inputs())",
        issue=ZERO_ONE_DOC,
    )


def _by_constexpr(name: str, value: int, kernel: str, arg: str) -> ExportFinding:
    return ExportFinding(
        "error", "export", "constexpr_specialises_dynamic_dim",
        f"dimension {name} was marked dynamic, but the program fixed it to {value}: {kernel}'s tl.constexpr "
        f"{arg}={value} must be known when the kernel compiles", kernel=kernel,
        hint="pass the size as a runtime (non-constexpr) kernel argument, or export that dimension as "
             "Dim.STATIC (or Dim.AUTO, which lets it specialise)",
        issue=ISSUE.format(137024),
    )


def _by_model(name: str, value: int) -> ExportFinding:
    # No kernel constexpr has this value: the model itself (a Python int, a branch, a check on the
    # size) specialised it; torch's message carries the user stack when it has one.
    return ExportFinding(
        "error", "export", "dynamic_dim_specialised",
        f"dimension {name} was marked dynamic, but the model fixed it to {value} (no kernel constexpr has that "
        "value: Python code on the size did)",
        hint="find the line in torch's message (User stack) or rerun with TORCH_LOGS=\"+dynamic\"; or export "
             "that dimension as Dim.STATIC or Dim.AUTO",
    )


def _constexprs_equal(cap: ExportCapture, value: int) -> list[tuple[str, str]]:
    found = []
    for launch in cap.launches:
        for arg, v in launch.constexprs.items():
            if v == value and not isinstance(v, bool):
                found.append((cap.kernels[launch.kernel_id].name, arg))
    return sorted(set(found))


def triton_op_aoti_dynamic(cap: ExportCapture) -> list[ExportFinding]:
    """AOTInductor failing on a program with a triton_op and a dynamic dimension: a known regression."""
    failure = cap.failure
    if failure is None or failure.stage != "aoti" or failure.exc_type == NATIVE_CRASH:
        return []
    triton_ops = sorted(op for op, is_triton in cap.ops.items() if is_triton)
    dynamic = any(not d.isdigit() for i in cap.inputs for d in i.exported)
    if not (triton_ops and dynamic):
        return []
    return [ExportFinding(
        "error", "aoti", "triton_op_aoti_dynamic",
        f"AOTInductor failed on a program with triton_op {', '.join(triton_ops)} and a dynamic dimension",
        hint="this matches a regression in torch 2.8 with triton_ops under dynamic shapes (closed upstream): "
             "check that your torch has the fix, or export the dimension static to confirm",
        issue=ISSUE.format(160646),
    )]


def aoti_mismatch(cap: ExportCapture) -> list[ExportFinding]:
    aoti = cap.aoti
    if aoti is None or aoti.matches_eager is not False:
        return []
    return [ExportFinding(
        "error", "compare", "aoti_mismatch",
        f"the AOTInductor package's output differs from eager on the example inputs "
        f"(max abs difference {aoti.max_abs_diff:g})",
        hint="compare a kernel's launch arguments in the package code (aoti_output_code) with eager's",
    )]


#: The failure type run/aoti.py records when its child dies from a signal.
NATIVE_CRASH = "NativeCrash"


def native_crash(cap: ExportCapture) -> list[ExportFinding]:
    """AOTInductor's child process died from a signal (SIGSEGV...): native code, no Python exception."""
    failure = cap.failure
    if failure is None or failure.exc_type != NATIVE_CRASH:
        return []
    return [ExportFinding(
        "error", failure.stage, "native_crash", failure.message.splitlines()[0],
        hint="native code crashed (C++ wrapper, kernel launch or loader): the report shows the last Python "
             "frames; reproduce with torch._inductor.aoti_load_package alone and report it upstream with them",
    )]


RULES: tuple[Rule, ...] = (
    raw_launch_non_strict,
    raw_launch_strict_only,
    custom_op_without_fake,
    constexpr_specialises_dynamic_dim,
    triton_op_aoti_dynamic,
    aoti_mismatch,
    native_crash,
)


def export_findings(cap: ExportCapture) -> tuple[ExportFinding, ...]:
    """Every rule's findings, in rule order."""
    return tuple(f for rule in RULES for f in rule(cap))
