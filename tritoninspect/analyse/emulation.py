"""What compile-only mode emulated for the run, and where its honest "no GPU" answers
(`torch.cuda.is_available()` False, a CPU tensor's `x.is_cuda`) sent the code another way than a
GPU run: said in notes, and marked on the graph breaks such an answer can lead to."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tritoninspect.analyse.indexes import user_kernel_defs
from tritoninspect.model.records import Capture, DeviceProbeRecord, DeviceQueryRecord
from tritoninspect.model.report import DEVICE_PROBE_MEANING, Diagnostic, GraphBreak, Report
from tritoninspect.textformats.breaks import frame_location, original_function

#: Installed packages: a caller there is shown from the package on (`fla/utils/hardware.py:102`).
_SITE_DIRS = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


def emulation_notes(capture: Capture, cwd: Path | None = None) -> list[Diagnostic]:
    """A note listing the CUDA device queries compile-only mode answered, when any was asked;
    one naming the bool arguments it passed to Triton's interpreter as int1, when any."""
    emulation = capture.emulation
    if emulation is None:
        return []
    notes = []
    if emulation.queries:
        asked = ", ".join(_query_text(q, cwd or Path.cwd()) for q in emulation.queries)
        notes.append(Diagnostic(
            "note", "compile-only",
            f"emulated CUDA device queries for {emulation.target} ({emulation.like}-like, \"{emulation.device_name}\"): "
            f"{asked}; the values are a data sheet's, not from a GPU, and torch.cuda.is_available() stayed "
            f"{emulation.cuda_available}",
        ))
    if emulation.bool_arguments:
        notes.append(Diagnostic(
            "note", "interpreter",
            f"Python bool arguments passed to Triton's interpreter as int1: {', '.join(emulation.bool_arguments)} "
            "(this Triton's interpreter rejects a bool, triton-lang/triton#9565; compile-only mode converts it as "
            "Triton 3.8 does, and the kernel compiled for the target with the bool as given)",
        ))
    return notes


#: How the diagnostic of `unwrapped_tensor_notes` begins (the failure text finds it by this).
UNWRAPPED_NOTE = "Inductor passes a 0-d tensor argument to a user kernel as a number"
#: What a kernel-compile failure of such a kernel is, as the failure text says it.
FAILURE_FROM_UNWRAP = ("compile-only mode's CPU tensors made Inductor pass a 0-d tensor to this kernel as a number "
                       "(a compile-only warning names it): a GPU run passes a pointer and does not fail here")


def unwrapped_tensor_notes(capture: Capture) -> list[Diagnostic]:
    """Compile-only mode: one warning naming each user-kernel parameter that Dynamo's launch gave a
    0-d tensor and Inductor's launch signature types as a number.

    Inductor passes a 0-d graph input that is on the CPU to a GPU kernel as `x.item()`
    (`GraphLowering.is_unspec_arg`, torch/_inductor/graph.py; `should_unwrap_unspec_arg`,
    codegen/triton_utils.py, torch 2.11-2.14), meant for the scalars Dynamo wraps in 0-d CPU
    tensors. Every tensor is on the CPU in compile-only mode, so a 0-d parameter (Liger-Kernel's
    PolyNorm bias) that is on cuda in a GPU run, and passed there as a pointer, is passed here as a
    float: `tl.load(B_ptr)` then fails to compile ("Unsupported ptr type fp32")."""
    if capture.emulation is None:
        return []
    parts = []
    for record in capture.kernels.values():
        zero_d = {p for n in capture.nodes if n.kernel_id == record.id
                  for p, kind in (n.tensor_types or {}).items() if kind.endswith("[]")}
        if not zero_d:
            continue
        numbers = {p for code, meta in user_kernel_defs(capture, (record.name, record.file, record.line))
                   for p, t in meta.signature.items() if p in zero_d and not t.startswith("*") and t != "constexpr"}
        if numbers:
            parts.append(f"{record.name} ({', '.join(sorted(numbers))})")
    if not parts:
        return []
    failed = capture.failure is not None and capture.failure.stage == "kernel_compile"
    return [Diagnostic(
        "warning", "compile-only",
        f"{UNWRAPPED_NOTE} (`x.item()`) when the tensor is on the CPU, as every tensor is in compile-only mode: "
        f"{'; '.join(parts)}; in a GPU run those tensors are on cuda and are passed as pointers, so these "
        "launches are compiled with another signature there (torch/_inductor/graph.py is_unspec_arg)"
        + ("; the run's kernel compile failure may be this" if failed else ""),
    )]


