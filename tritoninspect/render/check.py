"""The `tritoninspect check` text: one `FAIL` line per failed condition, or one ok line; for a
project's checks, one line per entry (its failures below it) and a summary line."""

from __future__ import annotations

from tritoninspect.analyse.check_suite import EntryResult, SuiteResult
from tritoninspect.analyse.checks import CheckResult, only_findings
from tritoninspect.render import _format as fmt
from tritoninspect.render._safe import safe_text

#: The word each entry's line starts with.
WORDS = {"pass": "PASS ", "fail": "FAIL ", "error": "ERROR"}


def render_check(result: CheckResult) -> str:
    """`FAIL <condition>: <why>` per failure; else `ok: N conditions hold for TARGET (...)`, or, when the
    findings condition is the only one, `ok: no error finding for TARGET; no other condition given`."""
    if result.failures:
        return safe_text("\n".join(f"FAIL {line}" for line in result.failures))
    return safe_text(_ok_line(result.conditions, result.target) + mode_text(result.mode, "; "))


#: What a pass says about the mode that made the report: compile-only mode checked no GPU behaviour.
MODES = {"compile-only": "compile-only (CPU, kernels in Triton's interpreter: no GPU behaviour checked)",
         "trace": "trace (read from a TORCH_TRACE log)"}


def mode_text(mode: str, lead: str) -> str:
    """`; mode: compile-only (...)` after `lead`, or "" when the mode is not known."""
    return f"{lead}mode: {MODES.get(mode, mode)}" if mode else ""


def _ok_line(conditions: tuple[str, ...], target: str) -> str:
    # `check TARGET` alone gives no condition: "1 condition holds" would count one the user never
    # gave, so the findings condition, always checked, is named instead of counted.
    if not conditions:
        return f"ok: no condition checked for {target}"
    if only_findings(conditions):
        return f"ok: {conditions[0]} for {target}; no other condition given"
    verb = "holds" if len(conditions) == 1 else "hold"
    return f"ok: {fmt.plural(len(conditions), 'condition')} {verb} for {target} ({', '.join(conditions)})"


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
        listed = f"{fmt.plural(len(conditions), 'condition')}: {', '.join(conditions)}" if conditions else ""
        mode = f"{entry.result.mode}; " if entry.result and entry.result.mode else ""
        return [f"{head} ({mode}{listed or 'no condition'}{took})"]
    first, *rest = entry.failures
    return [f"{head}: {first}", *(f"      {line}" for line in rest)]
