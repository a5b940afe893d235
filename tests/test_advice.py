"""The advice rules (analyse/advice*.py) on stored reports (tier a): each rule fires when its precondition
holds and is silent, or says only the fact, when it does not; findings with one cause are merged; advice
about a library's code says so; no advice points at this repository's files. The rules applied to models
and compiled again: tests/test_advice_proofs.py."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from tritoninspect.analyse import advice as rules
from tritoninspect.analyse.advice import PRECONDITIONS, RULES, advise, merge
from tritoninspect.analyse.breaks import item_hint
from tritoninspect.analyse.hazards import RULE_IDS
from tritoninspect.analyse.summary import summarise
from tritoninspect.model.report import (
    Advice,
    ArgChange,
    ClonedArg,
    GraphBreak,
    Library,
    Recompile,
    RecompileLimit,
    Report,
    read_report,
)

FIXTURES = Path(__file__).parent / "fixtures"
GPU = sorted((FIXTURES / "gpu").glob("*.json"))
STORED = [*GPU, *sorted((FIXTURES / "advice").glob("*.json"))]
REPO = Path(__file__).resolve().parents[1]


def gpu(name: str) -> Report:
    return read_report(FIXTURES / "gpu" / f"{name}.json")


def saved(name: str) -> Report:
    """A compile-only report of tests/assets/advice/<name>.py (tests/fixtures/README.md)."""
    return read_report(FIXTURES / "advice" / f"{name}.json")


def run(rule: str, report: Report) -> list[Advice]:
    return RULES[rule](report, summarise(report))


def with_args(report: Report, kernel: str, arg: str, **facts: object) -> Report:
    """`report` with the facts of `kernel`'s cloned argument `arg` replaced in every AOT occurrence."""
    def fix(a: ClonedArg) -> ClonedArg:
        return dataclasses.replace(a, **facts) if a.arg == arg else a  # type: ignore[arg-type]

    kernels = []
    for k in report.kernels:
        if k.name == kernel:
            occ = [dataclasses.replace(o, clones=dataclasses.replace(o.clones, arguments=tuple(
                fix(a) for a in o.clones.arguments))) if o.clones else o for o in k.occurrences]
            k = dataclasses.replace(k, occurrences=tuple(occ))
        kernels.append(k)
    return dataclasses.replace(report, kernels=tuple(kernels))


# --- every rule ---------------------------------------------------------------------------------------


def test_every_rule_states_its_precondition() -> None:
    assert set(PRECONDITIONS) == set(RULES)
    assert all(len(text) > 40 for text in PRECONDITIONS.values())


#: Rules that state a fact and give no action, so there is no change to apply and re-run.
NO_ACTION = {"inplace_clones"}
#: Rules whose actions are proved elsewhere: issue 24's findings, each by tests/test_hazards.py on real
#: captures and by tests/gpu/test_gpu_hazards.py (compiled against eager on the GPU).
PROVED_ELSEWHERE = {"hazards"}


def test_every_rule_with_an_action_is_proved_by_applying_it() -> None:
    """Issue 23's bar: each rule has a proof in tests/_advice_proofs.py (its advice applied to a model and
    re-run) and a negative check (the rule silent after the change, or a case where it must not fire)."""
    from _advice_proofs import PROOFS

    applied = {p.rule for p in PROOFS if p.after is not None and p.effect is not None}
    assert applied == set(RULES) - NO_ACTION - PROVED_ELSEWHERE
    assert all(a.action == "" for a in advise(gpu("inplace")) if a.rule in NO_ACTION)


@pytest.mark.parametrize("path", STORED, ids=[p.stem for p in STORED])
def test_every_advice_cites_torch_and_no_file_of_this_repository(path: Path) -> None:
    for a in advise(read_report(path)):
        assert (a.rule in RULES or a.rule in RULE_IDS) and a.finding and a.because and a.cite
        assert "torch" in a.cite  # a torch source file or config, never an internal note
        assert "notes" not in a.cite and "§" not in a.because + a.action
        # Files it may name: the user's (the target, a kernel's, a break's); never another of this repository.
        report = read_report(path)
        own = {report.meta.target.split(":")[0], *(k.file for k in report.kernels), *(b.file for b in report.graph_breaks)}
        for mentioned in re.findall(r"[\w./-]+\.(?:py|md)\b", a.action):
            library = any(mentioned.startswith(f"{lib.package}/") for lib in report.libraries)
            assert library or any(f and f.endswith(mentioned) for f in own), (mentioned, a.action)
        for url in re.findall(r"https?://\S+", a.action):
            assert url.startswith("https://docs.pytorch.org/") or a.library, url
        assert "empty_like" not in a.action  # never: a kernel that reads or accumulates needs the old values


