"""The report model, part three: the advice of the default view and the installed libraries it speaks of.
`tritoninspect.model.report` re-exports these names: import them from there."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Library:
    """An installed distribution whose code holds kernels, ops or graph breaks of this report."""

    #: As pip names it, e.g. "moe-ops".
    distribution: str
    version: str
    #: Its top-level import package, e.g. "moe_ops".
    package: str
    #: Where to report a problem: its issue tracker, else its repository or home page ("" unknown).
    url: str = ""


@dataclass(frozen=True)
class Advice:
    """One finding of the default view and what to do about it (analyse/advice.py makes them)."""

    #: The rule that made it, e.g. "custom_op_hides_kernel".
    rule: str
    #: Higher first: 60 broken, 50 hidden from Inductor, 40 eager, 30 copies, 20 recompiles, 10 info.
    impact: int
    #: The fact, from this report, in one sentence.
    finding: str
    #: What to change; "" when there is nothing to change (an informational finding).
    action: str
    #: The torch behaviour the action rests on.
    because: str
    #: Where that behaviour is implemented or documented.
    cite: str
    #: The kernel of a finding about one kernel (None for a merged finding: see `kernels`).
    kernel: str | None = None
    #: Every kernel the finding covers; a finding merged from several (same rule, cause and
    #: action) lists them all.
    kernels: tuple[str, ...] = ()
    #: The cause in one kernel-free sentence: findings with the same rule, cause and action are
    #: merged into one, which says this cause and lists the kernels ("" never merges).
    cause: str = ""
    #: A merged finding: each merged finding's own sentence (what `--detail` lists).
    details: tuple[str, ...] = ()
    #: The installed distribution the code to change belongs to (Report.libraries); None: the user's.
    library: str | None = None
