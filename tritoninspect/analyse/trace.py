"""A TORCH_TRACE log turned into the plain records a live capture makes, torch-free.

The report of a trace is then built by the same analyses as a live one
(`analyse.build_report`). What a trace cannot tell is left unknown, never guessed, and
said in `TRACE_UNKNOWNS` notes: run-time launches (counts, eager launches outside
compiled graphs), the kernels inside an opaque custom op (the op never reaches Inductor),
the op of a `triton_op` decomposed before any graph the trace holds (e.g. called from a
registered backward), mutation-analysis fallbacks (logged, not traced), which installed library a
kernel comes from (`libraries` stays empty).

Stages: `dynamo_output_graph` -> dynamo; `aot_{forward,backward,inference}_graph` ->
aot_*; `before_post_grad_graph` -> post_grad (the graph as post-grad passes begin);
`inductor_post_grad_graph` -> post_grad_final; `inductor_output_code` -> output code, its
part from its `# AOT ID: ['0_forward']` line.
"""

from __future__ import annotations

import json
import linecache
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from tritoninspect import textformats
from tritoninspect.analyse.trace_kernels import KernelIndex
from tritoninspect.analyse.trace_nodes import kernel_nodes
from tritoninspect.analyse.trace_provenance import kernel_ops, kernel_posts, named_by_provenance, post_to_pre
from tritoninspect.model.records import (
    BreakRecord,
    Capture,
    Failure,
    GraphRecord,
    OutputCodeRecord,
    RecompileLimit,
    RecompileRecord,
)
from tritoninspect.model.report import Graph
from tritoninspect.model.stored import StoredText, replaced, stored_text
from tritoninspect.textformats import fx_readable as fx_graph
from tritoninspect.textformats.memo import TextMemo
from tritoninspect.textformats.output_code import TORCH_OP_NAMESPACES
from tritoninspect.textformats.breaks import failure_summary
from tritoninspect.textformats.torch_trace import TraceEvent, TraceLog

if TYPE_CHECKING:
    from tritoninspect.analyse.trace_kernels import WholeLog

_GRAPH_EVENTS = {
    "dynamo_output_graph": ("dynamo", ""),
    "aot_forward_graph": ("aot_forward", "forward"),
    "aot_backward_graph": ("aot_backward", "backward"),
    "aot_inference_graph": ("aot_inference", "inference"),
}
_POST_GRAD_ARTIFACTS = {"before_post_grad_graph": "post_grad", "inductor_post_grad_graph": "post_grad_final"}
_AOT_ID_RE = re.compile(r"#\s*AOT ID: \['\d+_(?P<part>\w+)'\]")
_CONTEXT_RADIUS = 2

#: What a report read from a trace cannot know (shown as notes, `meta.unknown` in JSON).
TRACE_UNKNOWNS = (
    "run-time launches: how often each kernel ran, and launches outside compiled graphs (eager)",
    "kernels launched inside an opaque custom_op (Inductor calls the op as a black box)",
    "mutation-analysis fallbacks (torch logs them, it does not trace them)",
    "which installed library a kernel comes from (the trace names its file, not the package it belongs to)",
)


@dataclass
class _Graph:
    compile_id: str
    stage: str
    part: str
    code: str = StoredText()  # type: ignore[assignment]  # its place in the log, read back when asked
    parsed: fx_graph.ParsedGraph
    op_count: int | None = None
    line: int = 0  # of its event in the log


@dataclass
class _Reader:
    """What has been read so far of one log."""

    graphs: list[_Graph] = field(default_factory=list)
    codes: list[OutputCodeRecord] = field(default_factory=list)
    capture: Capture = field(default_factory=Capture)
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: (compile id, part, Inductor kernel -> post-grad nodes) from provenance artifacts.
    provenance: list[tuple[str, str, dict[str, list[list[str]]]]] = field(default_factory=list)
    #: (compile id, part) -> post-grad node -> pre-grad node, from the same artifacts.
    pre: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    #: Compile id -> the part of its latest output code read.
    last_part: dict[str, str] = field(default_factory=dict)
    #: The devices the graphs' tensor types name ("cuda", "cpu"), read as each graph passes.
    devices: set[str] = field(default_factory=set)
    #: When the log was last written (its mtime; None unknown), and the source files changed after it.
    written: float | None = None
    stale: set[str] = field(default_factory=set)
    #: The log line of each output code and provenance artifact (as `codes`, `provenance`), of the event being
    #: read, of the first compile's metrics and of the failure: what a log read in segments compares by
    #: (analyse/trace_segments.py).
    code_lines: list[int] = field(default_factory=list)
    provenance_lines: list[int] = field(default_factory=list)
    line: int = 0
    metrics_line: int = 0
    failure_line: int = 0
    #: Compile ids in the order of their first event ("?": events of no compile).
    compiles: dict[str, None] = field(default_factory=dict)

    @property
    def graph_lines(self) -> list[int]:
        return [g.line for g in self.graphs]


