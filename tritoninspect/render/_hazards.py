"""The findings in the detailed text (`--detail`, `--kernel NAME`): each with its evidence, action,
the torch behaviour it rests on and the torch versions affected (`Report.findings`)."""

from __future__ import annotations

from pathlib import Path

from rich.console import RenderableType
from rich.padding import Padding
from rich.text import Text

from tritoninspect.render import _format as fmt
from tritoninspect.render._widgets import ALERT, heading
from tritoninspect.model.report import Evidence, Finding, Report

SEVERITY_STYLE = {"error": ALERT, "warning": "yellow", "note": "dim"}


def findings_section(report: Report, cwd: Path) -> list[RenderableType]:
    """Every finding, worst first; nothing when there is none."""
    if not report.findings:
        return []
    blocks: list[RenderableType] = [heading("Findings: what torch.compile changes", len(report.findings))]
    explained: set[str] = set()  # each why is said once, at the first finding it explains
    for f in report.findings:
        blocks += finding_lines(f, cwd, explained)
    return blocks


def finding_lines(f: Finding, cwd: Path, explained: set[str] | None = None) -> list[RenderableType]:
    """A finding: its head, evidence, action and why; a why already said word for word (`explained`,
    updated here) is said as "as above (rule)"."""
    head = Text.assemble((f.severity, SEVERITY_STYLE.get(f.severity, "")), " ", (f.rule, "bold"),
                         f" {f.kernel}" if f.kernel else "", f": {f.summary}")
    lines: list[RenderableType] = [head]
    for e in f.evidence:
        took = f" ({e.seconds * 1000:.0f} ms)" if e.seconds is not None else ""
        lines.append(Padding(Text(f"· {_where(e, cwd)}{e.text}{took}", style="dim"), (0, 0, 0, 2)))
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
