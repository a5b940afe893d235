"""Finding 2: float parameters the compiled launch types as fp64 where eager Triton uses fp32.

Inductor's `triton_meta` signature for a user kernel (in the output code) types a Python float
argument `fp64`; eager Triton's launcher types the same value `fp32` (`mangle_type`, recorded per
launch). An fp64 scalar promotes the math it meets to fp64 (an fp32 tensor times an fp64 scalar
is fp64 in Triton), transcendentals included: Liger-Kernel measured its swiglu kernel at half the
throughput compiled (linkedin/Liger-Kernel#1350). Whether the kernel casts the parameter before
using it is read from its source (the AST of `JITFunction.src`). A cast that makes torch's mutation
analysis fall back (what Liger's `eps.to(tl.float32)` does on torch 2.11) is said too.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tritoninspect.analyse.failed_kernel import failure_with_kernel
from tritoninspect.analyse.hazards._branches import Reached, known_values, reached
from tritoninspect.analyse.hazards._common import (
    compiled_launches,
    fallback_line,
    hop_nodes,
    joined,
    layouts,
    torch_evidence,
    torch_version,
)
from tritoninspect.model.hazard_records import KernelSource
from tritoninspect.model.records import Capture, KernelRecord
from tritoninspect.model.report import Evidence, Finding

RULE = "fp64_scalar_math"
CAST_RULE = "fp64_cast_breaks_analysis"

BASIS = ("Inductor types a Python float kernel argument fp64 in the launch signature (its policy for Python floats), "
         "where eager Triton types it fp32; in the kernel an fp32 tensor combined with an fp64 scalar becomes fp64, "
         "so that math (and the transcendentals after it) runs in double precision.")
CITE = ("torch/_inductor/codegen/triton_utils.py (signature_of: Python floats -> fp64, "
        "config._use_fp64_for_unbacked_floats); pytorch/pytorch#170289 (made it fp64); pytorch/pytorch#190340 "
        "(proposes fp32 for user kernels, open at last reading); linkedin/Liger-Kernel#1350 (108.5 us vs 56.1 us on "
        "an H100)")
VERSIONS = ("from pytorch/pytorch#170289 (Dec 2025) on: seen on torch 2.11 (H200) and 2.13 (CPU); not fixed in 2.13")
CAST_BASIS = ("On this torch, mutation analysis generates the kernel's TTIR with the float as a Python constant, and "
              "`.to` on a Python float fails: torch then assumes every pointer argument is written and clones it.")
CAST_CITE = "torch/_higher_order_ops/triton_kernel_wrap.py (identify_mutated_tensors / generate_ttir)"
#: The graphs whose launch nodes carry the constexprs the user's launch passed.
_STAGES = ("dynamo", "aot_forward", "aot_backward", "aot_inference")


@dataclass(frozen=True)
class ParamUse:
    """How a kernel body uses one float parameter, in the statements the launch runs (`_branches`)."""

    param: str
    #: Source lines (in the user's file) where it is used before any cast.
    uncast: tuple[int, ...]
    #: Source lines of its casts (`p.to(...)`, `tl.cast(p, ...)`).
    casts: tuple[int, ...]
    #: Those of the lines above under an `if` the report cannot decide: the launch may not run them.
    undecided: tuple[int, ...] = ()


def fp64_scalars(capture: Capture) -> list[Finding]:
    """One finding per kernel and compile whose compiled signature has fp64 scalars."""
    findings = []
    for record in capture.kernels.values():
        source = capture.hazards.kernel_sources.get(record.id)
        seen: set[tuple[str, tuple[str, ...]]] = set()
        for launch in compiled_launches(capture, record):
            params = tuple(p for p, t in launch.meta.signature.items() if t == "fp64")
            if not params or (launch.compile_id, params) in seen:
                continue
            seen.add((launch.compile_id, params))
            uses = param_uses(source, params, _launch_values(capture, record.id, launch.compile_id)) \
                if source is not None else None
            findings += _findings(capture, record, launch, params, uses, source)
    return findings


def param_uses(source: KernelSource, params: tuple[str, ...],
               launch: Mapping[str, Any] | None = None) -> list[ParamUse] | None:
    """How the kernel body uses each parameter in the statements a launch with these constexpr
    values runs; None when the source does not parse."""
    try:
        tree = ast.parse(textwrap.dedent(source.source))
    except SyntaxError:
        return None
    fn = next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is None:
        return None
    base = (source.def_line or 1) - fn.lineno
    nodes = reached(fn, known_values(fn, launch or {}, source.constants or {}))
    return [_uses(nodes, p, base) for p in params]


def _uses(nodes: list[Reached], param: str, base: int) -> ParamUse:
    cast_calls = [r for r in nodes if isinstance(r.node, ast.Call) and _cast_of(r.node) == param]
    inside = {id(n) for call in cast_calls for n in _cast_operand(call.node)}  # type: ignore[arg-type]
    rebinds = [_line(r) for r in nodes if isinstance(r.node, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == param for t in r.node.targets)
               and isinstance(r.node.value, ast.Call) and _cast_of(r.node.value) == param]
    first_rebind = min(rebinds) if rebinds else None
    loads = [r for r in nodes if isinstance(r.node, ast.Name) and r.node.id == param
             and isinstance(r.node.ctx, ast.Load) and id(r.node) not in inside
             and (first_rebind is None or _line(r) < first_rebind)]
    undecided = {_line(r) + base for r in (*cast_calls, *loads) if not r.decided}
    return ParamUse(param, tuple(sorted({_line(r) + base for r in loads})),
                    tuple(sorted({_line(c) + base for c in cast_calls})), tuple(sorted(undecided)))


def _line(r: Reached) -> int:
    return int(getattr(r.node, "lineno", 0))


def _launch_values(capture: Capture, kid: str, compile_id: str) -> dict[str, Any]:
    """The constexprs the kernel's launches in this compile pass, those every launch passes alike."""
    found: dict[str, Any] = {}
    differ: set[str] = set()
    for node in hop_nodes(capture, kid, _STAGES, compile_id):
        for name, value in (node.constexprs or {}).items():
            if name in found and found[name] != value:
                differ.add(name)
            found.setdefault(name, value)
    return {k: v for k, v in found.items() if k not in differ}


