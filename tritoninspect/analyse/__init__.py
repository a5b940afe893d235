"""Analyses: small pure functions from a `Capture` to report fields.

Each analysis returns a dict of `Report` fields. A failing analysis becomes a
diagnostic and the run goes on (`--strict` turns diagnostics into exit 1).
"""

from __future__ import annotations

import dataclasses

from collections.abc import Callable
from typing import Any

from tritoninspect.analyse.breaks import (
    analyse_decompiled,
    analyse_graph_breaks,
    analyse_recompile_details,
    compile_only_notes,
)
from tritoninspect.analyse.cudagraphs import analyse_cudagraphs, analyse_epilogues
from tritoninspect.analyse.failed_kernel import failure_with_kernel
from tritoninspect.analyse.emulation import emulation_notes, enrich_device_probes, probe_notes, unwrapped_tensor_notes
from tritoninspect.analyse.fusion import enrich_fusion
from tritoninspect.analyse.guards import enrich_guards
from tritoninspect.analyse.graphs import analyse_graphs
from tritoninspect.analyse.hazards import find_hazards
from tritoninspect.analyse.kernels import analyse_kernels, analyse_opaque_ops, analyse_unattributed_fallbacks
from tritoninspect.analyse.libraries import analyse_libraries
from tritoninspect.analyse.resources import enrich_resources
from tritoninspect.model.errors import ReportError
from tritoninspect.model.records import Capture
from tritoninspect.model.report import Diagnostic, Meta, Report

Analysis = Callable[[Capture], dict[str, Any]]

#: Run in order; each fills some `Report` fields.
ANALYSES: list[tuple[str, Analysis]] = [
    ("graphs", analyse_graphs),
    ("graph_breaks", analyse_graph_breaks),
    ("recompiles", analyse_recompile_details),
    ("decompiled", analyse_decompiled),
    ("kernels", analyse_kernels),
    ("opaque_ops", analyse_opaque_ops),
    ("mutation_fallbacks", analyse_unattributed_fallbacks),
    ("cudagraphs", analyse_cudagraphs),
    ("epilogues", analyse_epilogues),
    ("libraries", analyse_libraries),
]

Enricher = Callable[[Capture, dict[str, Any]], dict[str, Any]]

#: Run after ANALYSES (with the default analyses), in order: each adds detail
#: to fields already built and returns the fields it rewrote. A failing one
#: becomes a diagnostic and leaves the fields as they were.
ENRICHERS: list[tuple[str, Enricher]] = [
    ("fusion", enrich_fusion),
    ("resources", enrich_resources),
    ("device_probes", enrich_device_probes),
    ("guards", enrich_guards),
]


def build_report(capture: Capture, analyses: list[tuple[str, Analysis]] | None = None, advice: bool = True) -> Report:
    """Run every analysis over `capture` and assemble the report; its advice too unless not `advice` (a segment
    of a long trace's, analyse/segments.py: the joined report's advice reads them all)."""
    fields: dict[str, Any] = {}
    diagnostics = [Diagnostic("warning", source, message) for source, message in capture.problems]
    for name, analysis in analyses or ANALYSES:
        try:
            fields.update(analysis(capture))
        except ReportError:
            raise  # the input is bad (a log changed while it was read): no analysis of it holds
        except Exception as exc:  # noqa: BLE001 - one failing analysis must not sink the report
            diagnostics.append(Diagnostic("error", name, f"analysis failed: {type(exc).__name__}: {exc}"))
    for name, enrich in ENRICHERS if analyses is None else []:
        try:
            fields.update(enrich(capture, dict(fields)))
        except ReportError:
            raise
        except Exception as exc:  # noqa: BLE001 - as for analyses
            diagnostics.append(Diagnostic("error", name, f"analysis failed: {type(exc).__name__}: {exc}"))
    if analyses is None:
        findings, failed = find_hazards(capture)
        fields["findings"] = tuple(findings)
        diagnostics += [Diagnostic("error", f"hazard {name}", f"analysis failed: {type(exc).__name__}: {exc}")
                        for name, exc in failed]
    diagnostics.extend(compile_only_notes(capture, fields.get("graph_breaks", ())))
    diagnostics.extend(emulation_notes(capture))
    diagnostics.extend(unwrapped_tensor_notes(capture))
    diagnostics.extend(probe_notes(capture, fields.get("graph_breaks", ())))
    report = Report(meta=report_meta(capture.meta), failure=failure_with_kernel(capture),
                    diagnostics=tuple(diagnostics), **fields)
    if not advice:
        return report
    try:
        from tritoninspect.analyse.advice import with_advice

        return with_advice(report)
    except ReportError:
        raise
    except Exception as exc:  # noqa: BLE001 - as for analyses: the report goes on without advice
        diagnostic = Diagnostic("error", "advice", f"analysis failed: {type(exc).__name__}: {exc}")
        return dataclasses.replace(report, diagnostics=(*report.diagnostics, diagnostic))


def report_meta(meta: dict[str, Any]) -> Meta:
    """The report's `Meta` from a capture's `meta` (what a missing key reads as: its default)."""
    return Meta(
        tool=meta.get("tool", "tritoninspect"),
        tool_version=meta.get("tool_version", ""),
        mode=meta.get("mode", ""),
        device=meta.get("device", ""),
        torch=meta.get("torch", ""),
        triton=meta.get("triton", ""),
        target=meta.get("target", ""),
        python=meta.get("python", ""),
        stage=meta.get("stage", ""),
        dynamic=meta.get("dynamic"),
        backward=bool(meta.get("backward", False)),
        inputs=tuple(meta.get("inputs", ())),
        calls=int(meta.get("calls", 1)),
        backward_skipped_calls=int(meta.get("backward_skipped_calls", 0)),
        params_without_grad=tuple(meta.get("params_without_grad", ())),
        grad=meta.get("grad"),
    )
