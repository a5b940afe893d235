"""The findings framework (issue 24): the report model's `findings`, the hazard registry, and how
findings show in every output (default text, `--detail`, HTML, JSON, `check`), on saved reports and
records only. The findings themselves have their own tests (tests/test_hazard_*.py)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tritoninspect.analyse import build_report, hazards
from tritoninspect.analyse.advice import advise, with_advice
from tritoninspect.analyse.checks import check_report, parse_allow, run_checks
from tritoninspect.analyse.hazards.bridge import as_advice
from tritoninspect.model.hazard_records import (
    AnalysisTime,
    ArgLayout,
    AutotuneSettings,
    CloneCause,
    CloneSource,
    HazardRecords,
    SideTableKernel,
    StorageOverread,
    TensorArg,
)
from tritoninspect.model.records import Capture
from tritoninspect.render.html import render_html
from tritoninspect.render.overview import render_overview
from tritoninspect.render.terminal import TerminalRenderer
from tritoninspect.model.report import SCHEMA_VERSION, Evidence, Finding, Report, read_report

FIXTURES = Path(__file__).parent / "fixtures"


def finding(severity: str, kernel: str | None = "add_kernel", rule: str = "demo_rule") -> Finding:
    return Finding(
        rule=rule, severity=severity, kernel=kernel, summary=f"a {severity} about {kernel}",  # type: ignore[arg-type]
        action=f"do the {severity} thing" if severity != "note" else "",
        evidence=(Evidence("graph node", "kwargs x_ptr: mul", compile_id="0/0", stage="dynamo", node="hop_0",
                           param="x_ptr"),
                  Evidence("kernel source", "x_ptr stored at line 12", file="/repo/m.py", line=12)),
        basis="torch does a thing", cite="torch/x.py (f); pytorch/pytorch#1", versions="2.11 and 2.13 (seen)",
        fixed_in="2.99" if severity == "warning" else None, torch="2.13.0", compile_ids=("0/0",),
    )


def small(*findings: Finding) -> Report:
    report = read_report(FIXTURES / "report_small.json")
    return dataclasses.replace(report, findings=findings, advice=())


# --- the model ----------------------------------------------------------------------------------


def test_findings_round_trip_through_json_and_the_schema() -> None:
    report = small(finding("error"), finding("warning"), finding("note", kernel=None))
    text = report.to_json()
    assert json.loads(text)["schema_version"] == SCHEMA_VERSION == 12
    again = Report.from_json(text)
    assert again.findings == report.findings
    assert again.findings[0].evidence[1].line == 12


def test_a_version_4_report_reads_with_no_findings(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "gpu" / "add_raw.json").read_text())
    assert data["schema_version"] < 5 and "findings" not in data
    assert read_report(FIXTURES / "gpu" / "add_raw.json").findings == ()


def test_hazard_records_round_trip_with_the_capture() -> None:
    capture = Capture.from_json((FIXTURES / "capture_add_raw.json").read_text())
    capture.hazards = HazardRecords(
        user_autotune={"m.k": AutotuneSettings(configs=4, key=("n",), reset_to_zero=("s",), early_config_prune="prune")},
        side_table=[SideTableKernel("0/0", "m.k", "hop", False, AutotuneSettings(configs=3), ("heuristics",))],
        layouts=[ArgLayout("0/0", "", "dynamo", "m.k", "hop", (TensorArg("x", "float32", (4, 8), (16, 1), 8, "s0", 64),),
                           {"scale": "fp32"})],
        clone_causes=[CloneCause("0/0", "inference", "f", "m.k", "x", view=True, read_after=("mul",))],
        clone_sources=[CloneSource("0/0", "inference", "h", "m.k", "x", "slice_1", "as_strided_0", 16, 16, 32, 4)],
        overreads=[StorageOverread("0/0", "inference", "as_strided_0", "buf3", 16, 32)],
        analysis_times=[AnalysisTime("0/0", "m.k", 0.25, fell_back=True)],
    )
    again = Capture.from_json(capture.to_json())
    assert again.hazards == capture.hazards
    # Empty records are left out of the file: older captures read the same.
    capture.hazards = HazardRecords()
    assert "hazards" not in json.loads(capture.to_json())
    assert Capture.from_json(capture.to_json()).hazards == HazardRecords()


# --- the registry -------------------------------------------------------------------------------


def test_find_hazards_orders_worst_first_and_survives_a_failing_hazard() -> None:
    def fine(capture: Capture) -> list[Finding]:
        return [finding("note"), finding("error")]

    def broken(capture: Capture) -> list[Finding]:
        raise RuntimeError("boom")

    found, failed = hazards.find_hazards(Capture(), {"fine": fine, "broken": broken, "late": lambda c: [finding("warning")]})
    assert [f.severity for f in found] == ["error", "warning", "note"]
    assert [(name, str(exc)) for name, exc in failed] == [("broken", "boom")]


def test_build_report_fills_findings_and_turns_a_failure_into_a_diagnostic(monkeypatch: pytest.MonkeyPatch) -> None:
    capture = Capture.from_json((FIXTURES / "capture_add_raw.json").read_text())
    monkeypatch.setattr(hazards, "HAZARDS", {"ok": lambda c: [finding("error")], "bad": lambda c: 1 / 0})
    report = build_report(capture)
    assert [f.severity for f in report.findings] == ["error"]
    (diag,) = [d for d in report.diagnostics if d.source == "hazard bad"]
    assert diag.severity == "error" and "ZeroDivisionError" in diag.message
    # The error is also the first advice of the default view.
    assert report.advice[0].rule == "demo_rule" and report.advice[0].finding.startswith("error [demo_rule]: ")


# --- every output -------------------------------------------------------------------------------


def test_errors_and_warnings_rank_with_the_advice_notes_stay_out() -> None:
    report = small(finding("note"), finding("warning"), finding("error"))
    advice = advise(report)
    mine = [a for a in advice if a.rule == "demo_rule"]
    assert [a.finding.split(":")[0] for a in mine] == ["error [demo_rule]", "warning [demo_rule]"]
    assert advice[0] == as_advice(report.findings[2])  # an error outranks every other advice
    assert "Torch versions: 2.11 and 2.13 (seen)" in mine[1].because and "Fixed in torch 2.99" in mine[1].because


def test_the_same_finding_in_two_compiles_is_ranked_once_naming_both() -> None:
    """A kernel launched alike on both sides of a graph break gets the same finding in each compile: the default
    view listed the same sentence twice. Report.findings keeps both, each with its compile's evidence."""
    first, second = finding("warning"), dataclasses.replace(finding("warning"), compile_ids=("1/0",))
    report = small(first, second, dataclasses.replace(finding("warning"), summary="another thing"))
    mine = [a for a in advise(report) if a.rule == "demo_rule"]
    assert [a.finding for a in mine] == ["warning [demo_rule] (compiles 0/0, 1/0): a warning about add_kernel",
                                         "warning [demo_rule]: another thing"]
    assert len(with_advice(report).findings) == 3