def test_advice_is_ordered_by_impact() -> None:
    found = advise(read_report(FIXTURES / "report_small.json"))
    assert [a.impact for a in found] == sorted((a.impact for a in found), reverse=True)
    assert found[0].rule == "kernel_missing"


def test_no_advice_for_a_clean_model() -> None:
    assert advise(gpu("add_raw")) == [] and advise(gpu("triton_op")) == []


# --- custom ops: the user's, and a library's ---------------------------------------------------------


def test_custom_op_hides_kernel_in_the_users_op() -> None:
    (a,) = run("custom_op_hides_kernel", gpu("custom_op"))
    assert a.kernel == "add_kernel" and "tisample_custom_op::add" in a.finding and a.library is None
    # The neighbours come from the output code: the op's call sits between sin and cos*mul.
    assert "(between the Inductor kernels of sin and of cos, mul)" in a.finding
    assert "torch.library.triton_op" in a.action and "wrap_triton" in a.action
    assert "https://docs.pytorch.org/docs/stable/library.html" in a.action and "samples/" not in a.action
    assert "FallbackKernel" in a.because
    assert run("custom_op_hides_kernel", gpu("triton_op")) == []


def test_custom_op_of_a_library_says_whose_code_it_is() -> None:
    report = saved("moe_ops_layer")
    assert [lib.distribution for lib in report.libraries] == ["moe-ops"]
    (a,) = advise(report)
    assert a.rule == "custom_op_hides_kernel" and a.library == "moe-ops" and a.kernel is None
    assert a.kernels == ("_fused_topk_softmax_fwd_kernel_2d", "_group_offsets_kernel", "_permute_countsort_kernel",
                         "_unpermute_kernel")
    assert a.finding.startswith("Custom ops of moe-ops 0.1.0 (installed library code) hide their kernels")
    assert len(a.details) == 4 and all("not yours" in d for d in a.details)
    assert "your model cannot change how they are registered" in a.action
    assert "register an op of your own with torch.library.triton_op" in a.action
    assert "https://github.com/echogujy/moe_ops/issues" in a.action


def test_a_custom_op_whose_kernel_torch_refuses_to_trace_is_not_sent_to_a_triton_op() -> None:
    """torchao 0.18's hqq kernel with Config pre_hooks in a custom_op: the advice was "register the op with
    torch.library.triton_op ... wrap_triton"; doing so fails the compile (torch 2.13: RuntimeError: pre_hook and
    post_hook are not supported). `Kernel.untraceable_autotune` is what a capture of it records."""
    report = gpu("custom_op")
    (plain,) = run("custom_op_hides_kernel", report)
    assert plain.action.startswith("Register the op with torch.library.triton_op")
    kernels = tuple(dataclasses.replace(k, untraceable_autotune=("Config.pre_hook",)) for k in report.kernels)
    (a,) = run("custom_op_hides_kernel", dataclasses.replace(report, kernels=kernels))
    assert a.action.startswith("Keep the custom_op: torch refuses") and "Config.pre_hook" in a.action
    assert "reset_to_zero" in a.action and "Register the op with torch.library.triton_op" not in a.action
    assert a.finding == plain.finding


def test_an_op_the_user_registered_around_a_library_kernel_is_the_users() -> None:
    report = gpu("custom_op")
    ops = tuple(dataclasses.replace(o, library=None) for o in report.opaque_ops)
    kernels = tuple(dataclasses.replace(k, library="liger_kernel") for k in report.kernels)
    (a,) = run("custom_op_hides_kernel", dataclasses.replace(report, opaque_ops=ops, kernels=kernels))
    assert a.library is None and "Register the op with torch.library.triton_op" in a.action


# --- clones --------------------------------------------------------------------------------------------


def test_merged_allocations_name_the_cause_and_warn_against_empty() -> None:
    report = saved("ln_zeros_merged")
    (a,) = [x for x in advise(report) if x.kernels == ("ln_bwd_kernel",)]
    assert a.rule == "clone_merged_allocations"
    assert a.finding == ("ln_bwd_kernel gets DW and DB as one tensor in the compiled graph: identical torch.zeros "
                         "allocations were merged, so Inductor copies DB before the launch (256 B per call).")
    assert "torch._functorch.config.cse = False" in a.action
    assert "Keep DB as torch.zeros: DB is accumulated with atomics" in a.action
    assert "torch.empty (AOTAutograd never merges torch.empty)" in a.action  # for one written in full


