"""The `tritoninspect check` text: one `FAIL` line per failed condition, or one ok line."""

from __future__ import annotations

from tritoninspect.analyse.checks import CheckResult
from tritoninspect.render import _format as fmt
from tritoninspect.render._safe import safe_text


def render_check(result: CheckResult) -> str:
    """`FAIL <condition>: <why>` per failure; else `ok: N conditions hold for TARGET (...)`."""
    if result.failures:
        return safe_text("\n".join(f"FAIL {line}" for line in result.failures))
    conditions = len(result.conditions)
    verb = "holds" if conditions == 1 else "hold"
    return safe_text(f"ok: {fmt.plural(conditions, 'condition')} {verb} for {result.target} "
                     f"({', '.join(result.conditions)})")