def capture_from_trace(log: TraceLog, target: str, events: Iterable[TraceEvent] | None = None) -> Capture:
    """The records of one trace log (one rank), as a live capture would hold them: from
    `events` as they stream past (`textformats.torch_trace.stream_trace`), else `log.events`."""
    reader, cut = read_events(log, log.events if events is None else events)
    capture, index = capture_of(reader)
    notes = [("kernel_idx", n) for n in index.mapping_notes(reader.graphs)] + [("trace", n) for n in index.notes]
    notes += [("trace", cut)] if cut else []
    notes += [("trace", stale_note(reader.stale))] if reader.stale else []
    capture.meta = {**trace_meta(log, reader, target), "notes": notes}
    return capture


def read_events(log: TraceLog, events: Iterable[TraceEvent], last_line: int | None = None) -> tuple[_Reader, str]:
    """What `events` (all of a log's, or a segment's: analyse/trace_segments.py) say, read; and the note
    saying the log's last output code was left out ("" if not). `last_line`: the line of the log's last
    event, when `events` are a segment's (None: they run to the log's end)."""
    reader, last = _Reader(written=_mtime(log.path)), None
    for event in events:
        reader.line = event.line
        reader.compiles.setdefault(event.compile_id or "?", None)
        _read_event(reader, event)
        last = event
    at_end = last is not None and (last_line is None or last.line == last_line)
    cut = _drop_cut_code(reader, log, last) if at_end else ""
    _assign_post_grad_parts(reader)
    _ops_from_provenance(reader)
    return reader, cut


def capture_of(reader: _Reader, evidence: WholeLog | None = None) -> tuple[Capture, KernelIndex]:
    """The capture of what `reader` read (its `meta` left to the caller), and the kernel index it was made
    with: from the evidence of the whole log when `reader` read a segment of it."""
    capture = reader.capture
    capture.output_code = reader.codes
    capture.graphs = [_graph_record(g, reader.metrics) for g in reader.graphs]
    named = named_by_provenance(reader.graphs, reader.codes, reader.provenance)
    index = KernelIndex.build(reader.graphs, reader.codes, named, evidence)
    capture.kernels = index.records()
    capture.nodes = kernel_nodes(reader.graphs, reader.codes, index)
    capture.problems.extend(index.problems)
    _compile_major(capture, reader.compiles)
    return capture, index


def _compile_major(capture: Capture, compiles: dict[str, None]) -> None:
    """The capture's records of each compile together, compiles in the order they began: AOTAutograd compiles
    a graph's backward at its first backward call, after the forward compiles of the frames that ran before
    it, and a compile's backward graphs and code came after those compiles'. (A log read in segments of
    compiles, analyse/trace_segments.py, gives its rows in this order too.)"""
    rank = {cid: i for i, cid in enumerate(compiles)}
    for name in ("graphs", "output_code", "nodes", "breaks", "recompiles", "recompile_limits"):
        rows = getattr(capture, name)
        if len({r.compile_id for r in rows}) > 1:
            setattr(capture, name, sorted(rows, key=lambda r: rank.get(r.compile_id, len(rank))))


def _drop_cut_code(reader: _Reader, log: TraceLog, last: TraceEvent | None) -> str:
    """The log's last event, when it is the output code of a compile that never ended (a job that crashed or
    is still running), may be cut in the middle of its text: a launch missing from it says nothing, and was
    reported as a kernel its compiled code never launches, with advice to use its outputs. It is left out,
    as the output code of a compile that got no further; the note saying so is returned ("" if none)."""
    if last is None or last.name != "inductor_output_code" or last.compile_id in log.ended or not reader.codes:
        return ""
    reader.codes.pop()
    reader.code_lines.pop()
    return (f"[{last.compile_id}] output code left out: the log ends in it (line {last.line}), in a compile that "
            "never finished, so it may be cut")