def test_not_merged_by_the_compiler_is_not_called_merged() -> None:
    # The same facts, but the Dynamo graph already gave the kernel one tensor (the user passed it twice).
    report = with_args(with_args(saved("ln_zeros_merged"), "ln_bwd_kernel", "DB", merged=False),
                       "ln_bwd_kernel", "DW", merged=False)
    assert run("clone_merged_allocations", report) == []
    (a,) = run("inplace_clones", report)
    assert a.action == "" and "DW gets the same tensor" in a.finding and "cse" not in a.finding


def test_shared_allocation_and_input_view() -> None:
    report = saved("ln_zeros_merged")
    views = with_args(with_args(report, "ln_bwd_kernel", "DB", merged=False, view=True), "ln_bwd_kernel", "DW",
                      merged=False, view=True)
    (a,) = run("clone_shared_allocation", views)
    assert "views of one tensor" in a.finding and "Pass the tensor DW and DB are views of once" in a.action
    inplace = gpu("inplace")
    view = with_args(inplace, "add_inplace_kernel", "x_ptr", made_by="input", view=True, written_back=True)
    (b,) = run("clone_input_view", view)
    assert "a view of a graph input" in b.finding and "input tensor itself instead of the view" in b.action
    # Read after the launch: the copy is what keeps the program right; no action.
    read = with_args(view, "add_inplace_kernel", "x_ptr", read_after=("mul",))
    assert run("clone_input_view", read) == []
    (c,) = run("inplace_clones", read)
    assert c.action == "" and "mul reads that value after the launch" in c.finding


def test_a_view_shared_with_an_argument_the_kernel_only_reads_is_no_shared_allocation() -> None:
    """Liger-Kernel's rms_norm backward gets dY as dY_ptr and dX_ptr (dX = dY, in place) and writes dX_ptr only:
    the rule said it "writes dX_ptr and dY_ptr" and advised passing "the tensor they are views of" once,
    with an offset. There are no two written parts; the aliasing hazard's advice is the one that applies."""
    report = saved("ln_zeros_merged")
    read_partner = with_args(report, "ln_bwd_kernel", "DB", merged=False, view=True, shares_with=("DY",))
    assert run("clone_shared_allocation", read_partner) == []
    both = with_args(read_partner, "ln_bwd_kernel", "DB", shares_with=("DY", "DW"))
    (a,) = run("clone_shared_allocation", both)
    assert "writes DW and DB, views of one tensor" in a.finding


def test_a_report_without_the_facts_gets_the_fact_only() -> None:
    # Schema 4 reports (the stored GPU ones) lack how the buffers are made: no action is guessed.
    (a,) = run("inplace_clones", gpu("inplace"))
    assert a.kernel == "add_inplace_kernel" and "128 B per call" in a.finding and a.action == ""
    assert all(run(r, gpu("inplace")) == [] for r in ("clone_merged_allocations", "clone_input_view"))


def test_clones_of_a_mutation_fallback_are_that_rules() -> None:
    (a,) = run("mutation_fallback", gpu("inline_asm"))
    assert a.kernel == "asm_copy_kernel" and "pure=True" in a.action and "no side effects" in a.action
    assert "identify_accessed_tensors" in a.because
    assert run("inplace_clones", gpu("inline_asm")) == []
    assert run("mutation_fallback", gpu("add_raw")) == []


def test_mutation_fallback_in_a_library_kernel_or_another_cause() -> None:
    report = gpu("inline_asm")
    lib = dataclasses.replace(report, kernels=tuple(dataclasses.replace(k, library="liger_kernel") for k in report.kernels),
                              libraries=(Library("liger_kernel", "0.8.5", "liger_kernel", "https://x.org/issues"),))
    (a,) = run("mutation_fallback", lib)
    assert "pure=True" not in a.action and "ask the maintainers of liger_kernel (https://x.org/issues)" in a.action
    kernels = tuple(dataclasses.replace(k, occurrences=tuple(dataclasses.replace(
        o, mutation_analysis_fallback="AttributeError: 'float' object has no attribute 'to'")
        if o.mutation_analysis_fallback else o for o in k.occurrences)) for k in report.kernels)
    (b,) = run("mutation_fallback", dataclasses.replace(report, kernels=kernels))
    assert b.action == ""  # the fact; no guessed fix


# --- breaks and eager launches -----------------------------------------------------------------------


