"""From an export capture to the report: pure functions, no torch.

The exported program and AOTInductor's code become `Graph`s (stages "export",
"aoti_output_code"); each kernel a `Kernel` whose occurrences say where it is in the
exported graph and how often the eager run launched it; the rest `Report.export`.
"""

from __future__ import annotations

import re

from tritoninspect.analyse import report_meta
from tritoninspect.analyse.export_hints import ISSUE, ZERO_ONE_DOC, export_findings
from tritoninspect.model.export_records import EagerLaunch, ExportCapture, ExportNode
from tritoninspect.model.records import KernelRecord, extended
from tritoninspect.model.report import Diagnostic, Graph, Kernel, OpaqueOp, Occurrence, Report
from tritoninspect.model.report_export import (
    AotiPackage,
    ArgConstraint,
    DynamicDim,
    ExportedKernel,
    ExportFinding,
    ExportInfo,
    SignatureEntry,
)

#: The compile id export graphs and occurrences carry (export has no Dynamo frames).
EXPORT_ID = "export"


def build_export_report(cap: ExportCapture) -> Report:
    """The report of one `tritoninspect export` run."""
    diagnostics = tuple(Diagnostic("warning", source, message) for source, message in cap.problems)
    return Report(
        meta=report_meta(cap.meta), failure=cap.failure, graphs=export_graphs(cap),
        kernels=tuple(_kernel(cap, record) for record in cap.kernels.values()), opaque_ops=opaque_ops(cap),
        diagnostics=diagnostics, export=export_info(cap),
    )


def export_info(cap: ExportCapture) -> ExportInfo:
    return ExportInfo(
        strict=cap.strict, strict_source=cap.strict_source, dynamic_shapes=cap.dynamic,
        export_time_s=cap.export_time_s, signature=signature(cap),
        decomposed_signature=signature(cap, cap.decomposed_signature), dynamic_dims=dynamic_dims(cap),
        kernels=exported_kernels(cap), constraints=constraints(cap), aoti=aoti_package(cap),
        findings=export_findings(cap) + specialised_by_constexpr(cap) + specialised_zero_one(cap),
    )


def specialised_by_constexpr(cap: ExportCapture) -> tuple[ExportFinding, ...]:
    """A dimension asked to be dynamic (Dim.AUTO) that export fixed, with the kernel's
    tl.constexpr carrying its size: the package then accepts only that size."""
    if _export_failed(cap):
        return ()  # a failed export's own finding says it (constexpr_specialises_dynamic_dim)
    return tuple(
        ExportFinding(
            "warning", "export", "constexpr_specialised_dim",
            f"{c.dim} was asked to be dynamic but is fixed to {c.value} in the exported program: {c.kernel}'s "
            f"tl.constexpr {c.arg} carries it, and a constexpr must be known when the kernel compiles",
            kernel=c.kernel,
            hint="pass the size as a runtime (non-constexpr) argument to keep the dimension dynamic",
            issue=ISSUE.format(137024),
        )
        for c in constraints(cap) if c.effect == "specialised" and c.kind == "constexpr"
        and c.dim not in _zero_one_dims(cap)  # torch fixed those anyway: specialised_zero_one says it
    )


def _export_failed(cap: ExportCapture) -> bool:
    """The exported program is missing: a failure before AOTInductor (whose failures, a native crash
    of the package included, leave the program and what it says about dimensions intact)."""
    return cap.failure is not None and not cap.failure.stage.startswith("aoti")


def _zero_one_dims(cap: ExportCapture) -> dict[str, DynamicDim]:
    """Dimensions asked to be dynamic and fixed in the exported program, whose example size is 0 or 1."""
    return {f"{d.input}.size({d.dim})": d for d in dynamic_dims(cap) if d.specialised and d.example in (0, 1)}


def specialised_zero_one(cap: ExportCapture) -> tuple[ExportFinding, ...]:
    """A dimension asked to be dynamic (Dim.AUTO) that export fixed because its example size is 0 or 1."""
    if _export_failed(cap):
        return ()  # a failed export's own finding says it (zero_one_specialised_dim)
    return tuple(
        ExportFinding(
            "warning", "export", "zero_one_specialised_dim",
            f"{where} was asked to be dynamic but is fixed to {d.example} in the exported program: torch.export "
            "specialises example sizes 0 and 1 to constants",
            hint="give an example size of at least 2 for a dynamic dimension (--inputs, or example_inputs())",
            issue=ZERO_ONE_DOC,
        )
        for where, d in _zero_one_dims(cap).items()
    )


