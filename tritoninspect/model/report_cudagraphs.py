"""The report model, CUDA graphs and epilogues: what Inductor's CUDA-graph trees did with each compiled
graph (`graph --cudagraphs`, issue 24 item 6) and which neighbours Inductor fused into a user kernel
(item 7). `tritoninspect.model.report` re-exports these names: import them from there.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CudagraphReason:
    """One reason Inductor gives (measured) or would give (predicted) for running a graph without a CUDA graph."""

    #: "compile": decided while compiling; "run": decided by the CUDA-graph tree at a call; "partition": an op
    #: Inductor keeps out of CUDA graphs, splitting the graph (the partitions around it are still CUDA-graphed).
    when: str
    #: "mutated_inputs", "input_storage_mutation", "non_tensor_inputs", "incompatible_op", "unbacked",
    #: "dynamic_shapes", "device", "rerecord_limit", "control_flow", "index_put", "other".
    kind: str
    #: torch's message without its stack trace, e.g. "skipping cudagraphs due to mutated inputs (1 instances)".
    text: str
    #: The user kernel responsible (its name), the parameter it writes, the graph input written, and the
    #: user's line ("file:line") of the launch or op; None where torch's message names none.
    kernel: str | None = None
    param: str | None = None
    input: str | None = None
    site: str | None = None
    #: What did it when not a user kernel: "ns::op" of a custom op, "aten.add_" of an ATen op.
    op: str | None = None


@dataclass(frozen=True)
class CudagraphUse:
    """One compiled graph (a compile id and part) under `--cudagraphs`."""

    compile_id: str
    part: str
    #: "measured" (a GPU run: Inductor's decision and the CUDA-graph tree's counts) or "predicted"
    #: (compile-only mode: Inductor's device-independent checks run on the same graph).
    basis: str
    #: The CUDA-graph tree records and replays this graph (predicted: no reason found to skip it).
    cudagraphed: bool
    reasons: tuple[CudagraphReason, ...] = ()
    #: Symbolic input sizes: the tree records one CUDA graph per distinct size.
    dynamic: bool = False
    #: Inductor split the graph into partitions, each CUDA-graphed on its own; how many (measured only).
    partitioned: bool = False
    partitions: int | None = None
    #: Measured only (None when predicted): the tree's functions of this graph, and its runs of them:
    #: warm-ups, recordings, replays, runs without a CUDA graph.
    functions: int | None = None
    warmups: int | None = None
    recordings: int | None = None
    replays: int | None = None
    eager: int | None = None


@dataclass(frozen=True)
class EpilogueNeighbour:
    """An Inductor node that reads what a user kernel writes: a candidate epilogue."""

    #: Inductor's scheduler node, and the ATen ops it computes.
    node: str
    ops: tuple[str, ...] = ()
    #: True: fused into the kernel; False: refused; None: never considered (fusion off, or blocked).
    fused: bool | None = None
    #: torch's reason for refusing ("" when it gave none).
    reason: str = ""


@dataclass(frozen=True)
class EpilogueFusion:
    """One user-kernel launch Inductor scheduled, and the epilogues it could fuse into it."""

    compile_id: str
    part: str
    kernel: str | None
    #: This torch fuses epilogues into user kernels (`UserDefinedTritonKernel.can_fuse_epilogue`, torch
    #: 2.12+), and whether it was on (`config.epilogue_fusion_user_defined_triton_kernel`, off by default).
    available: bool
    enabled: bool
    #: What stops this kernel taking any epilogue, from torch's own checks asked with fusion on.
    blockers: tuple[str, ...] = ()
    neighbours: tuple[EpilogueNeighbour, ...] = ()
