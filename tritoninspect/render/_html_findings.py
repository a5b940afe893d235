"""The HTML findings of one kernel (or of the model): what torch.compile changes about its result or
speed, each with its evidence, action, basis and the torch versions affected (`Report.findings`)."""

from __future__ import annotations

from pathlib import Path

from tritoninspect.render import _format as fmt
from tritoninspect.render._html import anchor, esc, grid_table, pills
from tritoninspect.model.report import Evidence, Finding, Kernel, Report


def findings_html(report: Report, kernel: Kernel | None, cwd: Path) -> str:
    """The findings about `kernel` (None: those about no kernel), worst first; "" when none."""
    name = kernel.name if kernel is not None else None
    mine = [f for f in report.findings if f.kernel == name]
    if not mine:
        return ""
    body = "".join(_finding(f, i, cwd, prefix=anchor("f", name or "model")) for i, f in enumerate(mine))
    title = "What torch.compile changes" if kernel is not None else "Findings about the model"
    return f'<div class="findings"><h4>{esc(title)} ({len(mine)})</h4>{body}</div>'


def _finding(f: Finding, index: int, cwd: Path, *, prefix: str) -> str:
    head = f'<p>{pills([f.severity])}<code>{esc(f.rule)}</code> {esc(f.summary)}</p>'
    action = f"<p><b>What to do:</b> {esc(f.action)}</p>" if f.action else ""
    evidence = _evidence(f.evidence, cwd)
    basis = " ".join(x for x in (
        f.basis,
        f"Torch versions: {f.versions}." if f.versions else "",
        f"Fixed in torch {f.fixed_in}." if f.fixed_in else "",
        f"Seen here on torch {f.torch}." if f.torch else "",
    ) if x)
    cite = f" [{esc(f.cite)}]" if f.cite else ""
    why = f'<p class="muted">{esc(basis)}{cite}</p>' if basis or cite else ""
    return (f'<div class="finding {esc(f.severity)}" id="{prefix}-{index}" data-search="{esc(f.rule)}">'
            f"{head}{action}{evidence}{why}</div>")


def _evidence(evidence: tuple[Evidence, ...], cwd: Path) -> str:
    if not evidence:
        return ""
    rows = [[esc(e.kind), esc(_where(e, cwd)), esc(e.text + (f" ({e.seconds * 1000:.0f} ms)" if e.seconds is not None else ""))]
            for e in evidence]
    return f"<details open><summary>evidence ({len(rows)})</summary>{grid_table(('from', 'where', 'fact'), rows)}</details>"


def _where(e: Evidence, cwd: Path) -> str:
    parts = [f"[{e.compile_id}]" if e.compile_id else "", e.stage or "", e.node or "",
             f"param {e.param}" if e.param else "", fmt.location(e.file, e.line, cwd=cwd) if e.file else ""]
    return " ".join(p for p in parts if p) or fmt.NONE