# --- graphs --------------------------------------------------------------------------------------


def export_graphs(cap: ExportCapture) -> tuple[Graph, ...]:
    graphs = []
    if cap.graph_code is not None:
        # Times are export.export_time_s and export.aoti.build_time_s: Graph.compile_time_s means a backend's.
        graphs.append(Graph(EXPORT_ID, "export", "", cap.graph_code, cap.op_count))
    aoti = cap.aoti
    # The C++ wrapper first (what the package runs), then the Triton kernels' Python block.
    for name, text in sorted((aoti.code if aoti else {}).items(), key=lambda item: not item[0].endswith(".cpp")):
        if name.endswith((".cpp", ".py")):
            comment = "//" if name.endswith(".cpp") else "#"
            graphs.append(Graph(EXPORT_ID, "aoti_output_code", "", f"{comment} {name}\n{text}", 0))
    return tuple(graphs)


def signature(cap: ExportCapture, rows: list[tuple[str, str, str, str | None]] | None = None,
              ) -> tuple[SignatureEntry, ...]:
    """The exported program's signature (or `rows`, another program's), tensors from the exported graph."""
    rows = cap.signature if rows is None else rows
    return tuple(SignatureEntry(direction, kind, name, target, cap.tensors.get(name))  # type: ignore[arg-type]
                 for direction, kind, name, target in rows)


# --- dynamic dimensions ------------------------------------------------------------------------


def dynamic_dims(cap: ExportCapture) -> tuple[DynamicDim, ...]:
    """Every dimension of every user input that was asked to be dynamic or came out symbolic."""
    dims = []
    for inp in cap.inputs:
        for i, example in enumerate(inp.example):
            requested = inp.requested[i] if i < len(inp.requested) else "static"
            exported = inp.exported[i] if i < len(inp.exported) else ""
            symbolic = bool(exported) and not exported.lstrip("-").isdigit()
            if requested == "static" and not symbolic:
                continue
            low_high = cap.ranges.get(exported)
            dims.append(DynamicDim(
                inp.name, i, requested, example, exported or "?",
                range=f"[{low_high[0]}, {low_high[1]}]" if low_high else None,
                specialised=requested != "static" and bool(exported) and not symbolic,
            ))
    return tuple(dims)


def constraints(cap: ExportCapture) -> tuple[ArgConstraint, ...]:
    """Kernel arguments whose value equals the size of a dimension asked to be dynamic: what each
    did to it. A `tl.constexpr` fixes the dimension (it must be known when the kernel compiles);
    a runtime argument keeps it symbolic. Matched by value, so a constant that happens to equal
    the size is listed too (the report says "equals")."""
    dims = [d for d in dynamic_dims(cap) if d.requested != "static"]
    found: dict[tuple[str, str, str], ArgConstraint] = {}
    for launch in cap.launches:
        kernel = cap.kernels[launch.kernel_id].name
        for kind, values in (("constexpr", launch.constexprs), ("scalar", launch.scalars)):
            for arg, value in values.items():
                for d in dims:
                    if value == d.example and not isinstance(value, bool):
                        effect = _effect(kind, d)
                        shown = d.exported if effect == "symbolic" else str(value)
                        key = (kernel, arg, f"{d.input}.size({d.dim})")
                        found[key] = ArgConstraint(kernel, arg, kind, shown, key[2], effect)  # type: ignore[arg-type]
    return tuple(found.values())


def _effect(kind: str, dim: DynamicDim) -> str:
    if dim.exported == "?":  # export did not finish: a constexpr still must be known to compile
        return "specialised" if kind == "constexpr" else "unknown"
    if dim.specialised:
        return "specialised" if kind == "constexpr" else "fixed"
    return "symbolic" if not dim.exported.lstrip("-").isdigit() else "fixed"


# --- kernels -----------------------------------------------------------------------------------