def failure_from_unwrap(report: Report) -> bool:
    """The report's kernel-compile failure is of a kernel compile-only mode passed a 0-d tensor as a number."""
    failure = report.failure
    if failure is None or failure.stage != "kernel_compile" or not failure.kernel:
        return False
    return any(d.source == "compile-only" and d.message.startswith(UNWRAPPED_NOTE)
               and f" {failure.kernel} (" in d.message for d in report.diagnostics)


#: How the diagnostic of `probe_notes` begins (the failure text finds it by this).
PROBE_NOTE = "torch.cuda.is_available() answered False (no GPU here)"
#: What a failure after such an answer may be, as the failure text and the diagnostic say it.
#: Conditional: the answer may have nothing to do with the failure (a newcomer's Liger model failed for its own
#: reason after `infer_device()` asked), and the notes say where it was asked, for the user to judge.
FAILURE_AFTER_PROBE = ("compile-only mode answered torch.cuda.is_available() False before this failure (the "
                       "compile-only notes say where): if the failing code took its no-GPU path from that answer, "
                       "a GPU run may not fail here")


#: How the diagnostic of `tensor_probe_notes` begins (the no-kernels text finds it by this).
TENSOR_PROBE_NOTE = "a tensor's device answered cpu (compile-only mode runs on CPU tensors)"
IS_AVAILABLE = "torch.cuda.is_available()"
#: How both probe diagnostics end when no user kernel launched.
NO_LAUNCH = "no user kernel launched in this run: a GPU run may launch kernels there"


def probe_notes(capture: Capture, graph_breaks: Iterable[GraphBreak] = (), cwd: Path | None = None) -> list[Diagnostic]:
    """One diagnostic listing where `torch.cuda.is_available()` answered False to the user's or a
    library's code: a warning when graph breaks or the run's failure follow such an answer (they
    may be compile-only's own), or when no user kernel launched (it may be why), else a note. Then
    `tensor_probe_notes`."""
    emulation = capture.emulation
    if emulation is None or not emulation.probes:
        return []
    cwd = cwd or Path.cwd()
    tensor_notes = tensor_probe_notes(capture, cwd, graph_breaks)
    probes = [p for p in emulation.probes if p.asked == IS_AVAILABLE]
    if not probes:
        return tensor_notes
    parts = _probe_parts(probes, cwd)
    traced = _traced_probes(capture, tensors=False)
    marked = _marked_by(graph_breaks, traced)
    tail = _breaks_after(traced, marked, [b for b in graph_breaks if not b.device_probe])
    if capture.failure is not None:
        tail += f"; the run failed after it ({capture.failure.stage}): a GPU run may not fail there"
    elif not capture.launches:
        tail += f"; {NO_LAUNCH}"
    return [Diagnostic(
        "warning" if marked or capture.failure is not None or not capture.launches else "note", "compile-only",
        f"{PROBE_NOTE}, where a GPU run answers True, so the code after it took its no-GPU path: {'; '.join(parts)}{tail}",
    ), *tensor_notes]


def _marked_by(graph_breaks: Iterable[GraphBreak], probes: list[DeviceProbeRecord]) -> list[GraphBreak]:
    """The breaks marked as following one of `probes` (`enrich_device_probes`)."""
    places = {f"{p.place} in {p.function}" for p in probes}
    return [b for b in graph_breaks if b.device_probe in places]


def _breaks_after(traced: list[DeviceProbeRecord], marked: list[GraphBreak], others: list[GraphBreak]) -> str:
    """What a probe diagnostic says of the graph breaks after its `traced` probes: those marked, those
    after a probe whose answer picks no path to them (not marked), and of the marked, those it could not
    tell."""
    unknown = [b for b in marked if any(f"{p.place} in {p.function}" == b.device_probe and p.uses is None
                                        for p in traced)]
    unmarked = [b for b in others if next(_probes_on_stack(b, traced), None) is not None]
    said = []
    if marked:
        said.append(f"{_breaks_follow(len(marked))} such a probe ({'each ' if len(marked) > 1 else ''}marked: it "
                    f"{DEVICE_PROBE_MEANING})")
    if unknown:
        said.append(f"for {len(unknown)} of them what the answer decides is not known (its source was not read)")
    if unmarked:
        them = "them" if len(unmarked) > 1 else "it"
        said.append(f"{_breaks_follow(len(unmarked))} one whose answer decides no path to {them} (not marked)")
    handed = _after_handed_on(traced, [b for b in others if b not in unmarked])
    if handed:
        said.append(handed)
    return "; " + ("; ".join(said) if said else "no graph break follows one")


