"""The `tritoninspect check` text: one `FAIL` line per failed condition, or one ok line; for a
project's checks, one line per entry (its failures below it) and a summary line."""

from __future__ import annotations

from tritoninspect.analyse.check_suite import EntryResult, SuiteResult
from tritoninspect.analyse.checks import CheckResult
from tritoninspect.render import _format as fmt
from tritoninspect.render._safe import safe_text

#: The word each entry's line starts with.
WORDS = {"pass": "PASS ", "fail": "FAIL ", "error": "ERROR"}


def render_check(result: CheckResult) -> str:
    """`FAIL <condition>: <why>` per failure; else `ok: N conditions hold for TARGET (...)`."""
    if result.failures:
        return safe_text("\n".join(f"FAIL {line}" for line in result.failures))
    conditions = len(result.conditions)
    verb = "holds" if conditions == 1 else "hold"
    return safe_text(f"ok: {fmt.plural(conditions, 'condition')} {verb} for {result.target} "
                     f"({', '.join(result.conditions)})")


def render_suite(suite: SuiteResult) -> str:
    """`PASS|FAIL|ERROR <name>: ...` per entry, each failure after the first indented below it,
    then `checks: N passed, N failed, N errors (pyproject.toml)`."""
    lines = [line for entry in suite.entries for line in _entry_lines(entry)]
    counts = [f"{suite.count('pass')} passed", f"{suite.count('fail')} failed",
              fmt.plural(suite.count("error"), "error")]
    lines.append(f"checks: {', '.join(counts)} ({suite.pyproject})")
    return safe_text("\n".join(lines))


def _entry_lines(entry: EntryResult) -> list[str]:
    took = f", {entry.seconds:.1f} s" if entry.seconds is not None else ""
    head = f"{WORDS[entry.status]} {entry.name}"
    if entry.status == "pass":
        conditions = entry.result.conditions if entry.result else ()
        return [f"{head} ({fmt.plural(len(conditions), 'condition')}: {', '.join(conditions)}{took})"]
    first, *rest = entry.failures
    return [f"{head}: {first}", *(f"      {line}" for line in rest)]