def test_item_hint_follows_what_the_value_feeds() -> None:
    branch = item_hint({"branch": 36, "kernel": 37})
    assert branch is not None and "decides a Python branch (line 36)" in branch.hint and "torch.where" in branch.hint
    assert "does not remove this break" in branch.hint
    sizes = item_hint({"kernel": 35, "size": 40})
    assert sizes is not None and "Set torch._dynamo.config.capture_scalar_outputs = True" in sizes.hint
    assert "only feeds a kernel's grid or scalar arguments and tensor sizes (line 35)" in sizes.hint
    assert item_hint({"kernel": 35, "other": 36}) is None and item_hint(None) is None


def test_the_generic_item_hint_is_conditional() -> None:
    from tritoninspect.analyse.breaks import known_cause

    cause = known_cause("Unsupported Tensor.item() call with capture_scalar_outputs=False")
    assert cause is not None and "only when the value feeds tensor sizes or kernel arguments" in cause.hint
    assert "Set torch" not in cause.hint


def test_eager_launches_names_the_break_and_uses_its_hint() -> None:
    report = gpu("break_pre_hook")
    (a,) = run("eager_launches", report)
    brk = next(b for b in report.graph_breaks if "scale_kernel" in (b.kernel, *b.eager_kernels))
    assert a.kernel == "scale_kernel" and f"break_pre_hook.py:{brk.line}" in a.finding
    assert a.action == brk.hint
    assert run("eager_launches", gpu("add_raw")) == []


def test_a_break_in_a_library_says_whose_code_it_is() -> None:
    report = read_report(FIXTURES / "gpu-reallib" / "gpu" / "liger_layer_norm.json")
    breaks = tuple(dataclasses.replace(b, library="liger_kernel") for b in report.graph_breaks)
    lib = Library("liger_kernel", "0.8.5", "liger_kernel", "https://github.com/linkedin/Liger-Kernel")
    found = advise(dataclasses.replace(report, graph_breaks=breaks, libraries=(lib,)))
    forward = next(a for a in found if "_layer_norm_forward_kernel" in a.kernels)
    assert forward.library == "liger_kernel"
    assert "The break is in liger_kernel 0.8.5's code at liger_kernel/functional.py:268" in forward.action
    assert "disables compilation around its code" in forward.action and "not yours" in forward.action
    assert "https://github.com/linkedin/Liger-Kernel" in forward.action and "drop the" not in forward.action


def test_a_library_launch_torch_refuses_is_not_sent_to_a_triton_op() -> None:
    """torchao 0.18's hqq kernel with Config pre_hooks breaks the graph in the library (GB0361); the action was
    "launch the library's kernels from an op of your own registered with triton_op and wrap_triton", and doing
    so fails the compile (RuntimeError: pre_hook and post_hook are not supported, torch 2.13): wrap_triton runs
    the same checks. A custom_op around the call keeps one graph."""
    report = gpu("break_pre_hook")
    assert any("pre_hook and post_hook are not supported" in b.reason for b in report.graph_breaks)
    breaks = tuple(dataclasses.replace(b, library="torchao") for b in report.graph_breaks)
    lib = Library("torchao", "0.18.0", "torchao", "https://github.com/pytorch/ao")
    found = advise(dataclasses.replace(report, graph_breaks=breaks, libraries=(lib,)))
    eager = next(a for a in found if a.rule == "eager_launches")
    assert "The break is in torchao 0.18.0's code" in eager.action
    assert "wrap_triton checks it the same way" in eager.action and "torch.library.custom_op of your own" in eager.action
    assert "registered with torch.library.triton_op" not in eager.action
    assert "reset_to_zero" in eager.action  # the change the library can make
    assert "register_autograd" not in eager.action  # a run without backward
    # Where the run trains, the own custom_op needs the library's backward, or no gradient passes it.
    training = dataclasses.replace(report, graph_breaks=breaks, libraries=(lib,),
                                   meta=dataclasses.replace(report.meta, backward=True))
    trained = next(a for a in advise(training) if a.rule == "eager_launches")
    assert "custom_op of your own and torch.library.register_autograd giving it the library's backward" in trained.action
    other = GraphBreak("0/0", "reason", "m.py", 3, headline="Unsupported Tensor.item() call", library="torchao")
    (a,) = advise(dataclasses.replace(gpu("add_raw"), graph_breaks=(other,), libraries=(lib,)))
    assert "The break is in torchao 0.18.0's code (installed library" in a.action and "ask the maintainers of torchao" in a.action


