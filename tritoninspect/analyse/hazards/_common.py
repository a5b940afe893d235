"""What the hazard analyses share: reading the capture's records by kernel and compile, evidence
helpers, the torch version. Pure functions over records (no torch)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from tritoninspect.analyse.indexes import codes_of_compile, nodes_of_kernel, user_kernel_defs, user_kernel_defs_of_compile
from tritoninspect.model.hazard_records import ArgLayout, KernelSource, TensorArg
from tritoninspect.model.records import Capture, FallbackRecord, KernelRecord, NodeRecord, OutputCodeRecord
from tritoninspect.model.report import Evidence
from tritoninspect.textformats.kernel_access import pointer_uses
from tritoninspect.textformats.user_kernels import UserKernelMeta

#: Stages whose launch nodes hold the tensors as the user's code made them (eager's view).
EAGER_STAGES = ("dynamo", "aot_forward", "aot_backward", "aot_inference")
AOT_STAGES = ("aot_forward", "aot_backward", "aot_inference")


def torch_version(capture: Capture) -> str:
    return str(capture.meta.get("torch", ""))


def compile_ids(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


@dataclass(frozen=True)
class CompiledLaunch:
    """One user kernel's definition in one output module: what Inductor's launch of it carries."""

    compile_id: str
    part: str
    meta: UserKernelMeta
    code: OutputCodeRecord


def compiled_launches(capture: Capture, record: KernelRecord) -> list[CompiledLaunch]:
    """The kernel's definitions in every output module (one per compile and part)."""
    return [CompiledLaunch(code.compile_id, code.part, meta, code)
            for code, meta in user_kernel_defs(capture, (record.name, record.file, record.line))]


def hop_nodes(capture: Capture, kid: str, stages: Iterable[str], compile_id: str | None = None) -> list[NodeRecord]:
    """The kernel's HOP nodes at `stages` (in capture order), of one compile when given."""
    wanted = tuple(stages)
    pool = capture.nodes if compile_id is None else nodes_of_kernel(capture, kid, compile_id)
    return [n for n in pool if n.kernel_id == kid and n.form in ("mutation", "functional") and n.stage in wanted]


def written(capture: Capture, kid: str, compile_id: str) -> tuple[str, ...]:
    """The arguments the kernel writes in a compile: its AOT nodes' `tensors_to_clone`. When mutation
    analysis fell back (`fell_back`) torch lists every tensor argument there, read-only inputs too; then
    those its source stores to or updates atomically (`stored`), when the source says."""
    names: list[str] = []
    for node in hop_nodes(capture, kid, AOT_STAGES, compile_id):
        names += list(node.tensors_to_clone or ())
    names = list(dict.fromkeys(names))
    if fell_back(capture, kid, compile_id):
        stores = stored(capture.hazards.kernel_sources.get(kid))
        names = names if stores is None else [n for n in names if n in stores]
    return tuple(names)


def stored(source: KernelSource | None) -> frozenset[str] | None:
    """The parameters the kernel's body stores to or updates atomically; None when its source is unknown or
    shows no memory operation at all (pointers it cannot follow: `textformats/kernel_access.py`)."""
    uses = pointer_uses(source.source) if source is not None else {}
    if not uses:
        return None
    return frozenset(p for p, kinds in uses.items() if {"store", "atomic"} & set(kinds))


def fell_back(capture: Capture, kid: str, compile_id: str) -> bool:
    return any(f.kernel_id == kid and f.compile_id == compile_id for f in capture.fallbacks)


def layouts(capture: Capture, kid: str, stage: str, compile_id: str | None = None) -> list[ArgLayout]:
    return [lay for lay in capture.hazards.layouts if lay.kernel_id == kid and lay.stage == stage
            and (compile_id is None or lay.compile_id == compile_id)]


def eager_layouts(capture: Capture, kid: str, compile_id: str, part: str | None = None) -> list[ArgLayout]:
    """The AOT nodes' layouts of one compile (the user's tensors as functionalization got them: one per
    launch, in graph order), those of one part when given."""
    return [lay for lay in capture.hazards.layouts if lay.kernel_id == kid and lay.compile_id == compile_id
            and lay.stage in AOT_STAGES and (part is None or lay.part == part)]


def apart_in_dynamo(capture: Capture, kid: str, compile_id: str, params: Iterable[str]) -> bool:
    """The parameters, one storage in the AOT graph, are separate tensors in every launch of the kernel
    that Dynamo traced in this compile (what the user's code passes), so the compile merged them:
    AOTAutograd's common-subexpression elimination makes one tensor of two identical allocations
    (two `torch.zeros` of one shape; `torch.empty` is never merged: torch/_functorch/compile_utils.py
    `fx_graph_cse`, torch 2.11-2.14). False when Dynamo's graph has no launch of it (a triton_op's
    kernel is launched inside the op)."""
    wanted = set(params)
    traced = [lay for lay in capture.hazards.layouts
              if lay.kernel_id == kid and lay.compile_id == compile_id and lay.stage == "dynamo"]
    if not traced:
        return False
    for lay in traced:
        storages = {a.storage for a in lay.args if a.param in wanted}
        if len(storages) == 1 and wanted <= {a.param for a in lay.args}:
            return False
    return True


def arg(layout: ArgLayout, param: str) -> TensorArg | None:
    return next((a for a in layout.args if a.param == param), None)


