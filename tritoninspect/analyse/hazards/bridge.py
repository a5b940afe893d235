"""Findings in the default view: each error or warning finding is also one `Advice` of the same rule,
ranked with the other advice (`analyse/advice.py` runs `hazard_advice` as one of its rules).

A finding keeps its evidence, versions and severity in `Report.findings` (JSON, HTML, `--detail`,
`check`); its `Advice` is the one-paragraph form the default text ranks: the severity and the fact,
the action, the torch behaviour and where it is.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    """One Advice per error or warning finding of `report` (notes stay in `Report.findings`)."""
    del kernels
    return [as_advice(f) for f in report.findings if f.severity in IMPACT]


def as_advice(finding: Finding) -> Advice:
    """The finding as the default view shows it."""
    versions = f" Torch versions: {finding.versions}" if finding.versions else ""
    fixed = f" Fixed in torch {finding.fixed_in}." if finding.fixed_in else ""
    return Advice(
        rule=finding.rule, impact=IMPACT.get(finding.severity, 10), kernel=finding.kernel,
        finding=f"{finding.severity}: {finding.summary}", action=finding.action,
        because=f"{finding.basis}{versions}{fixed}".strip(), cite=finding.cite,
    )


def covered_kernels(report: Report, rules: Sequence[str]) -> set[str]:
    """Kernels some finding of `rules` already speaks for (an older advice rule then steps aside)."""
    return {f.kernel for f in report.findings if f.rule in rules and f.kernel and f.severity in IMPACT}