def test_a_library_break_no_kernel_ran_eagerly_after_is_a_cut_not_eager_kernels() -> None:
    """A tiny HF Llama with Liger's cross entropy at two sequence lengths: its .item() break left every kernel
    compiled (eager 0), and the advice said "so its kernels run eagerly" and sent them to a triton_op."""
    lib = Library("liger_kernel", "0.8.5", "liger_kernel", "https://github.com/linkedin/Liger-Kernel")
    item = GraphBreak("11/0", "reason", "m.py", 3, headline="Unsupported Tensor.item() call", library="liger_kernel",
                      hint="Set torch._dynamo.config.capture_scalar_outputs = True.")
    report = dataclasses.replace(gpu("add_raw"), graph_breaks=(item,), libraries=(lib,))
    (a,) = run("graph_breaks", report)
    assert "no kernel ran eagerly because of it" in a.action and "run eagerly" not in a.action
    assert "registered with torch.library.triton_op" not in a.action
    assert "Torch's hint, for your side: Set torch._dynamo.config.capture_scalar_outputs = True. Otherwise ask " \
           "the maintainers of liger_kernel" in a.action
    # A trace records no launches: it cannot say none ran eagerly.
    traced = dataclasses.replace(report, meta=dataclasses.replace(report.meta, mode="trace"))
    (t,) = run("graph_breaks", traced)
    assert "eagerly" not in t.action


def test_graph_breaks_grouped_and_not_repeated_for_eager_kernels() -> None:
    report = gpu("graph_break")
    found = run("graph_breaks", report)
    # Line 54's break is said with scale_kernel's eager launch; line 55's stands alone.
    assert [a.finding.split(":")[1] for a in found] == ["55"]
    brk = dataclasses.replace(report.graph_breaks[1], kernel=None)
    twice = dataclasses.replace(report, graph_breaks=(brk, brk))
    (a,) = run("graph_breaks", twice)
    assert "(logged 2 times)" in a.finding


def test_graph_break_hint_wins_over_the_generic_action() -> None:
    brk = GraphBreak("0/0", "reason", "m.py", 3, headline="H", hint="do this")
    report = dataclasses.replace(gpu("add_raw"), graph_breaks=(brk,))
    (a,) = advise(report)
    assert a.action == "do this" and a.finding == "graph break at m.py:3: H."


def test_graph_break_finding_names_what_torchs_explanation_names() -> None:
    reason = ("Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace builtin operator "
              "`print` with argument types ['str'] (has_kwargs False)\n  Hint: Avoid calling builtin `print`")
    brk = GraphBreak("0/0", reason, "m.py", 3, headline="Failed to trace builtin operator")
    (a,) = advise(dataclasses.replace(gpu("add_raw"), graph_breaks=(brk,)))
    assert a.finding == "graph break at m.py:3: Failed to trace builtin operator (`print`).", a.finding
    named = dataclasses.replace(brk, headline="Unsupported call to `print`")
    (b,) = advise(dataclasses.replace(gpu("add_raw"), graph_breaks=(named,)))
    assert b.finding.endswith(": Unsupported call to `print`.")


def test_a_break_after_a_compile_only_device_probe_is_not_presented_as_real() -> None:
    """Liger's infer_device() heard "no GPU" in compile-only mode and imported transformers inside the
    traced forward: an "Import failure" break a GPU run does not have. The finding and the eager
    kernel's said so nowhere, and the advice told the user to restructure the library call. The break's own
    action comes after the check: a `print` after the user's own probe breaks on a GPU too."""
    probe = "/venv/site-packages/liger_kernel/utils.py:47 in infer_device"
    report = gpu("break_pre_hook")
    probed = tuple(dataclasses.replace(b, device_probe=probe) for b in report.graph_breaks)
    found = advise(dataclasses.replace(report, graph_breaks=probed))
    eager = next(a for a in found if a.rule == "eager_launches")
    assert "that break follows a device probe answered for the CPU in compile-only mode" in eager.finding
    assert "(liger_kernel/utils.py:47 in infer_device)" in eager.finding
    assert eager.action.startswith("Check on a GPU before changing code for this")
    lone = GraphBreak("0/0", "reason", "m.py", 3, headline="Import failure", hint="restructure", device_probe=probe)
    (a,) = advise(dataclasses.replace(gpu("add_raw"), graph_breaks=(lone,)))
    assert a.finding.endswith("a GPU run may not break here.")
    assert a.action.startswith("Check on a GPU before changing code") and a.action.endswith("If it is: restructure")
    (plain,) = advise(dataclasses.replace(gpu("add_raw"), graph_breaks=(dataclasses.replace(lone, device_probe=None),)))
    assert plain.action == "restructure" and "device probe" not in plain.finding