def _read_event(reader: _Reader, event: TraceEvent) -> None:
    cid = event.compile_id or "?"
    if event.name in _GRAPH_EVENTS:
        stage, part = _GRAPH_EVENTS[event.name]
        _add_graph(reader, cid, stage, part, event)
    elif event.artifact in _POST_GRAD_ARTIFACTS:
        _add_graph(reader, cid, _POST_GRAD_ARTIFACTS[event.artifact], "", event)
    elif event.name == "inductor_output_code":
        reader.codes.append(_output_code(cid, event))
        reader.code_lines.append(event.line)
        reader.last_part[cid] = reader.codes[-1].part
    elif event.artifact == "dynamo_graph_break_reason":
        reader.capture.breaks.append(_break(reader, cid, event.payload, event.attempt))
    elif event.name == "compilation_metrics":
        _metrics(reader, cid, event.meta)
    elif event.artifact == "inductor_provenance_tracking_node_mappings":
        # Traced right after the output code of the graph it describes (compile_fx.py).
        part = reader.last_part.get(cid, "")
        reader.provenance.append((cid, part, kernel_posts(event.payload)))
        reader.provenance_lines.append(event.line)
        reader.pre[(cid, part)] = post_to_pre(event.payload)


def _add_graph(reader: _Reader, cid: str, stage: str, part: str, event: TraceEvent) -> None:
    code = event.payload
    reader.devices.update(m["device"] for m in _DEVICE_RE.finditer(code))
    reader.graphs.append(_Graph(cid, stage, part, event.text, PARSED_GRAPHS(code, TORCH_OP_NAMESPACES),
                                line=event.line))


def _output_code(cid: str, event: TraceEvent) -> OutputCodeRecord:
    return OutputCodeRecord(cid, code=event.text, **PARSED_CODES(event.payload))


def _parse_output_code(code: str) -> Mapping[str, Any]:
    """The fields of an `OutputCodeRecord` that its text alone gives (read-only: it is shared)."""
    kernels, externs = textformats.output_code.parse_output_code(code)
    calls = textformats.output_code.parse_code_calls(code)
    match = _AOT_ID_RE.search(code[:500])
    return MappingProxyType({"part": match["part"] if match else "", "user_kernels": kernels, "extern_ops": externs,
                             "calls": calls})


def _parse_calls_with_ops(code: str, ops: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]) -> tuple[Any, ...]:
    return textformats.output_code.parse_code_calls(code, dict(ops), comment_first=True)


#: The parses of payload texts, kept for the life of the process: a worker that reads many ranks of
#: one job parses each distinct graph and output module once (textformats/memo.py: what may be kept).
#: The records made from them take their compile id from the event.
PARSED_GRAPHS = TextMemo(fx_graph.parse_graph, devices=True)
PARSED_CODES = TextMemo(_parse_output_code, devices=True)
PARSED_CALLS = TextMemo(_parse_calls_with_ops, devices=True)


def _assign_post_grad_parts(reader: _Reader) -> None:
    """Post-grad graphs carry no part: each is the graph of the next output code of its
    compile (Inductor lowers it and writes that code next); without one, the AOT parts in order."""
    codes: dict[str, list[str]] = defaultdict(list)
    for code in reader.codes:
        codes[code.compile_id].append(code.part)
    parts_in_order: dict[str, list[str]] = defaultdict(list)
    for g in reader.graphs:
        if g.stage.startswith("aot_"):
            parts_in_order[g.compile_id].append(g.part)
    for stage in _POST_GRAD_ARTIFACTS.values():
        seen: dict[str, int] = defaultdict(int)
        for g in reader.graphs:
            if g.stage != stage:
                continue
            n = seen[g.compile_id]
            seen[g.compile_id] += 1
            known = codes[g.compile_id] or parts_in_order[g.compile_id]
            g.part = known[n] if n < len(known) else ""