def exported_kernels(cap: ExportCapture) -> tuple[ExportedKernel, ...]:
    """Per kernel, how it entered the exported program (or would have, when export failed)."""
    code = "\n".join(cap.aoti.code.values()) if cap.aoti and cap.aoti.code else None
    result = []
    for kid, record in cap.kernels.items():
        entry, op = _entry(cap, kid)
        node = _node_of(cap, kid, op)
        appears = _appears_as(node, entry)
        named = (op or record.name) if code is not None else None
        in_code = _named_in(code, record.name, op) if named else None
        writes = tuple(dict.fromkeys(cap.writes[kid])) if kid in cap.writes else None
        result.append(ExportedKernel(kid, record.name, entry, appears, node.node if node else None, op,  # type: ignore[arg-type]
                                     node.kernel_idx if node else None, in_code, writes))
    return tuple(result)


def _entry(cap: ExportCapture, kid: str) -> tuple[str, str | None]:
    """("hop" | "triton_op" | "custom_op", the op): from the exported graph, else the eager run."""
    for node in cap.nodes:
        if node.kernel_id == kid:
            return ("hop", None) if node.form == "hop" else ("triton_op" if node.is_triton_op else "custom_op", node.op)
    launches = [launch for launch in cap.launches if launch.kernel_id == kid]
    op = next((launch.custom_op for launch in launches if launch.custom_op), None)
    if op is None:
        return "hop", None
    return ("triton_op" if cap.ops.get(op) else "custom_op"), op


def _node_of(cap: ExportCapture, kid: str, op: str | None) -> ExportNode | None:
    for node in cap.nodes:
        if node.kernel_id == kid or (op is not None and node.op == op):
            return node
    return None


def _appears_as(node: ExportNode | None, entry: str) -> str:
    if node is None:
        return "absent"
    if node.form == "hop":
        return "hop"
    return "triton_op" if node.is_triton_op else "custom_op"


def _named_in(code: str | None, kernel: str, op: str | None) -> bool:
    if code is None:
        return False
    names = [kernel] + ([op, op.replace("::", ".")] if op else [])
    return any(re.search(rf"\b{re.escape(n)}", code) for n in names)


def _kernel(cap: ExportCapture, record: KernelRecord) -> Kernel:
    entry, op = _entry(cap, record.id)
    occurrences = [_node_occurrence(n, entry) for n in cap.nodes if n.kernel_id == record.id or
                   (op is not None and n.op == op)]
    occurrences += [_launch_occurrence(cap, launch) for launch in cap.launches if launch.kernel_id == record.id]
    return extended(record, Kernel, entries=(entry,), occurrences=tuple(occurrences))


def _node_occurrence(node: ExportNode, entry: str) -> Occurrence:
    return Occurrence(EXPORT_ID, "export", entry, node=node.node, custom_op=node.op, grid=node.grid,  # type: ignore[arg-type]
                      constexprs=node.constexprs, scalars=node.scalars)


def _launch_occurrence(cap: ExportCapture, launch: EagerLaunch) -> Occurrence:
    # The eager reference run: outside every compiled graph, so "eager" unless inside an op.
    entry = "eager" if launch.custom_op is None else ("triton_op" if cap.ops.get(launch.custom_op) else "custom_op")
    return Occurrence(None, "runtime", entry, custom_op=launch.custom_op,  # type: ignore[arg-type]
                      constexprs=dict(launch.constexprs), scalars=dict(launch.scalars), launches=launch.count)


def opaque_ops(cap: ExportCapture) -> tuple[OpaqueOp, ...]:
    """Custom ops (not triton_ops) the exported graph calls, with the kernels they launched eagerly."""
    result = []
    for node in cap.nodes:
        if node.form == "op" and not node.is_triton_op and node.op:
            inside = sorted({cap.kernels[la.kernel_id].name for la in cap.launches if la.custom_op == node.op})
            result.append(OpaqueOp(EXPORT_ID, "export", node.op, node.node, tuple(inside)))
    return tuple(result)


# --- AOTInductor -------------------------------------------------------------------------------


def aoti_package(cap: ExportCapture) -> AotiPackage | None:
    aoti = cap.aoti
    if aoti is None:
        stage = cap.meta.get("stage")
        return AotiPackage("skipped", "") if stage == "export" and cap.failure is None else None
    return AotiPackage(
        aoti.status, aoti.device, tuple(f"{name} ({size} bytes)" for name, size in aoti.files),  # type: ignore[arg-type]
        aoti.build_time_s, aoti.loaded, aoti.matches_eager, aoti.max_abs_diff, tuple(aoti.notes),
    )
