"""The advice rules (analyse/advice.py): one test per rule, on stored reports, plus the contract
every rule keeps (a finding, an action, the torch behaviour and where it lives in torch)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tritoninspect.analyse import advice as rules
from tritoninspect.analyse.advice import RULES, advise
from tritoninspect.analyse.summary import summarise
from tritoninspect.model.report import ArgChange, GraphBreak, Recompile, RecompileLimit, Report, read_report

FIXTURES = Path(__file__).parent / "fixtures"
GPU = sorted((FIXTURES / "gpu").glob("*.json"))


def gpu(name: str) -> Report:
    return read_report(FIXTURES / "gpu" / f"{name}.json")


def run(rule: str, report: Report) -> list[rules.Advice]:
    return RULES[rule](report, summarise(report))


def test_custom_op_hides_kernel() -> None:
    (a,) = run("custom_op_hides_kernel", gpu("custom_op"))
    assert a.kernel == "add_kernel" and "tisample_custom_op::add" in a.finding
    # The neighbours come from the output code: the op's call sits between sin and cos*mul.
    assert "(between the Inductor kernels of sin and of cos, mul)" in a.finding
    assert "torch.library.triton_op" in a.action and "wrap_triton" in a.action
    assert "FallbackKernel" in a.because
    assert run("custom_op_hides_kernel", gpu("triton_op")) == []


def test_kernel_missing() -> None:
    (a,) = run("kernel_missing", read_report(FIXTURES / "report_small.json"))
    assert a.kernel == "sub_kernel" and "1/1" in a.finding and a.impact == rules.BROKEN
    assert "eliminate_dead_code" in a.cite
    assert run("kernel_missing", gpu("add_raw")) == []


def test_inplace_clones() -> None:
    (a,) = run("inplace_clones", gpu("inplace"))
    assert a.kernel == "add_inplace_kernel" and "x_ptr" in a.finding and "128 B per call" in a.finding
    assert "reinplace" in a.cite
    # add_raw's out_ptr clone is re-inplaced away: nothing to advise.
    assert run("inplace_clones", gpu("add_raw")) == []


def test_mutation_fallback() -> None:
    (a,) = run("mutation_fallback", gpu("inline_asm"))
    assert a.kernel == "asm_copy_kernel" and "pure=True" in a.action
    assert "identify_accessed_tensors" in a.because
    assert run("mutation_fallback", gpu("add_raw")) == []


def test_eager_launches_names_the_break_and_uses_its_hint() -> None:
    report = gpu("break_pre_hook")
    (a,) = run("eager_launches", report)
    brk = next(b for b in report.graph_breaks if "scale_kernel" in (b.kernel, *b.eager_kernels))
    assert a.kernel == "scale_kernel" and f"break_pre_hook.py:{brk.line}" in a.finding
    assert a.action == brk.hint
    assert run("eager_launches", gpu("add_raw")) == []


def test_graph_breaks_grouped_and_not_repeated_for_eager_kernels() -> None:
    report = gpu("graph_break")
    found = run("graph_breaks", report)
    # Line 54's break is said with scale_kernel's eager launch; line 55's stands alone.
    assert [a.finding.split(":")[1] for a in found] == ["55"]
    brk = dataclasses.replace(report.graph_breaks[1], kernel=None)
    twice = dataclasses.replace(report, graph_breaks=(brk, brk))
    (a,) = run("graph_breaks", twice)
    assert "(logged 2 times)" in a.finding


def test_recompiles_attributed_to_the_guard_that_failed() -> None:
    report = gpu("recompile_constexpr")
    size, block = run("recompiles", report)
    # 0/1 failed x's static-size guard (automatic dynamic): BLOCK changed with it, it did not cause it.
    assert size.finding == ("1 recompile (0/1): guard failed: tensor 'x' size mismatch at index 0. expected 40, "
                            "actual 100; with it constexpr BLOCK of one_block_kernel took 64 -> 128, scalar n of "
                            "one_block_kernel took 40 -> s77.")
    assert size.kernel is None and "Dimension 0 of x (40, then 100)" in size.action
    assert "mark_dynamic" in size.action and "plain argument" not in size.action
    # 0/2 failed BLOCK's own guard: the advice is about the constexpr, and says when it must stay one.
    assert block.finding == "1 recompile (0/2): constexpr BLOCK of one_block_kernel took 128 -> 256."
    assert block.kernel == "one_block_kernel"
    assert "If BLOCK bounds tl.arange or sets a block shape it must stay a constexpr" in block.action


def test_recompiles_on_a_stack_value_group_by_guard() -> None:
    """Floats from .item() carried across a break: each value fails `___stack0 == v` (the newcomer's model)."""
    change = ArgChange("k", "constexpr", "BLOCK_N", "128", "256")
    one = Recompile("1/2", "r", guard="___stack0 == 0.5  # (_dynamo/output_graph.py:1 in f)", changes=(change,),
                    hint="constexpr hint")
    two = Recompile("1/3", "r", guard="___stack0 == 0.25  # (_dynamo/output_graph.py:1 in f)")
    (a,) = run("recompiles", dataclasses.replace(gpu("add_raw"), recompiles=(one, two)))
    assert a.finding == ("2 recompiles (1/2, 1/3): guard failed: ___stack0 == <value> (0.5, 0.25); with it "
                         "constexpr BLOCK_N of k took 128 -> 256.")
    assert a.kernel is None and "Python number carried across a graph break" in a.action


def test_recompile_limit() -> None:
    report = dataclasses.replace(
        gpu("add_raw"), recompile_limits=(RecompileLimit("0/8", "recompile_limit", 8, function="forward"),))
    (a,) = run("recompiles", report)
    assert a.impact == rules.BROKEN and "recompile_limit (8) for forward" in a.finding


def test_recompile_without_kernel_changes() -> None:
    report = dataclasses.replace(gpu("add_raw"), recompiles=(Recompile("0/1", "size mismatch", guard="x size"),))
    (a,) = run("recompiles", report)
    assert a.finding == "1 recompile (0/1): guard failed: x size." and a.kernel is None
    assert "`x size`" in a.action  # which value: the guard's
    change = ArgChange("k", "scalar", "n", "4", "8", guarded=True)
    report = dataclasses.replace(report, recompiles=(Recompile("0/1", "r", changes=(change,), hint="H"),))
    (a,) = run("recompiles", report)
    assert a.kernel == "k" and a.action == "H"


@pytest.mark.parametrize("path", GPU, ids=[p.stem for p in GPU])
def test_every_advice_cites_the_torch_behaviour(path: Path) -> None:
    for a in advise(read_report(path)):
        assert a.rule in RULES and a.finding and a.action and a.because and a.cite
        assert "torch" in a.cite  # a torch source file or config, never an internal note
        assert "notes" not in a.cite and "§" not in a.because + a.action


def test_advice_is_ordered_by_impact() -> None:
    found = advise(read_report(FIXTURES / "report_small.json"))
    assert [a.impact for a in found] == sorted((a.impact for a in found), reverse=True)
    assert found[0].rule == "kernel_missing"


def test_no_advice_for_a_clean_model() -> None:
    assert advise(gpu("add_raw")) == [] and advise(gpu("triton_op")) == []


def test_graph_break_hint_wins_over_the_generic_action() -> None:
    brk = GraphBreak("0/0", "reason", "m.py", 3, headline="H", hint="do this")
    report = dataclasses.replace(gpu("add_raw"), graph_breaks=(brk,))
    (a,) = advise(report)
    assert a.action == "do this" and a.finding == "graph break at m.py:3: H."


def test_backward_cut_names_the_kernel_and_the_parameters() -> None:
    report = gpu("add_raw")
    assert run("backward_cut", report) == []
    cut = dataclasses.replace(report, meta=dataclasses.replace(
        report.meta, backward=True, backward_skipped_calls=1, params_without_grad=("lin.weight", "lin.bias")))
    (a,) = run("backward_cut", cut)
    assert a.impact == rules.BROKEN and a.kernel == "add_kernel"
    assert a.finding == ("backward was to run (--backward, or parameters requiring grad) but no output requires "
                         "grad (1 call ran forward only): add_kernel has no autograd formula, so no gradient "
                         "reaches lin.weight, lin.bias.")
    assert "triton_op" in a.action and "register_autograd" in a.action and "autograd.Function" in a.action
    # Backward ran but some parameters got nothing: still said, without the skipped-call clause.
    partial = dataclasses.replace(cut, meta=dataclasses.replace(cut.meta, backward_skipped_calls=0))
    (b,) = run("backward_cut", partial)
    assert b.finding.startswith("backward ran, but add_kernel has no autograd formula")


def test_advice_is_in_the_json_and_reads_back() -> None:
    from tritoninspect.render import render_as

    report = read_report(FIXTURES / "report_small.json")
    assert report.advice == ()  # saved before Report.advice
    text = render_as(report, "json")
    again = Report.from_json(text)  # validated against the shipped schema
    assert again.advice == tuple(advise(report)) and again.advice[0].rule == "kernel_missing"
    assert render_as(again, "json") == text  # kept as saved, not computed again


def test_a_built_report_holds_its_advice() -> None:
    from tritoninspect.analyse import build_report
    from tritoninspect.model.records import Capture

    capture = Capture.from_json((FIXTURES / "capture_recompile_constexpr.json").read_text())
    report = build_report(capture)
    assert report.advice and report.advice == tuple(advise(report))
    assert {a.rule for a in report.advice} == {"recompiles"}
