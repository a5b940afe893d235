"""Plain records of what Inductor's CUDA graphs did with each compiled graph (`--cudagraphs`, issue 24
item 6), and of its epilogue fusion into user kernels (item 7).

Gathered while the compile is alive (`capture/cudagraphs.py`, `capture/epilogues.py`; private torch
access in `capture/compat/cudagraphs.py` and `capture/compat/epilogues.py`), saved with the capture, read
by pure analyses that never import torch (`analyse/cudagraphs.py`, `analyse/epilogues.py`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class InputWriter:
    """What writes a graph input a compiled graph mutates, read from the AOT graph before Inductor's passes:
    the `copy_` back into the input and the nodes its value comes from."""

    #: "kernel" (a user kernel's functional HOP), "op" (a custom op, `auto_functionalized`), "aten" (an ATen op).
    kind: str
    #: The graph node (the HOP, the op call) in the AOT graph of that compile and part.
    node: str
    #: kind "kernel": its id in `Capture.kernels`, and the parameter the written tensor was passed as.
    kernel_id: str | None = None
    param: str | None = None
    #: kind "op" / "aten": "ns::op" or "aten.add_".
    op: str | None = None
    #: The user's line that made the node ("file:line"), from the node's stack trace.
    site: str | None = None


@dataclass(frozen=True)
class MutatedInput:
    """A graph input the compiled graph writes: Inductor's `mutated_input_idxs`."""

    #: Its position among the graph's inputs, and the placeholder's name (arg0_1, primals_2).
    index: int
    name: str
    #: A static input (a parameter, a buffer, a `mark_static_address` tensor): the CUDA-graph tree
    #: allows writing it; any other input written makes the tree run the graph without a CUDA graph.
    static: bool
    writers: tuple[InputWriter, ...] = ()


@dataclass(frozen=True)
class CudagraphSkip:
    """One reason Inductor gives (gpu) or would give (compile-only) for running a graph without CUDA graphs."""

    #: "compile": decided while compiling; "run": decided by the CUDA-graph tree at a call; "partition": an
    #: op Inductor keeps out of CUDA graphs, the rest of the graph CUDA-graphed around it.
    when: str
    #: "mutated_inputs", "input_storage_mutation", "non_tensor_inputs", "incompatible_op", "unbacked",
    #: "dynamic_shapes", "device", "rerecord_limit", "control_flow", "other" (`textformats.cudagraphs.skip_kind`).
    kind: str
    #: torch's message, as logged (`log_cudagraph_skip_and_bump_counter`) or as its own check words it.
    text: str
    #: "partition" skips only: the user kernel the kept-out op's value reaches, and the op's line.
    kernel_id: str | None = None
    site: str | None = None


@dataclass(frozen=True)
class CudagraphCompile:
    """One compiled graph (a compile id and part) under `--cudagraphs`."""

    compile_id: str
    part: str
    #: "measured" (gpu: Inductor's own decision, and the tree's runs) or "predicted" (compile-only: Inductor's
    #: device-independent checks run here on the same graph; its device checks cannot be, everything is on the CPU).
    basis: str
    #: Inductor wrapped the graph for the CUDA-graph tree when compiling it (predicted: no compile-time reason).
    wrapped: bool
    skips: tuple[CudagraphSkip, ...] = ()
    mutated_inputs: tuple[MutatedInput, ...] = ()
    #: Symbolic input sizes: the tree records one CUDA graph per distinct size.
    dynamic: bool = False
    #: Inductor split the graph into partitions (`config.graph_partition`), each CUDA-graphed on its own
    #: (ops kept out of CUDA graphs, CPU ops for one, run between them).
    partitioned: bool = False
    #: How many (measured only: compile-only mode's CPU graph partitions differently).
    partitions: int | None = None