def _ops_from_provenance(reader: _Reader) -> None:
    """Each Inductor kernel's ops from its provenance (the post-grad nodes it was made
    from), where the trace has it; otherwise the output code's comments say them."""
    finals_of: dict[tuple[str, str], list[_Graph]] = defaultdict(list)
    for g in reader.graphs:
        if g.stage == "post_grad_final":
            finals_of[(g.compile_id, g.part)].append(g)
    codes_of: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, code in enumerate(reader.codes):
        codes_of[(code.compile_id, code.part)].append(i)
    for cid, part, posts in reader.provenance:
        finals = finals_of.get((cid, part), [])
        if len(finals) != 1:
            continue
        ops = kernel_ops(posts, finals[0].parsed, reader.pre.get((cid, part)))
        for i in codes_of.get((cid, part), []):
            code = reader.codes[i]
            # The `Original ATen` comment (GPU launches) names the ops before
            # decompositions, as a live capture does: it goes first here.
            calls = PARSED_CALLS(code.code, tuple((name, tuple(per_call)) for name, per_call in ops.items()))
            reader.codes[i] = replaced(code, calls=calls)


def _graph_record(g: _Graph, metrics: dict[str, dict[str, Any]]) -> GraphRecord:
    """The graph's record, made as the report's `Graph` (a `GraphRecord` with the output-code fields
    empty, as `analyse_graphs` would copy it): the capture's record is then the report's row, not a
    second copy of it alive while the report is built (docs/speed.md, Traces)."""
    op_count = g.parsed.op_count
    compile_time = None
    if g.stage == "dynamo":
        m = metrics.get(g.compile_id, {})
        op_count = _count(m.get("graph_op_count")) or op_count
        compile_time = _seconds(m.get("backend_compile_time_s"))
    return Graph(g.compile_id, g.stage, g.part, stored_text(g), op_count, tuple(g.parsed.subgraphs),
                 compile_time_s=compile_time)


def _count(value: Any) -> int | None:
    """A metrics count as torch writes it (an int >= 0); anything else (a damaged or edited line) is none."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _seconds(value: Any) -> float | None:
    """A metrics duration as torch writes it (a finite number >= 0); anything else is none: an infinite
    or NaN one would make the report's JSON unreadable (`Infinity` is not JSON)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


# --- graph breaks, recompiles, failures ------------------------------------------------------


def _break(reader: _Reader, cid: str, payload: str, attempt: int = 0) -> BreakRecord:
    reason, file, line, stack, skipped = textformats.breaks.parse_graph_break(payload, ())
    details = textformats.breaks.graph_break_details(payload)
    context, start = _context(reader, file, line)
    library_frame = textformats.breaks.frame_location(details["library_frame"] or "")
    library_context, library_start = _context(reader, *library_frame)
    # What an `.item()` value feeds, read from the source as a live capture reads it, when the file is here
    # and unchanged since the log (`context` is then read): its advice follows it.
    uses = textformats.value_use.break_value_uses(reason, "".join(linecache.getlines(file)), line) if (
        context and file) else None
    return BreakRecord(cid, reason, file, line, stack, skipped, context=context, context_start=start,
                       library_context=library_context, library_context_start=library_start, attempt=attempt,
                       value_uses=uses, **details)


def _context(reader: _Reader, file: str | None, line: int | None) -> tuple[tuple[str, ...], int | None]:
    """Source lines around a break when the file is here too (a trace holds no source), and unchanged since
    the log was written: edited later, its lines may have moved, and another line would be shown as the break's."""
    if not file or not line or not Path(file).is_file():
        return (), None
    changed = _mtime(Path(file))
    if reader.written is not None and changed is not None and changed > reader.written + _MTIME_SLACK_S:
        reader.stale.add(file)
        return (), None
    start = max(1, line - _CONTEXT_RADIUS)
    lines = [linecache.getline(file, n).rstrip("\n") for n in range(start, line + _CONTEXT_RADIUS + 1)]
    while lines and not lines[-1]:
        lines.pop()
    return tuple(lines), start if lines else None


#: Files written in one checkout or copy get mtimes a little apart: only a source newer than the log by more than
#: this is taken as edited after the run.
_MTIME_SLACK_S = 2.0


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def stale_note(files: set[str]) -> str:
    return (f"source lines of graph breaks are not shown from {len(files)} file(s) changed since the log was written "
            f"(their lines may have moved): {', '.join(sorted(files))}")