def test_a_finding_on_a_library_kernel_says_whose_code_the_action_changes() -> None:
    """clone_cost on Liger's GEGLU backward advised "Give the kernel an output pointer ...", as if the
    user could; the action (a clone rule's, a finding's) now says the kernel is the library's and whom to ask."""
    from tritoninspect.analyse.hazards.bridge import hazard_advice
    from tritoninspect.analyse.summary import summarise

    report = gpu("hazard_clone_cost")
    (finding,) = advise(report)  # clone_input_view: the proved clone rule, clone_cost's warning steps aside
    kernel = finding.kernel
    lib = Library("liger_kernel", "0.8.5", "liger_kernel", "https://github.com/linkedin/Liger-Kernel")
    theirs = dataclasses.replace(report, libraries=(lib,), kernels=tuple(
        dataclasses.replace(k, library="liger_kernel") if k.name == kernel else k for k in report.kernels))
    (a,) = advise(theirs)
    hazard = hazard_advice(theirs, summarise(theirs))[0]
    assert hazard.rule == "clone_cost" and hazard.action.startswith(f"{kernel} is liger_kernel 0.8.5's code")
    assert a.action.startswith(f"{kernel} is liger_kernel 0.8.5's code (installed library, not yours), so ask "
                               "the maintainers of liger_kernel (https://github.com/linkedin/Liger-Kernel)")
    assert finding.action[1:] in a.action and a.library == "liger_kernel"


# --- missing, backward, recompiles ----------------------------------------------------------------


def test_kernel_missing() -> None:
    (a,) = run("kernel_missing", read_report(FIXTURES / "report_small.json"))
    assert a.kernel == "sub_kernel" and "1/1" in a.finding and a.impact == rules.BROKEN
    assert "eliminate_dead_code" in a.cite
    assert run("kernel_missing", gpu("add_raw")) == []


def _using(report: Report, *params: str) -> Report:
    """`report` whose first Dynamo graph takes `params` as inputs, named as Dynamo names them."""
    def placeholder(name: str) -> str:
        *modules, param = name.split(".")
        return "L_self_" + "".join(f"modules_{m}_" for m in modules) + f"parameters_{param}_"

    graphs = list(report.graphs)
    i = next(n for n, g in enumerate(graphs) if g.stage == "dynamo")
    graphs[i] = dataclasses.replace(graphs[i], code=graphs[i].code + "".join(f"\n# {placeholder(p)}" for p in params))
    return dataclasses.replace(report, graphs=tuple(graphs))


def test_backward_cut_spares_kernels_for_parameters_no_graph_uses() -> None:
    """A Liger model with a LigerDyT it never calls: its parameters got no gradient, and the JSD and KL-divergence
    kernels were blamed for cutting them (BROKEN, "give the kernel a backward")."""
    report = gpu("add_raw")
    unused = dataclasses.replace(report, meta=dataclasses.replace(
        report.meta, backward=True, params_without_grad=("dyt.alpha", "dyt.beta")))
    (a,) = run("backward_cut", unused)
    assert a.impact == rules.INFO and a.kernels == () and "add_kernel" not in a.finding
    assert a.finding == ("backward ran, but no gradient reaches dyt.alpha, dyt.beta, which no compiled graph uses: "
                         "unused by the forward, or used only by code that ran eagerly.")
    (b,) = run("backward_cut", _using(unused, "dyt.alpha"))
    assert b.impact == rules.BROKEN and b.finding == (
        "backward ran, but add_kernel has no autograd formula, so no gradient reaches dyt.alpha (dyt.beta is in no "
        "compiled graph: unused, or used eagerly).")


def test_backward_cut_names_the_kernel_and_the_parameters() -> None:
    report = _using(gpu("add_raw"), "lin.weight", "lin.bias")
    assert run("backward_cut", report) == []
    cut = dataclasses.replace(report, meta=dataclasses.replace(
        report.meta, backward=True, backward_skipped_calls=1, params_without_grad=("lin.weight", "lin.bias")))
    (a,) = run("backward_cut", cut)
    assert a.impact == rules.BROKEN and a.kernel == "add_kernel"
    assert a.finding == ("backward was to run (--backward, or parameters requiring grad) but no output requires "
                         "grad (1 call ran forward only): add_kernel has no autograd formula, so no gradient "
                         "reaches lin.weight, lin.bias.")
    assert "triton_op" in a.action and "register_autograd" in a.action and "autograd.Function" in a.action
    assert "samples/" not in a.action
    # Backward ran but some parameters got nothing: still said, without the skipped-call clause.
    partial = dataclasses.replace(cut, meta=dataclasses.replace(cut.meta, backward_skipped_calls=0))
    (b,) = run("backward_cut", partial)
    assert b.finding.startswith("backward ran, but add_kernel has no autograd formula")