@dataclass(frozen=True)
class CudagraphRuns:
    """The CUDA-graph tree's runs of one compiled graph's functions (gpu only), counted per call."""

    compile_id: str | None
    part: str
    #: The tree's functions of this graph: one per partition, and one more per distinct input size.
    functions: int = 0
    #: Warm-up runs (a function's first call runs eagerly), recordings, replays, and runs without a CUDA
    #: graph after the tree refused (an input written that is not static, the re-record limit).
    warmups: int = 0
    recordings: int = 0
    replays: int = 0
    eager: int = 0


@dataclass
class CudagraphRecords:
    """Everything `--cudagraphs` recorded."""

    compiles: list[CudagraphCompile] = field(default_factory=list)
    runs: list[CudagraphRuns] = field(default_factory=list)
    #: Skips the tree logged while running, per compile id and part (compile-time ones are in `compiles`).
    run_skips: list[tuple[str | None, str, CudagraphSkip]] = field(default_factory=list)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CudagraphRecords:
        """The records from `dataclasses.asdict` output (a saved capture's `cudagraphs`)."""
        return cls(
            compiles=[_compile(c) for c in data.get("compiles", ())],
            runs=[_plain(CudagraphRuns, r) for r in data.get("runs", ())],
            run_skips=[(cid, part, _plain(CudagraphSkip, skip)) for cid, part, skip in data.get("run_skips", ())],
        )


@dataclass(frozen=True)
class EpilogueCandidate:
    """An Inductor node that reads what a user kernel writes, and whether Inductor fused it into the kernel."""

    #: Inductor's scheduler node (op2) and the ATen ops it computes (relu, cos, mul).
    node: str
    ops: tuple[str, ...] = ()
    #: Inductor's own pairwise check (`Scheduler.can_fuse`) was asked: None when it never was (fusion off,
    #: or the kernel cannot take any epilogue).
    accepted: bool | None = None
    #: torch's reason for refusing (`WhyNoFuse`), "" when it gave none.
    reason: str = ""
    #: The device backend that refused a pair Inductor's own checks passed ("cpp" in compile-only mode).
    backend_refused: str | None = None


@dataclass(frozen=True)
class EpilogueRecord:
    """One user-kernel launch as Inductor's scheduler saw it, for epilogue fusion."""

    compile_id: str
    part: str
    kernel_id: str | None
    #: Inductor's scheduler node of the launch (op1) and the buffer the kernel writes.
    node: str
    #: This torch can fuse an epilogue into a user kernel (`UserDefinedTritonKernel.can_fuse_epilogue`).
    available: bool
    #: `torch._inductor.config.epilogue_fusion_user_defined_triton_kernel` during the compile.
    enabled: bool
    #: What stops this kernel taking any epilogue, as torch's checks find it with fusion on ("" per check
    #: passed is not listed): e.g. "it has 2 tl.store calls".
    blockers: tuple[str, ...] = ()
    candidates: tuple[EpilogueCandidate, ...] = ()


def epilogue_from_dict(data: dict[str, Any]) -> EpilogueRecord:
    candidates = tuple(_plain(EpilogueCandidate, c) for c in data.get("candidates", ()))
    return dataclasses.replace(_plain(EpilogueRecord, data), candidates=candidates)


def _compile(data: dict[str, Any]) -> CudagraphCompile:
    inputs = tuple(dataclasses.replace(_plain(MutatedInput, m), writers=tuple(_plain(InputWriter, w)
                                                                              for w in m.get("writers", ())))
                   for m in data.get("mutated_inputs", ()))
    skips = tuple(_plain(CudagraphSkip, s) for s in data.get("skips", ()))
    return dataclasses.replace(_plain(CudagraphCompile, data), skips=skips, mutated_inputs=inputs)


def _plain(cls: type, data: dict[str, Any]) -> Any:
    values = {}
    for f in dataclasses.fields(cls):
        value = data.get(f.name, f.default)
        values[f.name] = tuple(value) if isinstance(value, list) else value
    return cls(**values)