def _after_handed_on(traced: list[DeviceProbeRecord], breaks: list[GraphBreak]) -> str:
    """Breaks of a compile in which a probe's answer left the function that asked (returned, passed on:
    `if on_gpu(): ...` in the caller), off that function's stack: the capture does not follow the answer
    there, so whether it leads to them is not known, and "no graph break follows one" would be a guess."""
    handed = [p for p in traced if p.uses and "passed" in p.uses]
    compiles = {cid for p in handed for cid in p.compile_ids}
    after = [b for b in breaks if b.compile_id in compiles]
    if not after:
        return ""
    functions = ", ".join(dict.fromkeys(p.function for p in handed))
    it = "it" if len(after) == 1 else "them"
    return (f"{'1 graph break' if len(after) == 1 else f'{len(after)} graph breaks'} in the same compile "
            f"come{'s' if len(after) == 1 else ''} after an answer that left {functions} (returned or passed on), "
            f"which this capture does not follow: whether the answer leads to {it} is not known, and a GPU run "
            "may not break there (not marked)")


def _breaks_follow(n: int) -> str:
    return "1 graph break follows" if n == 1 else f"{n} graph breaks follow"


def tensor_probe_notes(capture: Capture, cwd: Path, graph_breaks: Iterable[GraphBreak] = ()) -> list[Diagnostic]:
    """One diagnostic listing where the user's or a library's code asked a tensor whether it is on
    CUDA (`x.is_cuda`, its device compared with "cuda") and heard no: a GPU run hears yes, and may
    launch kernels where this run took a PyTorch path, or not break where this run's CPU path broke.
    A warning when no kernel launched (the likely reason for it) or a graph break follows such an
    answer (marked), else a note. What it says of the breaks comes after the places and the tail
    (`tensor_probe_places` reads the places up to the tail)."""
    emulation = capture.emulation
    probes = [p for p in emulation.probes if p.asked != IS_AVAILABLE] if emulation is not None else []
    if not probes:
        return []
    launched = bool(capture.launches)
    tail = f"; {NO_LAUNCH}" if not launched else "; a GPU run may take another path there"
    graph_breaks = list(graph_breaks)
    traced = _traced_probes(capture, tensors=True)
    marked = _marked_by(graph_breaks, traced)
    if graph_breaks:
        tail += _breaks_after(traced, marked, [b for b in graph_breaks if not b.device_probe])
    return [Diagnostic(
        "note" if launched and not marked else "warning", "compile-only",
        f"{TENSOR_PROBE_NOTE} where a GPU run has it on cuda, so the code after it may have taken its CPU "
        f"path: {'; '.join(_probe_parts(probes, cwd))}{tail}",
    )]


def tensor_probe_places(report: Report) -> str | None:
    """The places of the tensor-device probes of the report's compile-only note, or None."""
    for d in report.diagnostics:
        if d.source == "compile-only" and d.message.startswith(TENSOR_PROBE_NOTE):
            return d.message.split(" path: ", 1)[1].split(f"; {NO_LAUNCH}", 1)[0].split("; a GPU run", 1)[0]
    return None


def availability_probed(report: Report) -> bool:
    """The report's compile-only note says `torch.cuda.is_available()` answered False to the code."""
    return any(d.source == "compile-only" and d.message.startswith(PROBE_NOTE) for d in report.diagnostics)


def _probe_parts(probes: list[DeviceProbeRecord], cwd: Path) -> list[str]:
    parts = []
    for traced, label in ((True, "while Dynamo traced"), (False, "run eagerly")):
        places = [_probe_text(p, cwd) for p in probes if p.traced is traced]
        if places:
            parts.append(f"{label}: {', '.join(places)}")
    return parts


#: What a failure after a tensor's device answered cpu may be (`failure_caveat`).
FAILURE_AFTER_TENSOR_PROBE = ("compile-only mode's CPU tensors answered a device check before this failure (the "
                              "compile-only notes say where): if the failing code took its CPU path from that "
                              "answer, a GPU run may not fail here")
#: ... and when the failing line is such a check (fla's `assert input.device.type in ('cuda', ...)`).
FAILURE_AT_TENSOR_PROBE = ("the failing line asks a tensor's device, which is cpu in compile-only mode and cuda "
                           "in a GPU run: if that answer is what failed, a GPU run does not fail here")


def failure_caveat(report: Report) -> str | None:
    """What compile-only mode itself may have to do with the report's failure, surest first: a 0-d
    tensor passed as a number to the kernel that failed to compile, a tensor device check at the
    failing line, then a False `torch.cuda.is_available()` or a tensor device check before it."""
    if report.failure is None:
        return None
    if failure_from_unwrap(report):
        return FAILURE_FROM_UNWRAP
    places = tensor_probe_places(report)
    if places and _at_failing_line(report.failure, places):
        return FAILURE_AT_TENSOR_PROBE
    if failure_follows_probe(report):
        return FAILURE_AFTER_PROBE
    return FAILURE_AFTER_TENSOR_PROBE if places else None