def test_backward_cut_names_the_raw_launch_not_an_op_that_may_have_a_formula() -> None:
    """A triton_op with register_autograd before a raw launch into torch.empty_like (a newcomer's model):
    the raw launch cut the graph; the op's formula (plain torch ops) never shows in the report."""
    raw, op = _using(gpu("add_raw"), "lin.weight"), gpu("triton_op")
    (op_kernel,) = [dataclasses.replace(k, name="softmax_kernel", id="softmax_kernel") for k in op.kernels]
    both = dataclasses.replace(raw, kernels=(*raw.kernels, op_kernel), meta=dataclasses.replace(
        raw.meta, backward=True, backward_skipped_calls=1, params_without_grad=("lin.weight",)))
    (a,) = run("backward_cut", both)
    assert a.kernels == ("add_kernel",) and "add_kernel has no autograd formula" in a.finding, a.finding
    # With no raw launch to explain it, the op is named (it may lack register_autograd).
    only_op = dataclasses.replace(both, kernels=(op_kernel,))
    (b,) = run("backward_cut", only_op)
    assert b.kernels == ("softmax_kernel",)


def test_backward_cut_tells_two_kernels_of_one_name_apart() -> None:
    """Two modules' `scale_kernel`s (a newcomer's model) read "scale_kernel and scale_kernel"."""
    raw = _using(gpu("add_raw"), "lin.weight")
    (kernel,) = raw.kernels
    other = dataclasses.replace(kernel, id="other", file="/repo/other.py", line=3)
    both = dataclasses.replace(raw, kernels=(kernel, other), meta=dataclasses.replace(
        raw.meta, backward=True, backward_skipped_calls=1, params_without_grad=("lin.weight",)))
    (a,) = run("backward_cut", both)
    assert "add_kernel (" in a.finding and "other.py:3) have no autograd formula" in a.finding, a.finding
    assert a.finding.count("add_kernel") == 2 and a.kernels == ("add_kernel", "add_kernel")


def test_backward_cut_does_not_blame_a_kernel_with_a_backward() -> None:
    report = _using(gpu("autograd_function"), "w")
    cut = dataclasses.replace(report, meta=dataclasses.replace(report.meta, backward=True, params_without_grad=("w",)))
    (a,) = run("backward_cut", cut)
    assert "an operation without an autograd formula cut the graph" in a.finding


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


def _helper_recompile(cid: str, guard: str, line: int) -> Recompile:
    reason = (f"{cid[:-1]}{int(cid[-1]) - 1}: {guard}  # x  # transformers/utils/deprecation.py:{line} in wrapped_func\n"
              'User stack trace:\n  File "/v/lib/python3.11/site-packages/transformers/utils/deprecation.py", '
              f"line {line}, in wrapped_func\n    x")
    return Recompile(cid, reason, guard=f"{guard}  # x")


def test_recompiles_of_a_helper_called_differently_are_one_finding_without_dynamic() -> None:
    """A tiny Hugging Face Llama with a graph break: transformers' deprecation wrapper, compiled on its own, failed
    a type guard and argument-count guards; the advice was "compile with dynamic=True", which changes nothing."""
    group = (_helper_recompile("1/1", "type(args[0]) is LlamaForCausalLM", 131),
             _helper_recompile("1/2", "len(args) == 1", 131), _helper_recompile("1/3", "not args", 178))
    (a,) = run("recompiles", dataclasses.replace(gpu("add_raw"), recompiles=group))
    assert a.finding == ("3 recompiles (1/1, 1/2, 1/3) of wrapped_func (transformers/utils/deprecation.py): guards "
                         "failed: type(args[0]) is LlamaForCausalLM, len(args) == 1, not args.")
    assert "dynamic=True does not help" in a.action and "mark_dynamic" not in a.action
    assert "wrapped_func (transformers/utils/deprecation.py) is compiled on its own" in a.action
    entry = dataclasses.replace(group[0], compile_id="0/1")
    (b,) = run("recompiles", dataclasses.replace(gpu("add_raw"), recompiles=(entry,)))
    assert b.action.endswith("Call it alike each time.")
    # A guard on a value dynamic=True can make symbolic keeps its advice.
    size = Recompile("1/1", "r", guard="L['n'] == 4  # x")
    (c,) = run("recompiles", dataclasses.replace(gpu("add_raw"), recompiles=(size,)))
    assert "dynamic=True" in c.action and "does not help" not in c.action


