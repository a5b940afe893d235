"""Findings in the default view: each error or warning finding is also one `Advice` of the same rule,
ranked with the other advice (`analyse/advice.py` runs `hazard_advice` as one of its rules).

A finding keeps its evidence, versions and severity in `Report.findings` (JSON, HTML, `--detail`,
`check`); its `Advice` is the one-paragraph form the default text ranks: the severity and the fact,
the action, the torch behaviour and where it is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from tritoninspect.analyse.advice_text import in_library
from tritoninspect.analyse.hazards.clones import SUBSUMED_BY
from tritoninspect.analyse.summary import KernelSummary
from tritoninspect.model.report import Advice, Finding, Report

#: Impact of a finding's advice by severity (advice.py's scale: 60 broken ... 10 info). A silently
#: wrong result ranks above everything else; a slowdown with the copies.
IMPACT = {"error": 65, "warning": 30}

#: What `hazard_advice` fires on (docs/advice.md lists each rule's precondition).
HAZARD_PRECONDITION = ("a finding of Report.findings (analyse/hazards/) with severity error or warning; the advice "
                       "carries the finding's rule, summary, action, basis, versions and citation. A clone_cost warning "
                       "gives way to a proved clone rule's advice for the same kernel.")


def hazard_advice(report: Report, kernels: Sequence[KernelSummary]) -> list[Advice]:
    """One Advice per error or warning finding of `report` (notes stay in `Report.findings`). A finding whose
    action another finding of the same kernel already gives (`clones.SUBSUMED_BY`) keeps its line and drops
    the action, saying whose action removes it too: the same action is not advised twice."""
    owners = {k.name: k.library for k in kernels if k.library}
    shown = [f for f in report.findings if f.severity in IMPACT]
    return [in_library(report, as_advice(f, by=_subsumed_by(f, shown), compiles=ids), owners.get(f.kernel or ""))
            for f, ids in _once(shown)]


def _once(findings: Sequence[Finding]) -> list[tuple[Finding, tuple[str, ...]]]:
    """Each finding once with the compiles it was found in: a kernel launched alike in two compiled graphs (a
    graph break between two launches) gets the same finding in each, which the default view said twice."""
    seen: dict[tuple[object, ...], tuple[Finding, list[str]]] = {}
    for f in findings:
        first, ids = seen.setdefault((f.rule, f.severity, f.kernel, _anywhere(f), f.action), (f, []))
        ids += [c for c in f.compile_ids if c not in ids]
    return [(f if len(ids) < 2 else dataclasses.replace(f, summary=_anywhere(f, "each")), tuple(ids))
            for f, ids in seen.values()]


def _anywhere(finding: Finding, each: str = "{}") -> str:
    """The summary with its own compile id (clone_cost's "per call in 12/0 (") as `each`: the same copies
    in two compiles (a kernel in two layers' graphs, an HF model) were said twice."""
    summary = finding.summary
    for cid in finding.compile_ids:
        summary = summary.replace(f" in {cid} (", f" in {each} (")
    return summary


def _subsumed_by(finding: Finding, findings: Sequence[Finding]) -> str | None:
    rules = SUBSUMED_BY.get((finding.rule, finding.action), ())
    return next((f.rule for f in findings if f.rule in rules and f.kernel == finding.kernel), None)


def as_advice(finding: Finding, *, by: str | None = None, compiles: Sequence[str] = ()) -> Advice:
    """The finding as the default view shows it, its rule named (what `check --allow` takes); `by`: the rule
    of another finding whose action removes this one too; `compiles`: where it was found, named when more
    than one."""
    versions = f" Torch versions: {finding.versions}" if finding.versions else ""
    fixed = f" Fixed in torch {finding.fixed_in}." if finding.fixed_in else ""
    summary = f"{finding.summary.rstrip('.')} ({by}'s action removes this too)." if by else finding.summary
    where = f" (compiles {', '.join(compiles)})" if len(compiles) > 1 else ""
    return Advice(
        rule=finding.rule, impact=IMPACT.get(finding.severity, 10), kernel=finding.kernel,
        finding=f"{finding.severity} [{finding.rule}]{where}: {summary}", action="" if by else finding.action,
        because=f"{finding.basis}{versions}{fixed}".strip(), cite=finding.cite,
    )


def covered_kernels(report: Report, rules: Sequence[str]) -> set[str]:
    """Kernels some finding of `rules` already speaks for (an older advice rule then steps aside)."""
    return {f.kernel for f in report.findings if f.rule in rules and f.kernel and f.severity in IMPACT}