def _at_failing_line(failure: Any, places: str) -> bool:
    """The failure was raised at a `file:line` the tensor-probe note lists (`places` as it says them)."""
    frames = [failure.torch_frame, *(failure.user_stack or ()), failure.user_frame]
    for frame in filter(None, frames):
        file, line = frame_location(frame)
        if file and line and any(f"{part}:{line} in " in places for part in _tails(file)):
            return True
    return False


def _tails(file: str) -> list[str]:
    """`file` and each shorter path ending it (the note says a library file from its package on)."""
    parts = file.split(os.sep)
    return [os.sep.join(parts[i:]) for i in range(len(parts)) if parts[i]]


def failure_follows_probe(report: Report) -> bool:
    """The report's failure came in compile-only mode after `torch.cuda.is_available()` answered
    False to the user's or a library's code: it may be compile-only's own (a GPU run answers True).
    Not when a surer cause is known (`failure_from_unwrap`)."""
    return report.failure is not None and not failure_from_unwrap(report) and any(
        d.source == "compile-only" and d.message.startswith(PROBE_NOTE) for d in report.diagnostics)


def enrich_device_probes(capture: Capture, fields: dict[str, Any]) -> dict[str, Any]:
    """`graph_breaks` with `device_probe` set on each break whose traced user stack runs through a
    function in which Dynamo traced a device probe answered for the CPU (a False
    `torch.cuda.is_available()`, a CPU tensor's `x.is_cuda` or device compared with "cuda": Dynamo
    folds each into a constant, so the path after it is the CPU's) whose answer can lead to the break
    (`_leads_to`; the first such frame, innermost first)."""
    traced = _traced_probes(capture)
    breaks = fields.get("graph_breaks", ())
    if not traced or not breaks:
        return {}
    return {"graph_breaks": tuple(_marked(b, traced) for b in breaks)}


def _leads_to(probe: DeviceProbeRecord, line: int | None) -> bool:
    """The probe's answer could have changed the path to `line` of the function that asked: at or
    before it, the answer decides a branch, or leaves the function where the capture did not follow
    it (`DeviceProbeRecord.uses`). True when that is not known (no source when captured): the break
    may then be compile-only's own, and the mark says only that."""
    if probe.uses is None or line is None:
        return True
    return any(at <= line for kind, at in probe.uses.items() if kind in ("branch", "passed"))


def _traced_probes(capture: Capture, tensors: bool | None = None) -> list[DeviceProbeRecord]:
    """The probes Dynamo traced: every kind, or (`tensors`) only a tensor's device, or only `is_available()`."""
    emulation = capture.emulation
    probes = [p for p in emulation.probes if p.traced] if emulation is not None else []
    return probes if tensors is None else [p for p in probes if (p.asked != IS_AVAILABLE) is tensors]


def _probes_on_stack(b: GraphBreak, probes: list[DeviceProbeRecord]) -> Iterator[tuple[DeviceProbeRecord, int | None]]:
    """(probe, the line its function is at in the break's stack), innermost frame first."""
    for frame in reversed(b.user_stack):
        file, line = frame_location(frame)
        function = original_function(frame.rpartition(" in ")[2])
        for probe in probes:
            if probe.function == function and probe.place.rpartition(":")[0] == file:
                yield probe, line


def _marked(b: GraphBreak, probes: list[DeviceProbeRecord]) -> GraphBreak:
    for probe, line in _probes_on_stack(b, probes):
        if _leads_to(probe, line):
            return dataclasses.replace(b, device_probe=f"{probe.place} in {probe.function}")
    return b


def _probe_text(probe: DeviceProbeRecord, cwd: Path) -> str:
    ids = f", compile {', '.join(probe.compile_ids)}" if probe.compile_ids else ""
    asked = "" if probe.asked == IS_AVAILABLE else f"{probe.asked} "
    return f"{_place(probe.place, cwd)} in {probe.function} ({asked}×{probe.calls}{ids})"


def _query_text(query: DeviceQueryRecord, cwd: Path) -> str:
    where = f" ({_place(query.first_caller, cwd)})" if query.first_caller else ""
    return f"{query.function} ×{query.calls}{where}"


def _place(caller: str, cwd: Path) -> str:
    """`file:line`, shortened: from the package on for an installed library, relative to cwd under it."""
    for site in _SITE_DIRS:
        if site in caller:
            return caller.rsplit(site, 1)[1]
    file, _, line = caller.rpartition(":")
    try:
        return f"{Path(file).relative_to(cwd)}:{line}"
    except ValueError:
        return caller
