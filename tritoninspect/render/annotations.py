"""GitHub Actions annotations for failed checks: `::error file=F,line=N,title=T::message` lines.

Printed by `check` on stdout when it runs in GitHub Actions (`GITHUB_ACTIONS=true`): the runner
turns each into an annotation on the pull request's diff and the run's summary, at the
entry's `[[tool.tritoninspect.check]]` line, with no extra action or token (docs/ci.md).
Escaping as the runner's `toolkit/core` `issueCommand` does it: `%`, CR and LF in the message;
also `:` and `,` in the properties.
"""

from __future__ import annotations

from tritoninspect.analyse.check_suite import EntryResult, SuiteResult
from tritoninspect.render._safe import safe_text


def render_annotations(suite: SuiteResult) -> str:
    """One `::error` line per entry that failed or could not be checked ("" when all passed)."""
    return "\n".join(_annotation(entry) for entry in suite.entries if entry.status != "pass")


def _annotation(entry: EntryResult) -> str:
    what = "check failed" if entry.status == "fail" else "could not check"
    properties = {"file": entry.file, "line": str(entry.line) if entry.line else "",
                  "title": f"tritoninspect: {what}: {entry.name}"}
    fields = ",".join(f"{key}={_property(value)}" for key, value in properties.items() if value)
    return f"::error {fields}::{_data(chr(10).join(entry.failures))}"


def _data(text: str) -> str:
    return safe_text(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
