"""The JSON renderer: the report's canonical, versioned form (`Report.to_json`)."""

from __future__ import annotations

from tritoninspect.model.report import Report


class JSONRenderer:
    """Renders the report as the JSON documented in docs/json.md; stdout carries nothing else."""

    def render(self, report: Report) -> str:
        """`report.to_json()`, unchanged: the JSON renderer adds nothing of its own."""
        return report.to_json()