def view_text(a: TensorArg) -> str:
    """"a 16-element view at offset 48 of a 64-element storage", or "a 64-element tensor"."""
    numel = _numel(a)
    size = f"{numel}-element" if numel is not None else "symbolic-size"
    storage = a.storage_elements
    if a.offset in (0, "0") and (storage is None or storage == numel):
        return f"a {size} {a.dtype} tensor"
    of = f" of a {storage}-element storage" if storage is not None else ""
    return f"a {size} view at offset {a.offset}{of} (strides {tuple(a.stride)})"


def _numel(a: TensorArg) -> int | None:
    total = 1
    for d in a.shape:
        if not isinstance(d, int):
            return None
        total *= d
    return total


def numel(a: TensorArg) -> int | None:
    return _numel(a)


def kernel_evidence(record: KernelRecord) -> Evidence:
    """Where the kernel is defined."""
    return Evidence("kernel source", f"{record.name} is defined here", file=record.file, line=record.line)


def torch_evidence(capture: Capture) -> Evidence:
    mode = capture.meta.get("mode", "")
    return _torch_evidence(f"torch {torch_version(capture)}, triton {capture.meta.get('triton', '')}"
                           + (f", {mode} mode" if mode else ""))


@functools.lru_cache(maxsize=16)
def _torch_evidence(text: str) -> Evidence:
    """One (frozen) record per text: most findings carry it (8,600 copies of one text for a 100 MiB trace)."""
    return Evidence("torch", text)


def size_text(n: int | None) -> str:
    if n is None:
        return "? B"
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def joined(names: Iterable[str]) -> str:
    items = list(names)
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else (items[0] if items else "")


_AT_RE = re.compile(r"\bat (\d+):(\d+):")


def fallback_line(fallback: FallbackRecord, source: KernelSource | None) -> int | None:
    """The kernel line mutation analysis gave up on: as recorded (a TTIR op's location), else from a
    Triton CompilationError's `at L:C:` (L counts from the kernel's `def`, as JITFunction.src does)."""
    if fallback.line is not None:
        return fallback.line
    match = _AT_RE.search(fallback.cause)
    if match is None or source is None or source.def_line is None:
        return None
    return source.def_line + int(match[1]) - 1


@dataclass(frozen=True)
class Launch:
    """One launch of a user kernel in one compile and part, as every stage saw it (matched by order:
    the k-th functional node, the k-th final post-grad node, the k-th launch in the output code)."""

    compile_id: str
    part: str
    #: Its AOT (functional) node, and the node's layout of the user's tensors.
    node: NodeRecord
    eager: ArgLayout | None
    #: The final post-grad node (Inductor's copies are made for it), when captured.
    final: NodeRecord | None
    #: What Inductor's compiled launch passed, when it ran ("name#i").
    runtime: ArgLayout | None
    #: 1-based position among the kernel's launches in this compile and part.
    index: int
    count: int


def launches(capture: Capture, record: KernelRecord) -> list[Launch]:
    """Every launch of the kernel that reached AOTAutograd, with what each stage saw of it."""
    found = []
    for (cid, part), nodes in _by_compile(hop_nodes(capture, record.id, AOT_STAGES)).items():
        finals = [n for n in hop_nodes(capture, record.id, ("post_grad_final",), cid) if n.part == part]
        eager = {lay.where: lay for lay in eager_layouts(capture, record.id, cid, part)}
        sequence = _runtime_sequence(capture, record, cid, part)
        runtime = {lay.where: lay for lay in layouts(capture, record.id, "runtime", cid)}
        for k, node in enumerate(nodes):
            where = sequence[k] if k < len(sequence) else None
            found.append(Launch(cid, part, node, eager.get(node.node), finals[k] if k < len(finals) else None,
                                runtime.get(where) if where else None, k + 1, len(nodes)))
    return found


def _by_compile(nodes: list[NodeRecord]) -> dict[tuple[str, str], list[NodeRecord]]:
    groups: dict[tuple[str, str], list[NodeRecord]] = {}
    for node in nodes:
        groups.setdefault((node.compile_id, node.part), []).append(node)
    return groups


def _runtime_sequence(capture: Capture, record: KernelRecord, cid: str, part: str) -> list[str]:
    """"name#i" of each launch of the kernel in the output code of (cid, part), in call order."""
    names = {meta.inductor_name for code, meta in user_kernel_defs_of_compile(capture, (record.name, record.file, record.line), cid)
             if code.part == part}
    codes = codes_of_compile(capture, cid)
    code = next((c for c in codes if c.part == part), None)
    others = [c for c in codes if c.part != part]
    if code is None or any(call.name in names for c in others for call in c.calls or ()):
        return []  # runtime launches carry no part: a name in two parts' code cannot be told apart
    seen: dict[str, int] = {}
    sequence = []
    for call in code.calls or ():  # None: not parsed (a record another analysis could not read)
        if call.kind == "user" and call.name in names:
            sequence.append(f"{call.name}#{seen.get(call.name, 0)}")
            seen[call.name] = seen.get(call.name, 0) + 1
    return sequence


def launch_text(launch: Launch) -> str:
    """"launch 2 of 4" (or "the launch" when it is the only one)."""
    return f"launch {launch.index} of {launch.count}" if launch.count > 1 else "the launch"