def test_a_finding_that_names_its_compile_is_ranked_once_too() -> None:
    """clone_cost says "per call in 12/0 (": the same copies of one kernel in two compiles (an HF Llama's two
    layer graphs) were two findings in the default view."""
    def in_compile(cid: str) -> Finding:
        return dataclasses.replace(finding("warning"), compile_ids=(cid,),
                                   summary=f"k costs 8.0 KB of copies per call in {cid} (x_ptr: a view)")

    mine = [a for a in advise(small(in_compile("12/0"), in_compile("19/0"))) if a.rule == "demo_rule"]
    assert [a.finding for a in mine] == ["warning [demo_rule] (compiles 12/0, 19/0): k costs 8.0 KB of copies per "
                                         "call in each (x_ptr: a view)"]
    (alone,) = [a for a in advise(small(in_compile("12/0"))) if a.rule == "demo_rule"]
    assert alone.finding.endswith("per call in 12/0 (x_ptr: a view)")


def test_default_text_shows_the_finding_and_its_action() -> None:
    text = render_overview(small(finding("error")), width=120, color=False)
    # The rule is named: what `check --allow RULE` takes.
    assert "error [demo_rule]: a error about add_kernel" in text and "do the error thing" in text


def test_detail_text_shows_the_evidence() -> None:
    text = TerminalRenderer(width=160, color=False).render(small(finding("error"), finding("note", kernel=None)))
    assert "Evidence for each finding (2: 1 error, 1 note)" in text
    assert "[0/0] hop_0 x_ptr: kwargs x_ptr: mul" in text
    assert 'ranked: finding 1 under "Findings, by impact", its action and why under "Advice"' in text
    assert "why: torch does a thing · torch versions: 2.11 and 2.13 (seen) [torch/x.py (f); pytorch/pytorch#1]" in text