def _cast_of(call: ast.Call) -> str | None:
    """The parameter a call casts to a non-fp64 type: `p.to(T)` or `tl.cast(p, T)`; else None."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "to" and isinstance(func.value, ast.Name):
        target = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "dtype"), None)
        return None if _is_fp64(target) else func.value.id
    if isinstance(func, ast.Attribute) and func.attr == "cast" and call.args and isinstance(call.args[0], ast.Name):
        target = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "dtype"), None)
        return None if _is_fp64(target) else call.args[0].id
    return None


def _cast_operand(call: ast.Call) -> list[ast.AST]:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "to":
        return [func.value]
    return [call.args[0]]


def _is_fp64(node: ast.AST | None) -> bool:
    text = ast.unparse(node) if node is not None else ""
    return "float64" in text or text.endswith("fp64")


def _findings(capture: Capture, record: KernelRecord, launch, params: tuple[str, ...],  # type: ignore[no-untyped-def]
              uses: list[ParamUse] | None, source: KernelSource | None) -> list[Finding]:
    cid = launch.compile_id
    eager = _eager_types(capture, record.id, cid)
    evidence = [
        Evidence("output code", f"triton_meta signature of {launch.meta.inductor_name}: "
                 + ", ".join(f"'{p}': 'fp64'" for p in params), compile_id=cid, node=launch.meta.inductor_name,
                 line=launch.meta.line),
        *(Evidence("kernel parameter", f"eager Triton types {p} as {eager[p]} (the launch's Python value)",
                   compile_id=cid, param=p) for p in params if p in eager),
    ]
    promoted = [u for u in uses or () if u.uncast]
    for u in uses or ():
        if u.uncast:
            evidence.append(Evidence("kernel source", f"{u.param} used before any cast (math promoted to fp64)",
                                     param=u.param, file=record.file, line=u.uncast[0]))
        elif u.casts:
            evidence.append(_cast_evidence(u, record.file))
    evidence.append(torch_evidence(capture))
    common = dict(kernel=record.name, basis=BASIS, cite=CITE, versions=VERSIONS, torch=torch_version(capture),
                  compile_ids=(cid,))
    found = []
    if uses is None:
        found.append(Finding(rule=RULE, severity="note", summary=(
            f"{record.name}'s compiled launch types {joined(params)} fp64 (eager Triton: fp32); its source could not "
            "be read to tell whether the math is promoted."), action="", evidence=tuple(evidence), **common))
    elif promoted:
        names = joined(u.param for u in promoted)
        refused = _refused_compile(capture, record, cid)
        if refused:
            evidence.append(Evidence("torch", f"Triton's compile of {record.name} failed: {refused}", compile_id=cid))
        found.append(Finding(rule=RULE, severity="error" if refused else "warning", summary=(
            f"{record.name} gets {names} as fp64 when compiled (fp32 in eager Triton) and uses "
            f"{'it' if len(promoted) == 1 else 'them'} uncast (line {joined(str(u.uncast[0]) for u in promoted)}): "
            + (f"the fp64 math it makes is why Triton refused to compile the kernel ({refused}); eager compiles it."
               if refused else "that math runs in double precision, slower than eager and with other rounding.")),
            action=(f"Cast where the kernel starts: `{promoted[0].param} = {promoted[0].param}.to(tl.float32)` "
                    "(a no-op in eager Triton); then check `--no-fallback`, since on torch 2.11 that cast makes "
                    "mutation analysis fall back."),
            evidence=tuple(evidence), **common))
    else:
        found.append(Finding(rule=RULE, severity="note", summary=(
            f"{record.name}'s compiled launch types {joined(params)} fp64 (eager Triton: fp32); the kernel casts "
            f"{'it' if len(params) == 1 else 'them'} before use, so its math stays fp32."),
            action="", evidence=tuple(evidence), **common))
    found += _cast_fallbacks(capture, record, launch, uses or [], evidence)
    return found


def _refused_compile(capture: Capture, record: KernelRecord, cid: str) -> str | None:
    """The error of Triton's compile of this kernel when the run failed there on an fp64 type (fla's
    fused_recurrent_bwd_kernel: "Loop-carried variable b_dh has initial type fp32 but is re-assigned to fp64",
    its fp32 state times an fp64 scale); None otherwise."""
    failure = failure_with_kernel(capture)  # on a GPU the compile worker's error names no kernel
    if (failure is None or failure.stage != "kernel_compile" or failure.kernel != record.name
            or failure.compile_id not in (None, cid)):
        return None
    headline = failure.headline()
    return headline if "fp64" in failure.message else None


def _cast_evidence(use: ParamUse, file: str | None) -> Evidence:
    """Where the launch casts the parameter: the cast's line when the launch surely runs it; else no
    line, the candidates named (each under an `if` whose test reads what this report does not know)."""
    sure = [line for line in use.casts if line not in use.undecided]
    if sure:
        return Evidence("kernel source", f"{use.param} cast before use", param=use.param, file=file, line=sure[0])
    where = f"line {use.casts[0]}" if len(use.casts) == 1 else f"lines {joined(str(n) for n in use.casts)}"
    return Evidence("kernel source", f"{use.param} cast before use, on the branch the launch took ({where}, "
                    "under an `if` whose test this report cannot evaluate)", param=use.param, file=file)


def _cast_fallbacks(capture: Capture, record: KernelRecord, launch, uses: list[ParamUse],  # type: ignore[no-untyped-def]
                    evidence: list[Evidence]) -> list[Finding]:
    """A cast line that is where mutation analysis gave up, in this compile."""
    casts = {line: u.param for u in uses for line in u.casts}
    source = capture.hazards.kernel_sources.get(record.id)
    hits = [(f, fallback_line(f, source)) for f in capture.fallbacks
            if f.kernel_id == record.id and f.compile_id == launch.compile_id]
    hits = [(f, line) for f, line in hits if line in casts]
    if not hits:
        return []
    hit, line = hits[0]
    param = casts[line]  # type: ignore[index]
    return [Finding(
        rule=CAST_RULE, severity="warning", kernel=record.name,
        summary=(f"{record.name}'s cast of {param} (line {line}), which keeps its math fp32, is where torch's "
                 f"mutation analysis fails on this torch ({hit.cause}): torch assumes every pointer argument is "
                 "written and clones it."),
        action=("Keep the cast (it keeps the math fp32) and expect the copies on this torch: torch 2.13's analysis "
                "reads the cast (checked on CPU with Liger-Kernel's rms_norm)."),
        evidence=(*evidence, Evidence("kernel source", f"mutation analysis failed here: {hit.cause}",
                                      compile_id=hit.compile_id, param=param, file=record.file, line=line)),
        basis=CAST_BASIS, cite=CAST_CITE, versions="seen on torch 2.11 (Liger-Kernel rms_norm, H200); not on 2.13 (CPU)",
        torch=torch_version(capture), compile_ids=(launch.compile_id,),
    )]


def _eager_types(capture: Capture, kid: str, cid: str) -> dict[str, str]:
    types: dict[str, str] = {}
    for stage in ("dynamo", "aot_forward", "aot_backward", "aot_inference"):
        for lay in layouts(capture, kid, stage, cid):
            for name, kind in lay.scalar_types.items():
                types.setdefault(name, kind)
    return types
