"""One line of facts per kernel for the default view: how it entered, where, what it costs around it.

Pure functions over a saved `Report` (no torch): the default `graph` text and the advice
rules (`analyse/advice.py`) both read these summaries instead of walking occurrences again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath

from tritoninspect.model.report import Entry, Kernel, Neighbour, Neighbourhood, Occurrence, Report

#: Stages that hold graph nodes (Dynamo to final post-grad), as opposed to launches.
GRAPH_STAGES = ("dynamo", "aot_forward", "aot_backward", "aot_inference", "post_grad", "post_grad_final")
#: Entries under which Inductor sees the kernel as a node it schedules.
VISIBLE = (Entry.HOP.value, Entry.TRITON_OP.value)
#: Directory names installers give installed packages (as origin.INSTALL_DIR_NAMES).
_INSTALL_DIRS = ("site-packages", "dist-packages")


#: The parts of a compiled program, in the order the default view lists a kernel's neighbours by part.
PARTS = ("forward", "recompute", "backward", "inference")


@dataclass(frozen=True)
class Around:
    """The ops of the Inductor kernels just before and after a kernel's launches in one part of the
    compiled program: "forward", "backward", "recompute" (a backward launch recomputing a forward one)
    or "inference"."""

    part: str
    before: tuple[str, ...]
    after: tuple[str, ...]


@dataclass(frozen=True)
class KernelSummary:
    """What the default view says about one kernel, in plain values."""

    name: str
    #: Short source location: relative to cwd, `package/module.py:line` for installed code.
    source: str
    #: Entry kinds, most visible first ("hop", "triton_op", "custom_op", "eager").
    entries: tuple[str, ...]
    #: The custom ops or triton_ops it ran in.
    ops: tuple[str, ...]
    #: Compile ids of the graphs that hold it (or whose custom op ran it).
    compile_ids: tuple[str, ...]
    #: Bytes still cloned per call after re-inplacing (0: all re-inplaced; None: unknown or no clone analysis).
    clone_bytes: int | None
    #: Arguments still cloned after re-inplacing, and those re-inplaced.
    cloned: tuple[str, ...]
    reinplaced: tuple[str, ...]
    #: Ops of the nearest Inductor kernels before and after its launch (or its custom op's call), over
    #: every part of the program (`around` keeps them apart).
    before: tuple[str, ...]
    after: tuple[str, ...]
    #: Epilogue fusion state of its launches ("fused", "off", "on") when torch reports one.
    epilogue: str | None
    #: Launches outside every compiled graph (None: unknown, as in a report read from a trace,
    #: which records no run-time launches), and launches under Inductor (output code or custom op).
    eager_launches: int | None
    compiled_launches: int
    #: Compile ids whose output code lacks the kernel although a graph held it.
    missing: tuple[str, ...]
    #: Mutation analysis fell back (every input assumed written) in these compile ids.
    fallbacks: tuple[str, ...]
    #: One word: "visible", "opaque", "eager", "missing", or two joined by "+".
    verdict: str
    #: The installed distribution the kernel's source is in; None: the user's own code.
    library: str | None = None
    #: `before` and `after` per part of the program its launches are in (forward and backward apart).
    around: tuple[Around, ...] = ()


def summarise(report: Report, cwd: Path | None = None) -> list[KernelSummary]:
    """A summary per kernel, in report order."""
    # A trace records compiles, not launches: eager launches are unknown there, not 0.
    launches_known = report.meta.mode != "trace"
    return [summarise_kernel(k, cwd, launches_known) for k in report.kernels]


def summarise_kernel(kernel: Kernel, cwd: Path | None = None, launches_known: bool = True) -> KernelSummary:
    """The facts of one kernel; see `KernelSummary`. `launches_known`: False when the report
    cannot know run-time launches (read from a trace): eager launches are then None."""
    occ = kernel.occurrences
    clone_bytes, cloned, reinplaced = _clones(occ)
    before, after, epilogue = _neighbours(occ)
    eager = sum(o.launches or 0 for o in occ if o.stage == "runtime" and o.entry == Entry.EAGER.value)
    compiled = sum(o.launches or 0 for o in occ if o.stage == "runtime" and o.entry != Entry.EAGER.value)
    missing = tuple(_sorted_ids(kernel.missing_from_output_code))
    return KernelSummary(
        name=kernel.name,
        source=short_location(kernel.file, kernel.line, cwd),
        entries=tuple(kernel.entries),
        ops=tuple(dict.fromkeys(o.custom_op for o in occ if o.custom_op)),
        compile_ids=tuple(_sorted_ids(o.compile_id for o in occ)),
        clone_bytes=clone_bytes,
        cloned=cloned,
        reinplaced=reinplaced,
        before=before,
        after=after,
        epilogue=epilogue,
        eager_launches=eager if launches_known else None,
        compiled_launches=compiled,
        missing=missing,
        fallbacks=tuple(_sorted_ids(o.compile_id for o in occ if o.mutation_analysis_fallback)),
        verdict=_verdict(kernel.entries, missing),
        library=kernel.library,
        around=_around(occ),
    )


def _verdict(entries: Iterable[str], missing: tuple[str, ...]) -> str:
    words = []
    entries = list(entries)
    if any(e in VISIBLE for e in entries):
        words.append("missing" if missing else "visible")
    if Entry.CUSTOM_OP.value in entries:
        words.append("opaque")
    if Entry.EAGER.value in entries:
        words.append("eager")
    return "+".join(words) or "unseen"


def _clones(occ: Iterable[Occurrence]) -> tuple[int | None, tuple[str, ...], tuple[str, ...]]:
    """Bytes still cloned per call, the arguments cloned, and those re-inplaced (AOT nodes)."""
    with_clones = [o for o in occ if o.clones is not None]
    if not with_clones:
        return None, (), ()
    args = [a for o in with_clones for a in o.clones.arguments]  # type: ignore[union-attr]
    cloned = tuple(dict.fromkeys(a.arg for a in args if a.cloned))
    reinplaced = tuple(dict.fromkeys(a.arg for a in args if a.cloned is False and a.arg not in cloned))
    if any(o.clones.bytes is None for o in with_clones):  # type: ignore[union-attr]
        return None, cloned, reinplaced
    return per_call_bytes(with_clones), cloned, reinplaced


def per_call_bytes(occ: Iterable[Occurrence]) -> int:
    """What one call copies: every launch of one compile adds up (forward and backward), but a call
    runs one compile per frame (`0/0` or its recompile `0/1`, never both), so a frame counts with
    its largest compile; frames after a graph break (`1/0`) run in the same call and add up."""
    per_compile: dict[str, int] = {}
    for o in occ:
        per_compile[o.compile_id or ""] = per_compile.get(o.compile_id or "", 0) + (o.clones.bytes or 0 if o.clones else 0)
    per_frame: dict[str, int] = {}
    for cid, size in per_compile.items():
        frame = cid.split("/", 1)[0] if "/" in cid else cid
        per_frame[frame] = max(per_frame.get(frame, 0), size)
    return sum(per_frame.values())


def _neighbours(occ: Iterable[Occurrence]) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
    hoods: list[Neighbourhood] = [n for o in occ for n in (o.neighbourhood or ())]
    if not hoods:
        return (), (), None
    before = _ops(n.before for n in hoods)
    after = _ops(n.after for n in hoods)
    states = [n.epilogue_fusion for n in hoods if n.epilogue_fusion]
    epilogue = "fused" if "fused" in states else (states[0] if states else None)
    return before, after, epilogue


def _around(occ: Iterable[Occurrence]) -> tuple[Around, ...]:
    """The neighbours of the kernel's launches per part: a kernel launched in the forward and the backward
    has Inductor kernels around it in each, which one before/after pair would mix."""
    parts: dict[str, list[Neighbourhood]] = {}
    for n in (n for o in occ for n in (o.neighbourhood or ())):
        parts.setdefault("recompute" if n.recompute else n.part, []).append(n)
    order = sorted(parts, key=lambda p: PARTS.index(p) if p in PARTS else len(PARTS))
    return tuple(Around(p, _ops(n.before for n in parts[p]), _ops(n.after for n in parts[p])) for p in order)


def _ops(neighbours: Iterable[Neighbour | None]) -> tuple[str, ...]:
    """The distinct ATen ops of adjacent Inductor kernels (their names where ops are unknown)."""
    ops: list[str] = []
    for n in neighbours:
        if n is None:
            continue
        ops.extend(n.ops or (n.name,))
    return tuple(dict.fromkeys(ops))


def _sorted_ids(ids: Iterable[str | None]) -> list[str]:
    """Distinct compile ids in natural order ("2/0" before "10/0")."""
    return sorted({i for i in ids if i}, key=lambda cid: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", cid)])


def short_path(file: str, cwd: Path | None = None) -> str:
    """`file` for a one-line view: `package/module.py` for an installed package (the part after
    site-packages, also in a virtual environment under cwd); relative to cwd when under it; else
    the last two path parts."""
    path = PurePath(file)
    if not path.is_absolute():
        return file
    parts = path.parts
    for i in range(len(parts) - 1, -1, -1):  # first: a venv inside the checkout is still installed code
        if parts[i] in _INSTALL_DIRS:
            return "/".join(parts[i + 1:]) or path.name
    base = cwd if cwd is not None else Path.cwd()
    try:
        return str(path.relative_to(base))
    except ValueError:
        pass
    return "/".join(parts[-2:])


def short_location(file: str | None, line: int | None, cwd: Path | None = None) -> str:
    """`short_path(file):line`, or "-" without a file."""
    if not file:
        return "-"
    shown = short_path(file, cwd)
    return f"{shown}:{line}" if line is not None else shown


def size_text(n: int) -> str:
    """Bytes for a sentence: "128 B", "4.0 MB"."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"