def test_recompiles_from_one_size_change_are_one_finding() -> None:
    """A tiny HF Llama at a second sequence length: 14 frames recompiled with the length dynamic, each said apart
    with the same advice. One finding names the sizes, one action marks them dynamic."""
    def size(cid: str, tensor: str, a: int, b: int, index: int = 1) -> Recompile:
        guard = f"tensor '{tensor}' size mismatch at index {index}. expected {a}, actual {b}"
        return Recompile(cid, f"{cid[:-1]}0: {guard}", guard=guard)

    group = (size("0/1", "input_ids", 16, 24), size("1/1", "labels", 16, 24), size("2/1", "source", 32, 48, 0),
             size("3/1", "logits", 16, 24), size("4/1", "input", 32, 48, 0), size("5/1", "input_ids", 16, 24))
    (a,) = run("recompiles", dataclasses.replace(gpu("add_raw"), recompiles=group))
    assert a.finding == ("6 recompiles (0/1, 1/1, 2/1, 3/1, 4/1, 5/1), of 6 frames: automatic dynamic shapes, after "
                         "dimension 1 of input_ids (16 -> 24), dimension 1 of labels (16 -> 24), dimension 0 of "
                         "source (32 -> 48), dimension 1 of logits (16 -> 24), and 1 more changed.")
    assert a.action.startswith("These sizes changed after the first compile") and "mark_dynamic" in a.action
    (one,) = run("recompiles", dataclasses.replace(gpu("add_raw"), recompiles=group[:1]))
    assert one.finding.startswith("1 recompile (0/1): guard failed: tensor 'input_ids' size mismatch")


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


def test_a_value_the_trace_does_not_record_is_said_in_words() -> None:
    """A trace's first compile holds no value for an int Dynamo specialised: the finding, `breaks`
    and HTML said "took ? -> s77", a `?` nothing explained."""
    from tritoninspect.model.report import UNRECORDED
    from tritoninspect.render import render_as

    change = ArgChange("k", "scalar", "n", UNRECORDED, "s77")
    report = dataclasses.replace(gpu("add_raw"), recompiles=(Recompile("0/1", "size mismatch", guard="x size",
                                                                       changes=(change,)),))
    (a,) = run("recompiles", report)
    assert a.finding.endswith("scalar n of k took (not recorded) -> s77."), a.finding
    assert "scalar n (not recorded) -> s77" in render_as(report, "breaks", color=False, width=160)
    assert "(not recorded) → <b>s77</b>" in render_as(report, "html")


def test_a_recorded_question_mark_is_not_said_unrecorded() -> None:
    """A constexpr whose real value is the string "?" was said "(not recorded)"; a hint built its text
    with the bare sentinel. The value is quoted; the hint says the words."""
    from tritoninspect.analyse.breaks import _arg_text, _recompile_hint
    from tritoninspect.model.report import UNRECORDED

    assert _arg_text({"MODE": "?"}, "MODE") == "'?'" and _arg_text({}, "MODE") == UNRECORDED
    hint = _recompile_hint((ArgChange("k", "constexpr", "BLOCK", UNRECORDED, "128"),))
    assert hint is not None and "((not recorded) -> 128)" in hint and "? ->" not in hint


# --- merging -------------------------------------------------------------------------------------------


def _advice(kernel: str, cause: str = "c", action: str = "do x", impact: int = 30, rule: str = "r") -> Advice:
    return Advice(rule, impact, f"{kernel} finding", action, "because", "torch/x.py", kernel=kernel,
                  kernels=(kernel,), cause=cause)


def test_findings_with_one_cause_and_action_merge() -> None:
    merged, other, alone = merge([_advice("a"), _advice("b", impact=40), _advice("c", action="do y"),
                                  _advice("d", cause="")])[:3]
    assert merged.kernels == ("a", "b") and merged.kernel is None and merged.impact == 40
    assert merged.finding == "C (2 kernels: a, b)." and merged.details == ("a finding", "b finding")
    assert other.kernels == ("c",) and other.details == ()  # another action: not merged
    assert alone.kernels == ("d",)
    assert len(merge([_advice("d", cause=""), _advice("e", cause="")])) == 2  # no cause: never merged
    assert len(merge([_advice("a"), _advice("b", rule="s")])) == 2  # another rule: not merged


# --- the report keeps them ------------------------------------------------------------------------------


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


def test_a_capture_with_the_facts_gets_the_input_view_advice() -> None:
    """samples/inplace.py's real capture (tests/fixtures/capture_inplace.json): the second launch writes
    `x[:32]`, a view of the input: the clone_input_view rule, from the recorded facts alone."""
    from tritoninspect.analyse import build_report
    from tritoninspect.model.records import Capture

    report = build_report(Capture.from_json((FIXTURES / "capture_inplace.json").read_text()))
    (a,) = advise(report)
    assert a.rule == "clone_input_view" and a.kernels == ("add_inplace_kernel",)