def test_detail_says_a_ranked_findings_action_once() -> None:
    """--detail listed the hazards twice under two "Findings" headings with the same count (the newcomer's
    hazard_aliasing run: "Findings: what torch.compile changes (2)", then "Findings, by impact (2)"), each
    action and why three times over: the evidence section now points to the ranked finding instead."""
    report = read_report(FIXTURES / "gpu" / "hazard_aliasing.json")  # the sample's report on an H200
    text = TerminalRenderer(width=200, color=False).render(report)
    headings = [line for line in text.splitlines() if line.startswith(("Findings", "Evidence"))]
    assert headings == ["Evidence for each finding (2: 1 error, 1 warning)", "Findings, by impact (2)"], headings
    error = next(f for f in report.findings if f.severity == "error")
    assert text.count(error.action) == 1, "the error's action is said once, under Advice"
    assert 'ranked: finding 1 under "Findings, by impact"' in text


def test_kernel_view_keeps_only_that_kernels_findings() -> None:
    report = small(finding("error"), finding("error", kernel="sub_kernel"))
    assert [f.kernel for f in report.narrowed("add_kernel").findings] == ["add_kernel"]


def test_html_has_a_findings_section_per_kernel() -> None:
    page = render_html(small(finding("error"), finding("warning", kernel=None)))
    kernel = page[page.index('id="k'):]
    assert '<span class="pill error">error</span><code>demo_rule</code> a error about add_kernel' in kernel
    assert "What torch.compile changes (1)" in page and "Findings about the model (1)" in page
    assert "kwargs x_ptr: mul" in page and "Seen here on torch 2.13.0." in page


# --- check ---------------------------------------------------------------------------------------


def test_check_fails_on_an_error_finding_unless_allowed() -> None:
    report = small(finding("error"), finding("warning", rule="other_rule"))
    (failure,) = check_report(report, findings=True)
    assert failure.startswith("finding demo_rule [0/0]: a error about add_kernel") and "--allow demo_rule" in failure
    assert check_report(report, findings=True, allow=["demo_rule"]) == []
    assert check_report(report) == []  # the gate is a condition like the others
    result = run_checks(report, {"no error finding": {"findings": True}}, target="r.json")
    assert not result.ok


@pytest.mark.parametrize("stage", ["dynamo", "aot"])
def test_a_capture_stopped_before_inductor_says_its_findings_gate_is_partial(stage: str) -> None:
    """`check --stage dynamo` said "ok: no error finding" for samples/hazard_aliasing.py, whose full check fails
    on aliased_args_split (found in the AOT graphs and Inductor's code): the label says what was looked at."""
    from tritoninspect.render.check import render_check

    report = small()
    stopped = dataclasses.replace(report, meta=dataclasses.replace(report.meta, stage=stage))
    result = run_checks(stopped, {"no error finding": {"findings": True}}, target="m.py:Net")
    assert result.ok and result.conditions == (
        f"no error finding at stage {stage} (the findings of later stages were not looked for)",)
    assert render_check(result) == (f"ok: no error finding at stage {stage} (the findings of later stages were not "
                                     "looked for) for m.py:Net; no other condition given; mode: compile-only (CPU, "
                                     "kernels in Triton's interpreter: no GPU behaviour checked)")
    assert run_checks(report, {"no error finding": {"findings": True}}, target="m.py:Net").conditions == (
        "no error finding",)


def test_allow_names_a_known_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hazards, "RULE_IDS", ("demo_rule",))
    assert parse_allow(" demo_rule ") == "demo_rule"
    with pytest.raises(ValueError, match="no such finding rule; rules: demo_rule"):
        parse_allow("demo")


def test_an_action_another_finding_gives_is_not_advised_twice() -> None:
    """A clone_cost warning whose copies the aliasing error's action removes keeps its line, drops its action and
    says whose action removes it (a newcomer read the same advice twice)."""
    from tritoninspect.analyse.hazards.clones import ACTIONS

    alias = dataclasses.replace(finding("error"), rule="aliased_args_split", action="one pointer")
    cost = dataclasses.replace(finding("warning"), rule="clone_cost", action=ACTIONS["alias"], summary="costs 4 KB.")
    mine = {a.rule: a for a in advise(small(alias, cost))}
    assert mine["clone_cost"].action == "" and mine["aliased_args_split"].action == "one pointer"
    assert mine["clone_cost"].finding == "warning [clone_cost]: costs 4 KB (aliased_args_split's action removes this too)."
    other = dataclasses.replace(alias, kernel="other_kernel")
    assert {a.rule: a for a in advise(small(other, cost))}["clone_cost"].action == ACTIONS["alias"]
