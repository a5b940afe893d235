"""The report model, part three: findings, what torch.compile changes about a user kernel's result
or speed (issue 24, "what bites"). `tritoninspect.model.report` re-exports these names: import them from there.

A `Finding` is data: a rule id, a severity, the evidence it rests on (graph nodes, kernel
parameters, file:line, output-code lines), one action line, and the torch source or issue behind
it. The analyses that make them live in `tritoninspect/analyse/hazards/`; each finding that is an
error or a warning also shows in the default view's ranked findings as one `Advice` of the same
rule (`analyse/hazards/bridge.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: "error": the compiled result can differ from eager; "warning": speed or memory suffer;
#: "note": what torch did, with nothing to change.
FindingSeverity = Literal["error", "warning", "note"]
#: What a piece of evidence was read from.
EvidenceKind = Literal["graph node", "kernel parameter", "output code", "kernel source", "launch", "decorator",
                       "lowering", "torch"]

#: Severities from worst to mildest (the order findings are listed in).
SEVERITIES: tuple[str, ...] = ("error", "warning", "note")


@dataclass(frozen=True)
class Evidence:
    """One fact a finding rests on, and where it was seen."""

    kind: EvidenceKind
    #: The fact in a few words, e.g. "triton_meta signature types 'scale' as fp64".
    text: str
    compile_id: str | None = None
    #: The stage it was read at (a report stage name, or "runtime" for a launch).
    stage: str | None = None
    #: The graph node, or the output-code launch (e.g. "scale_kernel_0"), it is about.
    node: str | None = None
    #: The kernel parameter it is about.
    param: str | None = None
    #: Where: the kernel's source, or the output module for an output-code line.
    file: str | None = None
    line: int | None = None
    #: A time the fact measured, in seconds (e.g. what torch's mutation analysis took); not reproducible,
    #: so kept out of `text`.
    seconds: float | None = None


@dataclass(frozen=True)
class Finding:
    """A hazard torch.compile brings to one user kernel (or to the model), with its evidence."""

    #: The rule that made it, e.g. "autotune_hooks_dropped" (`check --allow RULE` accepts it).
    rule: str
    severity: FindingSeverity
    #: The kernel it is about (None: about the model).
    kernel: str | None
    #: The fact, in one sentence.
    summary: str
    #: What to change, in one line; "" for a note.
    action: str
    evidence: tuple[Evidence, ...] = ()
    #: The torch behaviour it rests on, in a sentence or two.
    basis: str = ""
    #: Where that behaviour is: torch source files, issues, pull requests.
    cite: str = ""
    #: The torch versions it is known to affect (and how that is known).
    versions: str = ""
    #: The torch version that fixed it, when one did.
    fixed_in: str | None = None
    #: The torch this report saw it on.
    torch: str = ""
    #: The compiles it was seen in.
    compile_ids: tuple[str, ...] = ()
