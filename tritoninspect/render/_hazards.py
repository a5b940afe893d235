"""The findings in the detailed text (`--detail`, `--kernel NAME`): each with its evidence, action,
the torch behaviour it rests on and the torch versions affected (`Report.findings`).

The same view ends with every finding ranked by impact and the advice (`render/_findings.py`), errors
and warnings among them: this section is their evidence, and points a ranked finding to its number
there instead of saying its action and why twice (notes are said only here)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import RenderableType
from rich.padding import Padding
from rich.text import Text

from tritoninspect.render import _format as fmt
from tritoninspect.render._widgets import ALERT, heading
from tritoninspect.model.report import Advice, Evidence, Finding, Report

SEVERITY_STYLE = {"error": ALERT, "warning": "yellow", "note": "dim"}
#: The heading of the ranked list and of the advice that follow in the same view (render/_findings.py).
RANKED, ADVICE = '"Findings, by impact"', '"Advice"'


def findings_section(report: Report, cwd: Path) -> list[RenderableType]:
    """Every finding with its evidence, worst first; nothing when there is none."""
    if not report.findings:
        return []
    from tritoninspect.analyse.advice import advise

    ranked = ranked_numbers(report.findings, advise(report))
    severities = [f.severity for f in report.findings]
    counts = ", ".join(fmt.plural(severities.count(s), s) for s in SEVERITY_STYLE if s in severities)
    blocks: list[RenderableType] = [heading(f"Evidence for each finding ({len(report.findings)}: {counts})")]
    if ranked:
        blocks.append(Text(f"Errors and warnings are ranked again below with the other findings under {RANKED}, "
                           f"their action and why under {ADVICE}; notes are only here.", style="dim"))
    explained: set[str] = set()  # each why is said once, at the first finding it explains
    for i, f in enumerate(report.findings):
        blocks += finding_lines(f, cwd, explained, ranked=ranked.get(i))
    return blocks


def ranked_numbers(findings: Sequence[Finding], advice: Sequence[Advice]) -> dict[int, tuple[int, bool]]:
    """Finding index -> (its number in the ranked list, whether that entry gives the action): each error
    or warning finding is one advice entry of its rule and kernel holding its summary (`hazards/bridge.py`)."""
    found: dict[int, tuple[int, bool]] = {}
    for i, f in enumerate(findings):
        for number, a in enumerate(advice, 1):
            if a.rule == f.rule and a.kernel == f.kernel and f.summary.rstrip(".") in a.finding:
                found[i] = (number, bool(a.action))
                break
    return found


def finding_lines(f: Finding, cwd: Path, explained: set[str] | None = None,
                  ranked: tuple[int, bool] | None = None) -> list[RenderableType]:
    """A finding: its head, evidence, action and why; a why already said word for word (`explained`,
    updated here) is said as "as above (rule)". `ranked`: its number in the ranked list that follows, and
    whether that entry gives the action: then the action and why are left to the advice there."""
    head = Text.assemble((f.severity, SEVERITY_STYLE.get(f.severity, "")), " ", (f.rule, "bold"),
                         f" {f.kernel}" if f.kernel else "", f": {f.summary}")
    lines: list[RenderableType] = [head]
    for e in f.evidence:
        took = f" ({e.seconds * 1000:.0f} ms)" if e.seconds is not None else ""
        lines.append(Padding(Text(f"· {_where(e, cwd)}{e.text}{took}", style="dim"), (0, 0, 0, 2)))
    if ranked is not None:
        number, advised = ranked
        where = f"finding {number} under {RANKED}" + (f", its action and why under {ADVICE}" if advised else "")
        lines.append(Padding(Text(f"ranked: {where}"), (0, 0, 0, 2)))
        if advised:
            return lines
    if f.action:
        lines.append(Padding(Text(f"do: {f.action}"), (0, 0, 0, 2)))
    versions = " ".join(x for x in (f"torch versions: {f.versions}" if f.versions else "",
                                    f"fixed in torch {f.fixed_in}" if f.fixed_in else "") if x)
    basis = " · ".join(x for x in (f.basis, versions) if x) + (f" [{f.cite}]" if f.cite else "")
    if basis.strip():
        said = explained is not None and basis in explained
        lines.append(Padding(Text(f"why: as above ({f.rule})" if said else f"why: {basis}", style="dim"), (0, 0, 0, 2)))
        if explained is not None:
            explained.add(basis)
    return lines


def _where(e: Evidence, cwd: Path) -> str:
    parts = [f"[{e.compile_id}]" if e.compile_id else "", e.node or "",
             f"{e.param}" if e.param else "", fmt.location(e.file, e.line, cwd=cwd) if e.file else ""]
    where = " ".join(p for p in parts if p)
    return f"{where}: " if where else ""
