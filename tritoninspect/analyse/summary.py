"""One line of facts per kernel for the default view: how it entered, where, what it costs around it.

Pure functions over a saved `Report` (no torch): the default `graph` text and the advice
rules (`analyse/advice.py`) both read these summaries instead of walking occurrences again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath

from tritoninspect.model.report import Entry, Kernel, Neighbourhood, Occurrence, Report

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
    cannot know run-time launches (read from a trace): eager launches are then None. One pass over
    the occurrences, keeping no occurrence: those of a long trace are read back from a file
    (model/spill.py), tens of thousands of them."""
    facts = _Facts()
    for o in kernel.occurrences:
        facts.add(o)
    missing = tuple(_sorted_ids(kernel.missing_from_output_code))
    clone_bytes, cloned, reinplaced = facts.clones()
    return KernelSummary(
        name=kernel.name,
        source=short_location(kernel.file, kernel.line, cwd),
        entries=tuple(kernel.entries),
        ops=tuple(facts.ops),
        compile_ids=tuple(_sorted_ids(facts.compile_ids)),
        clone_bytes=clone_bytes,
        cloned=cloned,
        reinplaced=reinplaced,
        before=tuple(facts.before),
        after=tuple(facts.after),
        epilogue="fused" if "fused" in facts.states else next(iter(facts.states), None),
        eager_launches=facts.eager if launches_known else None,
        compiled_launches=facts.compiled,
        missing=missing,
        fallbacks=tuple(_sorted_ids(facts.fallbacks)),
        verdict=_verdict(kernel.entries, missing),
        library=kernel.library,
        around=facts.around(),
    )


class _Facts:
    """What `summarise_kernel` gathers of a kernel's occurrences as they pass, in their order."""

    def __init__(self) -> None:
        self.ops: dict[str, None] = {}
        self.compile_ids: set[str] = set()
        self.fallbacks: set[str] = set()
        self.eager = self.compiled = 0
        self.with_clones = False
        self.unknown_bytes = False
        self.cloned: dict[str, None] = {}
        self.not_cloned: dict[str, None] = {}
        self.per_compile: dict[str, int] = {}
        self.before: dict[str, None] = {}
        self.after: dict[str, None] = {}
        self.states: dict[str, None] = {}
        self.parts: dict[str, tuple[dict[str, None], dict[str, None]]] = {}

    def add(self, o: Occurrence) -> None:
        if o.custom_op:
            self.ops.setdefault(o.custom_op)
        if o.compile_id:
            self.compile_ids.add(o.compile_id)
            if o.mutation_analysis_fallback:
                self.fallbacks.add(o.compile_id)
        if o.stage == "runtime":
            if o.entry == Entry.EAGER.value:
                self.eager += o.launches or 0
            else:
                self.compiled += o.launches or 0
        if o.clones is not None:
            self._clone(o)
        for n in o.neighbourhood or ():
            self._neighbourhood(n)

    def _clone(self, o: Occurrence) -> None:
        clones = o.clones
        assert clones is not None
        self.with_clones = True
        for a in clones.arguments:
            (self.cloned if a.cloned else self.not_cloned if a.cloned is False else {}).setdefault(a.arg)
        self.unknown_bytes |= clones.bytes is None
        cid = o.compile_id or ""
        self.per_compile[cid] = self.per_compile.get(cid, 0) + (clones.bytes or 0)

    def _neighbourhood(self, n: Neighbourhood) -> None:
        part = self.parts.setdefault("recompute" if n.recompute else n.part, ({}, {}))
        for side, ops in ((n.before, (self.before, part[0])), (n.after, (self.after, part[1]))):
            if side is not None:
                for name in side.ops or (side.name,):
                    ops[0].setdefault(name)
                    ops[1].setdefault(name)
        if n.epilogue_fusion:
            self.states.setdefault(n.epilogue_fusion)

    def clones(self) -> tuple[int | None, tuple[str, ...], tuple[str, ...]]:
        """Bytes still cloned per call, the arguments cloned, and those re-inplaced (AOT nodes)."""
        if not self.with_clones:
            return None, (), ()
        cloned = tuple(self.cloned)
        reinplaced = tuple(a for a in self.not_cloned if a not in self.cloned)
        return (None if self.unknown_bytes else _per_call(self.per_compile)), cloned, reinplaced

    def around(self) -> tuple[Around, ...]:
        """The neighbours of the kernel's launches per part: a kernel launched in the forward and the backward
        has Inductor kernels around it in each, which one before/after pair would mix."""
        order = sorted(self.parts, key=lambda p: PARTS.index(p) if p in PARTS else len(PARTS))
        return tuple(Around(p, tuple(self.parts[p][0]), tuple(self.parts[p][1])) for p in order)


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


def _per_call(per_compile: dict[str, int]) -> int:
    """What one call copies, from each compile's bytes: every launch of one compile adds up (forward and
    backward), but a call runs one compile per frame (`0/0` or its recompile `0/1`, never both), so a frame
    counts with its largest compile; frames after a graph break (`1/0`) run in the same call and add up."""
    per_frame: dict[str, int] = {}
    for cid, size in per_compile.items():
        frame = cid.split("/", 1)[0] if "/" in cid else cid
        per_frame[frame] = max(per_frame.get(frame, 0), size)
    return sum(per_frame.values())


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
