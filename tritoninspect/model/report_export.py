"""The report model, export part: what `tritoninspect export` adds to a report (`Report.export`).

The exported program's graph and AOTInductor's generated code are ordinary `Graph`s
(stages "export" and "aoti_output_code"), and each kernel's place in the exported graph
is an `Occurrence` at stage "export": the graph and diff machinery read them as they read
a compile's. What only export has lives here. `tritoninspect.model.report` re-exports these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tritoninspect.model.report_kernel import EntryKind, Severity

#: How a kernel appears in the exported graph: "hop" (a triton_kernel_wrapper node with a
#: kernel_idx into the side table), "triton_op" (a call of the op, not decomposed: export keeps
#: triton_ops as ops), "custom_op" (an opaque op call), "absent" (no node: export did not finish).
AppearsAs = Literal["hop", "triton_op", "custom_op", "absent"]


@dataclass(frozen=True)
class SignatureEntry:
    """One input or output of the exported program, as its graph signature says."""

    direction: Literal["input", "output"]
    #: torch's InputKind / OutputKind: USER_INPUT, PARAMETER, BUFFER, CONSTANT_TENSOR, ...;
    #: USER_OUTPUT, BUFFER_MUTATION, USER_INPUT_MUTATION, ...
    kind: str
    #: The graph's name for it (a placeholder, or an output node argument).
    name: str
    #: The parameter or buffer it is (its FQN), or, for a mutation output, what it writes back to.
    target: str | None = None
    #: "float32[s6, 48]": the tensor it stands for in the exported program.
    tensor: str | None = None


@dataclass(frozen=True)
class DynamicDim:
    """One dimension of a user input tensor: asked to be dynamic or not, and what export made of it."""

    input: str
    dim: int
    #: What was asked: "static", "auto" (Dim.AUTO), "dynamic" (Dim.DYNAMIC) or a named Dim.
    requested: str
    #: The example's size.
    example: int
    #: The size in the exported program: a symbol ("s6") or the fixed int ("48").
    exported: str
    #: The symbol's range ("[2, int_oo]"); None when the dimension is static.
    range: str | None = None
    #: Asked to be dynamic but fixed by the program.
    specialised: bool = False


@dataclass(frozen=True)
class ArgConstraint:
    """A kernel argument that carries a dynamic dimension's size, and what it did to it."""

    kernel: str
    arg: str
    #: "constexpr" or "scalar".
    kind: Literal["constexpr", "scalar"]
    #: The value as launched or traced: "48", or a symbolic expression ("s6").
    value: str
    #: The dimension ("x.size(1)") whose size it equals.
    dim: str
    #: "specialised": a tl.constexpr got the size, so the dimension is fixed to it in the
    #: exported program (pytorch/pytorch#137024); "symbolic": it stays symbolic (a runtime
    #: argument); "fixed": the dimension was static anyway; "unknown": export did not finish.
    effect: Literal["specialised", "symbolic", "fixed", "unknown"]


@dataclass(frozen=True)
class ExportedKernel:
    """How one user kernel entered the exported program."""

    #: The Kernel's id in `Report.kernels`.
    kernel: str
    name: str
    #: As `Kernel.entries` names it for torch.compile: hop, triton_op, custom_op.
    entry: EntryKind
    appears_as: AppearsAs
    node: str | None = None
    #: The op called, for triton_op and custom_op.
    op: str | None = None
    #: The HOP's index into the kernel side table (hop only).
    kernel_idx: int | None = None
    #: Where AOTInductor's generated code names it (the kernel, or the op it runs in);
    #: None when no package code was generated.
    in_aoti_code: bool | None = None
    #: The arguments it writes, as the functional program (after `run_decompositions()`) clones
    #: them (`tensors_to_clone`); None where that program has no HOP for it (a triton_op or
    #: custom_op stays an op there).
    writes: tuple[str, ...] | None = None


@dataclass(frozen=True)
class AotiPackage:
    """What AOTInductor did with the exported program."""

    #: "built" (package written), "failed" (AOTInductor raised: see Report.failure),
    #: "unavailable" (compile-only mode cannot build it; see `notes`), "skipped" (--stage export).
    status: Literal["built", "failed", "unavailable", "skipped"]
    #: "NVIDIA H200", or "cpu (compile-only mode)": what the package was built for.
    device: str
    #: The package's files (name inside the .pt2, bytes).
    files: tuple[str, ...] = ()
    build_time_s: float | None = None
    #: The package loaded (`aoti_load_package`); None when not tried.
    loaded: bool | None = None
    #: Its output on the example inputs equals eager's (within 1e-3); None when not run.
    matches_eager: bool | None = None
    max_abs_diff: float | None = None
    #: What could not be built or run here, and why.
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExportFinding:
    """A known way export or AOTInductor goes wrong for a kernel, with what to do about it."""

    severity: Severity
    #: "export", "aoti", "aoti_load", "aoti_run", "compare" or "run" (the eager call).
    stage: str
    #: A short key for the cause, e.g. "raw_launch_non_strict".
    cause: str
    message: str
    kernel: str | None = None
    hint: str | None = None
    #: The upstream issue the hint comes from.
    issue: str | None = None


@dataclass(frozen=True)
class ExportInfo:
    """What `tritoninspect export` found: the program's signature, dynamic dims, kernels, package."""

    strict: bool
    #: Who chose the mode: "--strict", "--non-strict" or "torch default".
    strict_source: str
    #: How dynamic shapes were asked for: "none", "auto" (Dim.AUTO on every dimension), "target".
    dynamic_shapes: str
    #: Seconds torch.export.export took; None when it did not run.
    export_time_s: float | None = None
    signature: tuple[SignatureEntry, ...] = ()
    #: The signature after `run_decompositions()` (the functional program AOTInductor lowers): a
    #: kernel's in-place write to a buffer or input shows here as a mutation output, not above.
    decomposed_signature: tuple[SignatureEntry, ...] = ()
    dynamic_dims: tuple[DynamicDim, ...] = ()
    kernels: tuple[ExportedKernel, ...] = ()
    constraints: tuple[ArgConstraint, ...] = ()
    aoti: AotiPackage | None = None
    findings: tuple[ExportFinding, ...] = ()