#: What a compile's metrics are kept for (`_graph_record`, `_meta`): a compile's whole metrics (its Inductor
#: config among them) are a few KiB, kept for every compile of a long log until it has been read.
_METRICS_KEPT = ("graph_op_count", "backend_compile_time_s", "pytorch_version", "triton_version", "python_version")


def _metrics(reader: _Reader, cid: str, m: dict[str, Any]) -> None:
    reader.metrics[cid] = {key: m[key] for key in _METRICS_KEPT if key in m}
    reader.metrics_line = reader.metrics_line or reader.line
    _epilogue_setting(reader, cid, m.get("inductor_config"))
    capture = reader.capture
    fail_type, fail_reason = m.get("fail_type"), str(m.get("fail_reason") or "")
    limit = textformats.breaks.recompile_limit(fail_reason) if fail_type else None
    if limit is not None:
        capture.recompile_limits.append(
            RecompileLimit(cid, *limit, m.get("co_name"), m.get("co_filename"), m.get("co_firstlineno")))
        return
    if m.get("recompile_reason") and not fail_type:
        capture.recompiles.append(RecompileRecord(cid, str(m["recompile_reason"])))
    if fail_type and capture.failure is None and not _skipped_frame(capture, cid):
        stage = "inductor" if any(c.compile_id == cid for c in reader.codes) else "dynamo"
        file, line = m.get("fail_user_frame_filename"), m.get("fail_user_frame_lineno")
        frame = f"{file}:{line}" if file and line else None
        # Dynamo's "user frame" is the innermost frame it traced, Triton's own runtime included.
        mine = frame if frame and textformats.origin.is_user_file(str(file)) else None
        exc_type, message = failure_summary(str(fail_type), fail_reason)
        capture.failure = Failure(stage, cid, "", exc_type, message, user_frame=mine,
                                  user_stack=(mine,) if mine else (), torch_frame=None if mine else frame)
        reader.failure_line = reader.line


def _skipped_frame(capture: Capture, cid: str) -> bool:
    """The compile's failure is a graph break where Dynamo skipped the frame (it logged the break "frame
    skipped" before its metrics): the frame ran eagerly and the run went on, as a live capture of the same
    model shows; it was reported as the model failing (exit 4)."""
    return any(b.compile_id == cid and b.frame_skipped for b in capture.breaks)


def _epilogue_setting(reader: _Reader, cid: str, config: Any) -> None:
    """Inductor's `epilogue_fusion_user_defined_triton_kernel` when the compile's metrics
    carry its config (`inductor_config`, a JSON string) and it is off: its output code then
    fused nothing into user kernels. On, whether it did is left unknown (a trace lacks the
    kernel's own source to compare with)."""
    try:
        value = json.loads(config).get("epilogue_fusion_user_defined_triton_kernel") if config else None
    except (ValueError, AttributeError, TypeError, RecursionError):  # not a JSON object's text
        return
    if value is False:
        reader.codes = [replaced(c, epilogue_fusion=False) if c.compile_id == cid else c
                        for c in reader.codes]


def trace_meta(log: TraceLog, reader: _Reader, target: str) -> dict[str, Any]:
    metrics = next(iter(reader.metrics.values()), {})
    from tritoninspect.model import __version__

    return {
        "tool": "tritoninspect",
        "tool_version": __version__,
        "mode": "trace",
        "device": _device(reader),
        "torch": log.torch_version or str(metrics.get("pytorch_version") or ""),
        "triton": str(metrics.get("triton_version") or ""),
        "target": target,
        "python": str(metrics.get("python_version") or "").split(" (", 1)[0],
        "stage": _last_stage(reader),
        "dynamic": None,
        "backward": any(g.stage == "aot_backward" for g in reader.graphs),
        "calls": 1,
        "rank": log.rank,
    }


def _last_stage(reader: _Reader) -> str:
    """How far the traced run went, in `--stage` words: inductor (output code), aot or dynamo."""
    if reader.codes:
        return "inductor"
    return "aot" if any(g.stage != "dynamo" for g in reader.graphs) else "dynamo"


_DEVICE_RE = re.compile(r'"[a-z]\w*\[[^\]]*\]\[[^\]]*\](?P<device>cuda|cpu|xpu|mps|hip)(?::\d+)?"')


def _device(reader: _Reader) -> str:
    """The device of the traced graphs' tensors, as printed in their types ("cuda", "cpu")."""
    return ", ".join(sorted(reader.devices)) or "unknown"
