"""What a report read from a TORCH_TRACE must share with a live report of the same sample.

A trace holds the graphs and the output code, not the run: so the comparison takes each
kernel's entries and occurrences from the graph stages and the output code only (not
`runtime`), and leaves out what `analyse.trace.TRACE_UNKNOWNS` says a trace cannot know
(kernels seen only launching: inside an opaque custom_op, or eagerly).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tritoninspect.analyse import build_report
from tritoninspect.model.records import Capture
from tritoninspect.model.report import Report, read_report

FIXTURES = Path(__file__).resolve().parent / "fixtures"
TRACES = FIXTURES / "traces"


def live_report(sample: str) -> Report | None:
    """The live report of `sample`: its saved compile-only capture (tests/fixtures/capture_*.json,
    torch 2.13) analysed now, else its stored compile-only report from the GPU machine (torch 2.11)."""
    capture = FIXTURES / f"capture_{sample}.json"
    if capture.exists():
        report = build_report(Capture.from_json(capture.read_text(encoding="utf-8")))
        if report.meta.stage == "inductor":
            return report
    stored = FIXTURES / "gpu-compile-only" / f"{sample}.json"
    return read_report(stored) if stored.exists() else None


def compiled_kernels(report: Report) -> dict[str, dict[str, Any]]:
    """Kernel name -> what the graphs and output code say of it (entries, ops, where, stages)."""
    found = {}
    for kernel in report.kernels:
        seen = [o for o in kernel.occurrences if o.stage != "runtime"]
        if not seen:
            continue
        found[kernel.name] = {
            "entries": sorted({o.entry for o in seen}),
            "ops": sorted({o.custom_op for o in seen if o.custom_op}),
            "source": (_relative(kernel.file), kernel.line),
            "stages": sorted({(o.compile_id, o.stage, o.part or "") for o in seen}),
            "in_output_code": sorted({(o.compile_id, o.stage, bool(o.in_output_code)) for o in seen}),
        }
    return found


def assert_same_kernels(trace: Report, live: Report) -> None:
    """The trace's kernels are the live ones, with the same entries, sources and stages; the op a
    triton_op kernel came from may be unknown in the trace (never another op), and then its
    Dynamo-graph occurrence (the op node, which names its kernels only in a live capture) too."""
    got, want = compiled_kernels(trace), compiled_kernels(live)
    assert sorted(got) == sorted(want)
    for name, facts in want.items():
        seen = dict(got[name])
        assert set(seen.pop("ops")) <= set(facts["ops"]), name
        unnamed = not got[name]["ops"] and facts["ops"]
        expected = {k: v for k, v in facts.items() if k != "ops"}
        if unnamed:
            for key in ("stages", "in_output_code"):
                expected[key] = [s for s in expected[key] if s[1] != "dynamo"]
        assert seen == expected, name


def op_counts(report: Report, stages: tuple[str, ...] = ()) -> dict[tuple[str, str, str], int]:
    """(compile id, stage, part) -> the graph's own node count (a sub-graph's nodes are its own graph's), for
    `stages` (all when empty)."""
    return {(g.compile_id, g.stage, g.part or ""): g.op_count for g in report.graphs
            if g.stage != "output_code" and (not stages or g.stage in stages)}


def hop_arguments(report: Report) -> list[tuple[Any, ...]]:
    """The constexpr and scalar arguments of each raw launch's node at each graph stage (a trace reads them from
    the output code's launch: the node prints its tensors only)."""
    return sorted((k.name, o.compile_id, o.stage, o.part or "", o.subgraph or "", repr(o.constexprs), repr(o.scalars))
                  for k in report.kernels for o in k.occurrences
                  if o.entry == "hop" and o.stage not in ("runtime", "output_code"))


def recompile_changes(report: Report) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """Each recompile's kernel-argument changes (kernel, kind, name, before, after)."""
    return [(r.compile_id, [(c.kernel, c.kind, c.name, c.before, c.after) for c in r.changes]) for r in report.recompiles]


def breaks(report: Report) -> list[tuple[Any, ...]]:
    return sorted((b.compile_id, _relative(b.file), b.line, b.headline) for b in report.graph_breaks)


def recompiles(report: Report) -> list[tuple[str, str]]:
    """(compile id, guard text), the text without what depends on the machine or the torch build:
    the checkout's location (Dynamo cuts long paths: `ork/main/samples/x.py`) and the torch
    frame that evaluated the guard (`(_dynamo/variables/tensor.py:2606 in evaluate_expr)`)."""
    return [(r.compile_id, _version_free(r.reason)) for r in report.recompiles]


def _version_free(text: str) -> str:
    text = re.sub(r"[^\s\"]*?(samples/)", r"\1", text)
    return re.sub(r"\((?:torch/)?_(?:dynamo|inductor)/[\w/]+\.py:\d+ in \w+\)", "(torch frame)", text)


def opaque_ops(report: Report) -> list[tuple[str, str, str]]:
    return sorted({(o.compile_id, o.stage, o.op) for o in report.opaque_ops})


def _relative(path: str | None) -> str | None:
    """Repository paths as the fixtures write them (the GPU machine's checkout was elsewhere)."""
    if path is None:
        return None
    for anchor in ("samples/", "tests/"):
        if anchor in path:
            return path[path.index(anchor):]
    return path


def make_traces() -> Any:
    """benchmarks/make_traces.py, the trace benchmark's log generator (not a package: loaded by path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_traces", FIXTURES.parents[1] / "benchmarks" / "make_traces.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def generated_log(tmp_path: Path, size: int) -> Path:
    """A log of `size` bytes made by the trace benchmark from the real logs (their compiles repeated), made once
    per `tmp_path`."""
    log = tmp_path / "dedicated_log_torch_trace_big.log"
    if not log.exists():
        generator = make_traces()
        generator.write_log(log, generator.real_logs(), size)
    return log
