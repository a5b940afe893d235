"""`tritoninspect breaks` and `check`, fast tiers: parsing torch's break text, the analyses on
saved captures of the break samples, `check_report`, the renderer (gold files) and the CLI
on saved reports (no compiling).

Fixtures: tests/fixtures/capture_break_*.json and capture_recompile_constexpr.json, made by
tests/fixtures/make_captures.py --breaks (torch 2.13 compile-only, Dynamo stage).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _breaks_expect import EXPECTED, check_breaks, check_constexpr_recompiles, check_item_grid_recompile
from _expect import REPO, cli_env
from _zygote import run as zygote_run
from tritoninspect.analyse import build_report
from tritoninspect.analyse.breaks import KNOWN_CAUSES, known_cause, launched_in
from tritoninspect.analyse.guard_text import short_guard
from tritoninspect.analyse.checks import CHECK_SCHEMA_VERSION, CheckResult, check_report, parse_entry, run_checks
from tritoninspect.model.records import Capture
from tritoninspect.model.errors import ExitCode
from tritoninspect.render.breaks import break_groups, render_breaks, shown_reason
from tritoninspect.analyse.check_suite import EntryResult, SuiteResult
from tritoninspect.render.check import render_check, render_suite
from tritoninspect.model.report import DecompiledFrame, Report

FIXTURES = REPO / "tests" / "fixtures"
GOLD = REPO / "tests" / "gold"
UPDATE_GOLD = os.environ.get("TRITONINSPECT_UPDATE_GOLD") == "1"


def load(name: str) -> Capture:
    return Capture.from_json((FIXTURES / f"capture_{name}.json").read_text(encoding="utf-8"))


def report_of(name: str) -> Report:
    return build_report(load(name))


def as_data(report: Report) -> dict[str, Any]:
    return json.loads(report.to_json())


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fixture paths are repo-relative: resolve them from the repository root."""
    monkeypatch.chdir(REPO)
    return REPO


# --- the samples' breaks, from saved captures ------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_breaks(name: str, in_repo: Path) -> None:
    report = report_of(name)
    assert [d for d in report.diagnostics if d.severity != "note"] == []
    # Compile-only mode says what it cannot show: Triton's autotuner frames behind an eager launch.
    notes = [d.message for d in report.diagnostics if d.severity == "note"]
    eager_autotuned = sorted(k.name for k in report.kernels if k.autotune_configs and "eager" in k.entries)
    assert len(notes) == (1 if eager_autotuned else 0)
    assert all(f"({', '.join(eager_autotuned)})" in n for n in notes)
    check_breaks(name, as_data(report))


def test_item_grid_recompile_is_tied_to_the_kernel_scalar(in_repo: Path) -> None:
    check_item_grid_recompile(as_data(report_of("break_item_grid")))


def test_constexpr_recompiles_are_tied_to_the_constexpr(in_repo: Path) -> None:
    check_constexpr_recompiles(as_data(report_of("recompile_constexpr")))


def test_graph_report_breaks_have_the_same_fields(in_repo: Path) -> None:
    """`graph` builds the same report: its breaks carry the ids, code and kernel too."""
    breaks = report_of("graph_break").graph_breaks
    disabled, user = breaks
    assert (disabled.gb_id, user.gb_id) == ("GB0098", "GB0025")
    assert disabled.kernel == "scale_kernel" and disabled.eager_kernels == ("scale_kernel",)
    assert disabled.hint and "torch.compiler.disable" in disabled.headline
    # A user-inserted break concerns no kernel and has no Triton hint.
    assert (user.kernel, user.hint, user.eager_kernels) == (None, None, ())
    assert user.context[user.line - user.context_start].strip() == "torch._dynamo.graph_break()"


def test_unresumable_break_ties_only_later_launches(in_repo: Path) -> None:
    """A break Dynamo cannot resume from makes eager only what runs after it in the same frame."""
    capture = load("break_heuristics_dynamic")
    site = capture.launches[0].site
    earlier = tuple(re.sub(r":(\d+) in forward$", lambda m: f":{int(m[1]) - 5} in forward", f) for f in site)
    capture.launches = [dataclasses.replace(capture.launches[0], site=earlier)]
    breaks = build_report(capture).graph_breaks
    assert all(b.eager_kernels == () for b in breaks)


def test_a_launch_in_a_resumed_frame_is_not_tied_to_the_break_it_resumed_from(in_repo: Path) -> None:
    """After a `print` break at line 11 of forward, a disabled function at line 15 launches eagerly: its
    stack holds forward at line 11 (Dynamo's forward calling its resume function, also named forward
    here) and forward at 15. The launch was tied to the print break as well as the disabled call."""
    capture = load("graph_break")
    disabled = next(r for r in capture.breaks if "disable" in r.headline)
    launch = next(la for la in capture.launches if not la.in_graph)
    at_disabled = next(f for f in launch.site if f.startswith(f"{disabled.file}:{disabled.line} in "))
    function = at_disabled.rsplit(" in ", 1)[1]
    earlier = dataclasses.replace(disabled, line=disabled.line - 1, headline="Failed to trace builtin operator",
                                  gb_id="GB0059", frame_skipped=False, skipped_rest=False)
    resumed_from = f"{disabled.file}:{disabled.line - 1} in torch_dynamo_resume_in_{function}_at_1"
    site = launch.site[:launch.site.index(at_disabled)]
    capture.breaks = [earlier, *capture.breaks]
    capture.launches = [dataclasses.replace(la, site=(*site, f"{disabled.file}:{disabled.line - 1} in {function}",
                                                      at_disabled.replace(f" in {function}", f" in {resumed_from.rsplit(' in ', 1)[1]}"),
                                                      *la.site[la.site.index(at_disabled) + 1:]))
                        if la is launch else la for la in capture.launches]
    first, *_ = build_report(capture).graph_breaks
    assert (first.line, first.eager_kernels) == (disabled.line - 1, ()), first


def test_no_launch_sites_no_eager_kernels(in_repo: Path) -> None:
    capture = load("break_disabled_dispatch")
    capture.launches = [dataclasses.replace(la, site=()) for la in capture.launches]
    (b,) = build_report(capture).graph_breaks
    assert b.eager_kernels == () and b.kernel is None


# --- known causes -----------------------------------------------------------------------------

#: Messages torch emits (and where), one per known cause: the table must recognise each.
TORCH_MESSAGES = {
    "@triton.heuristics must return constant values": "_dynamo/variables/functions.py",
    "pre_hook and post_hook are not supported in triton.Autotune or triton.Config":
        "_higher_order_ops/triton_kernel_wrap.py",
    "Only configs, keys, restore_value, and reset_to_zero are supported for triton.autotune":
        "_higher_order_ops/triton_kernel_wrap.py",
    "Passing num_ctas directly to the Triton kernel is not supported": "_higher_order_ops/triton_kernel_wrap.py",
    "Passing multiple @triton.autotune decorators is not supported": "_higher_order_ops/triton_kernel_wrap.py",
    "Triton kernels should always be called with a grid": "_higher_order_ops/triton_kernel_wrap.py",
    "Unsupported Tensor.item() call with capture_scalar_outputs=False": "_dynamo/variables/tensor.py",
    "Skip calling `torch.compiler.disable()`d function": "_dynamo/variables/functions.py",
    "Dynamo has no bytecode reconstruction implemented for sourceless variable TritonKernelVariable()":
        "_dynamo/codegen.py",
    "invalid ptr argument for create_tma_descriptor": "_dynamo/variables/functions.py",
}


@pytest.mark.parametrize("message", sorted(TORCH_MESSAGES))
def test_each_torch_message_has_a_known_cause(message: str) -> None:
    assert known_cause(message) is not None, message


def test_every_known_cause_is_reached_and_cited() -> None:
    reached = {id(known_cause(m)) for m in TORCH_MESSAGES}
    for cause in KNOWN_CAUSES:
        assert id(cause) in reached, cause.pattern.pattern
        assert re.search(r"\bGB\d{4}\b|#\d+", cause.source) or ".py" in cause.source, cause.source


@pytest.mark.parametrize("message", sorted(m for m, f in TORCH_MESSAGES.items() if f))
def test_the_messages_are_torchs(message: str) -> None:
    """The table follows real text: each message is in the installed torch's source (2.13 here).
    Long messages are split across string literals there, so compare their first 40 characters."""
    source = (_torch_dir() / TORCH_MESSAGES[message]).read_text(encoding="utf-8")
    assert message[:40] in source, (message, TORCH_MESSAGES[message])


def _torch_dir() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    assert spec and spec.origin
    return Path(spec.origin).parent


def test_unrelated_break_has_no_known_cause() -> None:
    assert known_cause("Call to `torch._dynamo.graph_break()`\n  Explanation: User-inserted graph break.") is None


@pytest.mark.parametrize(
    ("line", "kernel"),
    [
        ("    add_kernel[(triton.cdiv(n, 16),)](x, y, out, n, BLOCK=16)", "add_kernel"),
        ("    masked_scale_kernel[grid](x, out, n)", "masked_scale_kernel"),
        ("    wrap_triton(add_kernel)[grid](x, y, out, n)", "add_kernel"),
        ("    add_kernel.run(x, y, grid=grid, warmup=False)", "add_kernel"),
        ("    other.add_kernel[grid](x)", None),  # an attribute of something else
        ("    # add_kernel[grid](x) is commented out", None),
        ("    my_add_kernel[grid](x)", None),
        ("    y = dispatch(h)", None),
    ],
)
def test_launched_in(line: str, kernel: str | None) -> None:
    assert launched_in(line, ["add_kernel", "masked_scale_kernel"]) == kernel


def test_short_guard_keeps_the_comparison_and_the_source() -> None:
    long = "(1 + ((" + "x.size()[0] | " * 20 + "0))) == 128  # k[(1,)](x, BLOCK=next_power_of_2(n))  # m.py:13 in f"
    assert short_guard(long) == "<expression over x.size()[0]> == 128  # k[(1,)](x, BLOCK=next_power_of_2(n))"
    assert short_guard("tensor 'x' size mismatch at index 0. expected 40, actual 100") == (
        "tensor 'x' size mismatch at index 0. expected 40, actual 100"
    )


def test_short_guard_says_identity_checks_in_words() -> None:
    """A type check read `<expression over sizes>` (a Hugging Face model's recompiles): it is long, holds an
    object id, and is about no size."""
    type_guard = ("___check_type_id(args[0], 94318570875344), type=<class 'transformers.models.llama.modeling_llama."
                  "LlamaForCausalLM'>  # func_name = f(x)  # transformers/utils/deprecation.py:131 in wrapped_func "
                  "(HINT: type LlamaForCausalLM)")
    assert short_guard(type_guard) == "type(args[0]) is LlamaForCausalLM  # func_name = f(x)"
    assert short_guard("___check_obj_id(L['fn'], 140), type=<class 'function'>  # y = fn(x)  # m.py:3 in f") == (
        "L['fn'] is <the function compiled for>  # y = fn(x)")
    long = "L['self'].config.a_rather_long_attribute_name.and_another_long_attribute_name == 'a long string value'"
    assert short_guard(long) == long[:79].rstrip() + "…"


def test_short_guard_keeps_dynamos_own_words_where_it_names_no_guard() -> None:
    # torch 2.13, two threads compiling one model (a TORCH_TRACE's recompile_reasons): was "<expression over sizes>"
    text = ("Unexpected recompilation: runtime guards failed even though they passed during recompilation-reason "
            "analysis. Please open an issue with a minimal repro: https://github.com/pytorch/pytorch")
    assert short_guard(text) == ("Unexpected recompilation: runtime guards failed even though they passed during "
                                 "recompilation-reason analysis")


def test_a_disable_break_claims_only_the_launches_inside_its_disabled_function() -> None:
    """flash-linear-attention 0.4's GatedDeltaNet: fla-core's disabled layer_norm_gated_fwd and the layer's disabled
    chunk_gated_delta_rule are both called from the user's one line, and each break claimed the other's kernels
    (the advice for layer_norm_gated_fwd_kernel said wrap_triton refuses chunk_fwd_kernel_o, ...)."""
    from tritoninspect.analyse.breaks import analyse_graph_breaks
    from tritoninspect.model.records import BreakRecord, KernelRecord, LaunchRecord

    def brk(cid: str, fn: str, library: str) -> BreakRecord:
        return BreakRecord(cid, f"Skip calling function `<function {fn} at 0x7f00ab>` since it was wrapped with "
                           "`torch.compiler.disable`", "m.py", 13, user_stack=("m.py:13 in forward",),
                           headline="Skip calling `torch.compiler.disable()`d function", library_frame=library)

    def launch(kernel: str, fn: str) -> LaunchRecord:
        return LaunchRecord("jit", kernel, None, None, False, None, site=("m.py:13 in forward",),
                            disabled=(f"/site-packages/fla/x.py:1 in {fn}",))

    capture = Capture(meta={}, kernels={k: KernelRecord(k, k, "/site-packages/fla/k.py", 1, ("jit",), ()) for k in ("norm", "chunk")},
                      breaks=[brk("0/0", "chunk_gated_delta_rule", "/site-packages/fla/layers/g.py:275 in forward"),
                              brk("1/0", "layer_norm_gated_fwd", "/site-packages/fla/modules/n.py:656 in forward")],
                      launches=[launch("chunk", "chunk_gated_delta_rule"), launch("norm", "layer_norm_gated_fwd")])
    chunk, norm = analyse_graph_breaks(capture)["graph_breaks"]
    assert (chunk.eager_kernels, norm.eager_kernels) == (("chunk",), ("norm",))


def test_kernel_filter_leaves_out_the_breaks_of_other_kernels_from_the_advice(in_repo: Path) -> None:
    # `graph --kernel add_kernel` said "graph break at ... next to scale_kernel": scale_kernel's break, which
    # the whole report says with scale_kernel's eager launches, became a finding of its own.
    from tritoninspect.analyse.advice import advise

    report = report_of("graph_break")
    assert [b.kernel for b in report.graph_breaks] == ["scale_kernel", None]
    narrowed = advise(report.narrowed("add_kernel"))
    assert [a.rule for a in narrowed] == ["graph_breaks"] and "scale_kernel" not in narrowed[0].finding
    whole = [a.finding for a in advise(report) if a.rule == "graph_breaks"]
    assert whole == [narrowed[0].finding]


# --- check_report ---------------------------------------------------------------------------------


def test_check_passes_and_fails_on_breaks(in_repo: Path) -> None:
    assert check_report(report_of("recompile_constexpr"), no_breaks=True) == []
    (failure,) = check_report(report_of("break_disabled_dispatch"), no_breaks=True)
    assert failure.startswith("--no-breaks: 1 graph break: [0/0] samples/break_disabled_dispatch.py:41")
    (two,) = check_report(report_of("graph_break"), no_breaks=True)
    assert two.startswith("--no-breaks: 2 graph breaks: ")


def test_check_max_graphs(in_repo: Path) -> None:
    report = report_of("break_item_grid")
    assert check_report(report, max_graphs=3) == []
    assert check_report(report, max_graphs=2) == ["--max-graphs 2: 3 Dynamo graphs (0/0, 1/0, 1/1)"]
    assert check_report(report_of("add_raw"), max_graphs=0) == ["--max-graphs 0: 1 Dynamo graph (0/0)"]


def test_check_entries(in_repo: Path) -> None:
    report = report_of("break_disabled_dispatch")
    assert check_report(report, entries={"gelu_kernel": "custom_op"}) == [
        "--entry gelu_kernel=custom_op: gelu_kernel entered as eager"
    ]
    assert check_report(report_of("break_item_grid"), entries={"add_kernel": "hop"}) == []
    assert check_report(report, entries={"nope": "hop"}) == [
        "--entry nope=hop: no kernel nope in the report (kernels: gelu_kernel)"
    ]
    with pytest.raises(ValueError, match="unknown entry kind"):
        check_report(report, entries={"gelu_kernel": "eager"})


def test_check_clones_and_fallback_need_aot(in_repo: Path) -> None:
    report = report_of("break_item_grid")  # stage dynamo
    (clones,) = check_report(report, no_clones=["add_kernel"])
    assert "no AOT occurrence" in clones and "--stage aot" in clones
    (fallback,) = check_report(report, no_fallback=True)
    assert "runs after Dynamo" in fallback


def test_check_clones_and_fallback_on_a_full_capture(in_repo: Path) -> None:
    # add_kernel writes out_ptr: the AOT graph clones it, Inductor re-inplaces it, no copy remains.
    report = report_of("add_raw")
    assert check_report(report, no_clones=["add_kernel"]) == []
    # Without the final post-grad graph, only the AOT graph's (pre-re-inplacing) answer is there.
    aot_only = dataclasses.replace(report, kernels=tuple(
        dataclasses.replace(k, occurrences=tuple(dataclasses.replace(o, clones=None) for o in k.occurrences))
        for k in report.kernels))
    (clones,) = check_report(aot_only, no_clones=["add_kernel"])
    assert clones.startswith("--no-clones add_kernel: add_kernel clones out_ptr in the AOT graph")
    # The in-place sample's second launch (into a slice of x) stays cloned after re-inplacing.
    (inplace,) = check_report(report_of("inplace"), no_clones=["add_inplace_kernel"])
    assert "after Inductor's re-inplacing" in inplace and "x_ptr" in inplace
    assert check_report(report, no_fallback=True) == []
    (fallback, *_) = check_report(report_of("inline_asm"), no_fallback=True)
    assert fallback.startswith("--no-fallback: mutation analysis fell back for asm_copy_kernel in 0/0")


def test_check_with_no_condition_is_empty(in_repo: Path) -> None:
    assert check_report(report_of("break_pre_hook")) == []


@pytest.mark.parametrize("text", ["add_kernel", "add_kernel=", "=hop", "add_kernel=eager", "add_kernel=HOP"])
def test_parse_entry_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="KERNEL=KIND"):
        parse_entry(text)


def test_parse_entry() -> None:
    assert parse_entry(" add_kernel = triton_op ") == ("add_kernel", "triton_op")


# --- rendering -------------------------------------------------------------------------------------


def compare_gold(name: str, actual: str) -> None:
    gold = GOLD / name
    if UPDATE_GOLD:
        gold.write_text(actual, encoding="utf-8")
        return
    assert gold.exists(), f"missing {gold}; create it with TRITONINSPECT_UPDATE_GOLD=1"
    assert actual == gold.read_text(encoding="utf-8"), f"{name} differs from its gold file"


def _scrubbed(report: Report) -> Report:
    meta = dataclasses.replace(report.meta, tool_version="<tool_version>", torch="<torch>", triton="<triton>",
                               python="<python>")
    return dataclasses.replace(report, meta=meta)


@pytest.mark.parametrize("name", ["break_pre_hook", "break_item_grid", "break_heuristics_dynamic"])
def test_breaks_gold(name: str, in_repo: Path) -> None:
    compare_gold(f"breaks_{name}.txt", render_breaks(_scrubbed(report_of(name)), color=False) + "\n")


def test_breaks_render_groups_one_place(in_repo: Path) -> None:
    report = report_of("break_pre_hook")
    assert [len(g) for g in break_groups(report)] == [4]
    text = render_breaks(report, color=False)
    assert text.count("hint:") == 1 and "Dynamo logged it 4 times:" in text
    assert "inside triton/runtime/jit.py:" in text and "site-packages" not in text
    assert "Stack variable source attribution" not in text  # kept in JSON and --dump only


def test_a_place_of_several_causes_says_so_in_its_headline(in_repo: Path) -> None:
    """A tiny HF Llama's call line grouped 16 breaks under one headline, one of them another cause."""
    report = report_of("break_pre_hook")
    first, *rest = report.graph_breaks
    other = dataclasses.replace(rest[-1], headline="Missing tp_iternext", reason="Missing tp_iternext")
    text = render_breaks(dataclasses.replace(report, graph_breaks=(first, *rest[:-1], other)), color=False)
    assert f"1. {first.title()} (and 1 other cause, below)" in " ".join(text.split())
    assert "(and " not in render_breaks(report, color=False)


def test_breaks_render_without_breaks_and_with_decompiled_frames(in_repo: Path) -> None:
    report = report_of("recompile_constexpr")
    frame = DecompiledFrame("0/0", "forward", "samples/recompile_constexpr.py", 28,
                            "def forward(self, x):\n    graph_out_0 = __compiled_fn_1(x)\n    return graph_out_0[0]\n")
    text = render_breaks(dataclasses.replace(report, decompiled=(frame,)), color=False)
    assert "No graph breaks." in text
    assert "Decompiled frames (1)" in text and "   graph_out_0 = __compiled_fn_1(x)" in text
    assert "constexpr BLOCK 64 -> 128" in text


def test_shown_reason_drops_the_attribution_and_the_link() -> None:
    reason = "X\n  Explanation: y\n  Developer debug context:\n\n For more details about this graph break, " \
             "please visit: https://x/gb/gb0001.html\n\nStack variable source attribution:\n  Null from a.py"
    assert shown_reason(reason) == "X\n  Explanation: y"


def test_render_check() -> None:
    assert render_check(CheckResult("m.py:Net", ("--no-breaks",), ())) == (
        "ok: 1 condition holds for m.py:Net (--no-breaks)"
    )
    failed = CheckResult("m.py:Net", ("--no-breaks", "--max-graphs 1"), ("--no-breaks: 2", "--max-graphs 1: 3"))
    assert render_check(failed) == "FAIL --no-breaks: 2\nFAIL --max-graphs 1: 3"


def test_render_check_names_the_findings_condition_when_none_was_given() -> None:
    # `check TARGET` alone: the user gave no condition, so "1 condition holds" would count one they never gave.
    assert render_check(CheckResult("r.json", ("no error finding",), ())) == (
        "ok: no error finding for r.json; no other condition given")
    allowed = CheckResult("r.json", ("no error finding (--allow clone_cost)",), ())
    assert render_check(allowed) == "ok: no error finding (--allow clone_cost) for r.json; no other condition given"
    given = CheckResult("r.json", ("--max-graphs 5", "no error finding"), ())
    assert render_check(given) == "ok: 2 conditions hold for r.json (--max-graphs 5, no error finding)"
    assert render_check(CheckResult("r.json", (), ())) == "ok: no condition checked for r.json"


def test_render_suite_entry_without_conditions() -> None:
    entry = EntryResult("e", "m.py:Net", "pyproject.toml", 3, CheckResult("m.py:Net", (), ()), seconds=1.0)
    assert render_suite(SuiteResult("pyproject.toml", (entry,))).splitlines()[0] == "PASS  e (no condition, 1.0 s)"


def test_check_names_files_relative_to_the_folder_it_ran_in(tmp_path: Path) -> None:
    """FAIL lines named `/abs/path/samples/graph_break.py:54` for `check samples/graph_break.py:Net`: a file
    under the folder `check` ran in is named from there, an installed library's from its package, others in full."""
    from tritoninspect.model.report import GraphBreak

    mine = GraphBreak("0/0", "Call to `torch._dynamo.graph_break()`", str(tmp_path / "samples" / "m.py"), 5,
                      headline="Call to `torch._dynamo.graph_break()`",
                      device_probe="/venv/lib/python3.11/site-packages/lib/utils.py:47 in infer_device")
    other = GraphBreak("1/0", "x", "/elsewhere/n.py", 7, headline="x")
    report = dataclasses.replace(report_of("break_disabled_dispatch"), graph_breaks=(mine, other))
    (failure,) = check_report(report, no_breaks=True, cwd=tmp_path)
    assert "[0/0] samples/m.py:5 Call to" in failure and "(after the device probe at lib/utils.py:47 in infer_device)" \
        in failure and "[1/0] /elsewhere/n.py:7 x" in failure, failure
    assert f"[0/0] {tmp_path}/samples/m.py:5" in check_report(report, no_breaks=True)[0]  # the API's default: as held


def test_check_result_json_is_versioned() -> None:
    from tritoninspect import __version__

    data = json.loads(CheckResult("m.py:Net", ("--no-breaks",), ("--no-breaks: 2",)).to_json())
    assert data == {"schema_version": CHECK_SCHEMA_VERSION, "tool": "tritoninspect", "tool_version": __version__,
                    "target": "m.py:Net", "mode": None, "ok": False, "conditions": ["--no-breaks"],
                    "failures": ["--no-breaks: 2"]}


def test_run_checks_keeps_the_order_of_conditions(in_repo: Path) -> None:
    report = report_of("break_disabled_dispatch")
    conditions = {"--max-graphs 9": {"max_graphs": 9}, "--no-breaks": {"no_breaks": True},
                  "--entry gelu_kernel=hop": {"entries": {"gelu_kernel": "hop"}}}
    result = run_checks(report, conditions, target="t.json")
    assert result.conditions == tuple(conditions) and not result.ok
    assert [line.split(":")[0] for line in result.failures] == ["--no-breaks", "--entry gelu_kernel=hop"]


def test_report_round_trips_with_the_new_fields(in_repo: Path) -> None:
    for name in ("break_pre_hook", "break_item_grid"):
        report = report_of(name)
        assert Report.from_json(report.to_json()) == report


# --- the public API stays import-light -------------------------------------------------------------


def test_package_exports_without_importing_torch() -> None:
    code = ("import sys, tritoninspect; f = tritoninspect.check_report; "
            "assert 'torch' not in sys.modules, 'torch imported'; "
            "assert callable(tritoninspect.inspect_module.__call__); print(f.__module__)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=cli_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "tritoninspect.analyse.checks"


# --- the CLI on saved reports (no compiling, no torch) --------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Reports of two break samples, saved as `breaks --json` would write them."""
    out = tmp_path_factory.mktemp("saved")
    cwd = Path.cwd()
    os.chdir(REPO)
    try:
        paths = {}
        for name in ("break_disabled_dispatch", "recompile_constexpr"):
            paths[name] = out / f"{name}.json"
            paths[name].write_text(report_of(name).to_json(), encoding="utf-8")
    finally:
        os.chdir(cwd)
    return paths


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return zygote_run([sys.executable, "-m", "tritoninspect", *args], cwd=REPO, env=cli_env(),
                      capture_output=True, text=True, timeout=120)


def test_check_cli_exit_codes_both_ways(saved: dict[str, Path]) -> None:
    ok = run("check", str(saved["recompile_constexpr"]), "--no-breaks", "--entry", "one_block_kernel=hop")
    assert ok.returncode == ExitCode.OK, ok.stderr
    assert ok.stdout.startswith("ok: 3 conditions hold")
    bad = run("check", str(saved["break_disabled_dispatch"]), "--no-breaks", "--max-graphs", "1",
              "--entry", "gelu_kernel=hop", "--max-graphs", "2")
    assert bad.returncode == ExitCode.FINDINGS, bad.stderr
    lines = bad.stdout.splitlines()
    assert [ln.split(":")[0] for ln in lines] == ["FAIL --no-breaks", "FAIL --entry gelu_kernel=hop"]
    assert "torch" not in bad.stderr


def test_check_cli_json(saved: dict[str, Path]) -> None:
    proc = run("check", str(saved["break_disabled_dispatch"]), "--no-breaks", "--json")
    assert proc.returncode == ExitCode.FINDINGS
    data = json.loads(proc.stdout)
    findings = "no error finding at stage dynamo (the findings of later stages were not looked for)"  # a Dynamo capture
    assert data["ok"] is False and data["conditions"] == ["--no-breaks", findings]
    assert len(data["failures"]) == 1
    assert (data["schema_version"], data["tool"]) == (CHECK_SCHEMA_VERSION, "tritoninspect")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--json", "--allow", "nope"], "no such finding rule"),
        (["--entry", "gelu_kernel"], "expected KERNEL=KIND"),
        (["--no-breaks", "--stage", "dynamo"], "--stage: meant for compiling a target"),
    ],
)
def test_check_cli_usage_errors(saved: dict[str, Path], args: list[str], message: str) -> None:
    proc = run("check", str(saved["break_disabled_dispatch"]), *args)
    assert proc.returncode == ExitCode.USAGE, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_breaks_cli_renders_a_saved_report(saved: dict[str, Path]) -> None:
    proc = run("breaks", str(saved["break_disabled_dispatch"]))
    assert proc.returncode == 0, proc.stderr
    assert "1. Skip calling `torch.compiler.disable()`d function" in proc.stdout
    assert "kernel: gelu_kernel (launched eagerly from this line)" in proc.stdout
    again = run("breaks", str(saved["break_disabled_dispatch"]), "--json")
    assert Report.from_json(again.stdout) == Report.from_json(saved["break_disabled_dispatch"].read_text())


def test_breaks_cli_refuses_capture_options_for_a_saved_report(saved: dict[str, Path]) -> None:
    proc = run("breaks", str(saved["break_disabled_dispatch"]), "--decompile")
    assert proc.returncode == ExitCode.USAGE
    assert "--decompile: meant for compiling a target" in proc.stderr


def test_decompile_without_depyf_is_an_environment_error(tmp_path: Path) -> None:
    """A machine without depyf (the GPU machine): one line, exit 5, before compiling anything."""
    (tmp_path / "depyf.py").write_text("raise ImportError('No module named depyf (test stand-in)')\n")
    env = cli_env(PYTHONPATH=os.pathsep.join([str(tmp_path), str(REPO)]))
    proc = zygote_run([sys.executable, "-m", "tritoninspect", "breaks", "samples/add_raw.py:Net", "--decompile",
                       "--device", "cpu"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == ExitCode.ENVIRONMENT, proc.stderr[-2000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert errors == ["error: --decompile needs depyf, which is not importable here (No module named depyf "
                      "(test stand-in))"]
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_every_break_the_gpu_logged_for_heuristics_under_dynamic_has_a_cause() -> None:
    """torch 2.11 on the H200 logs 17 breaks for break_heuristics_dynamic (compile-only: 3): the
    GB0361 ones, and follow-ons in the frames of Triton's runtime the eager launch went through
    (tests/fixtures/gpu-breaks/, see the README there)."""
    from tritoninspect.analyse.breaks import RUNTIME_FOLLOW_ON, cause_of

    folder = Path(__file__).parent / "fixtures" / "gpu-breaks"
    gpu = json.loads((folder / "break_heuristics_dynamic.json").read_text())
    compile_only = json.loads((folder / "break_heuristics_dynamic.compile-only.json").read_text())
    assert gpu["meta"]["mode"] == "gpu" and compile_only["meta"]["mode"] == "compile-only"
    assert len(gpu["graph_breaks"]) > len(compile_only["graph_breaks"])
    causes = [cause_of(b["headline"], b["reason"], b["library_frame"], b["kernel"]) for b in gpu["graph_breaks"]]
    assert all(causes), [b["headline"] for b, c in zip(gpu["graph_breaks"], causes) if c is None]
    follow_ons = [b for b, c in zip(gpu["graph_breaks"], causes) if c is RUNTIME_FOLLOW_ON]
    # The follow-ons are exactly the breaks compile-only mode does not log.
    assert len(follow_ons) == len(gpu["graph_breaks"]) - len(compile_only["graph_breaks"])
    assert all("triton/" in b["library_frame"] or "polyfills" in b["library_frame"] for b in follow_ons)
    # Not a catch-all: the same break outside Triton's runtime, or with no kernel, has no cause.
    b = follow_ons[0]
    assert cause_of(b["headline"], b["reason"], "/home/me/model.py:3 in f", b["kernel"]) is None
    assert cause_of(b["headline"], b["reason"], b["library_frame"], None) is None


def test_a_constexpr_is_not_the_guarded_value_of_a_size_guard(in_repo: Path) -> None:
    """BLOCK = next_power_of_2(n) equals the old size when n is a power of two; a size-mismatch guard
    is still on the tensor: the hint is automatic dynamic's, and BLOCK is not marked as guarded."""
    from tritoninspect.model.records import RecompileRecord

    capture = load("recompile_constexpr")
    capture.recompiles[0] = RecompileRecord("0/1", "0/0: tensor 'x' size mismatch at index 0. expected 64, actual 100")
    first = build_report(capture).recompiles[0]
    block = next(c for c in first.changes if c.name == "BLOCK")
    assert block.before == "64" and not block.guarded
    assert first.hint and "automatic dynamic" in first.hint and "plain argument" not in first.hint


def test_the_breaks_view_says_whose_change_a_library_break_s_hint_is() -> None:
    """The hint names a change to the code that launches the kernel ("use reset_to_zero"): for a break in an
    installed library's code the view said it as if the code were the user's (newcomer, torchao 0.18 hqq)."""
    from tritoninspect.model.report import GraphBreak
    from tritoninspect.render.breaks import BreaksRenderer

    hint = "use @triton.autotune(reset_to_zero=[...])"
    brk = GraphBreak("0/0", "pre_hook and post_hook are not supported", "m.py", 16, headline="unsupported",
                     hint=hint, library_frame="/venv/site-packages/torchao/mm.py:121 in mm", library="torchao")
    base = report_of("break_disabled_dispatch")
    for library, said in (("torchao", True), (None, False)):
        report = dataclasses.replace(base, graph_breaks=(dataclasses.replace(brk, library=library),))
        text = " ".join(BreaksRenderer().render(report).split())
        assert hint in text
        assert ("the break is in torchao's code (installed library, not yours): the change below is for its "
                "maintainers" in text) is said, text


# --- a break logged again by a restarted attempt ----------------------------------------------------


def _restarted_trace(tmp_path: Path) -> Path:
    """The graph_break trace with its first break logged a second time by attempt 1 of the same compile, as
    Dynamo does when the restart cannot resume (samples/break_pre_hook.py, torch 2.13: `[1/0]`, then
    `[1/0_1]` "Failed to handle graph break gracefully. Skipping the function")."""
    (source,) = (REPO / "tests" / "fixtures" / "traces" / "graph_break").glob("*.log")
    lines = source.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if '"dynamo_graph_break_reason"' in line)
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("\t"))
    again = [lines[start].replace('"attempt": 0', '"attempt": 1')] + [
        line.replace("Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):",
                     "Failed to handle graph break gracefully. Skipping the function and falling back to eager. "
                     "Graph break encountered:") for line in lines[start + 1:end]]
    assert '"attempt": 1' in again[0] and "gracefully" in "".join(again)
    log = tmp_path / "restarted.log"
    log.write_text("".join(lines[:end] + again + lines[end:]))
    return log


def test_a_break_logged_again_by_a_restarted_attempt_shows_torchs_id(tmp_path: Path) -> None:
    """Found by a hostile user: `breaks` listed `[0/0]` twice where the log says `[0/0]` and `[0/0_1]`: the
    second is Dynamo's restarted attempt at the same compile (torch's TraceId, `compile id _ attempt`). Shown as
    torch writes it; the compile id (what graphs, kernels and launches are matched by) stays `0/0`."""
    from tritoninspect.run.traces import one_report
    from tritoninspect.source.parse import parse_source

    report = one_report(parse_source(str(_restarted_trace(tmp_path))))
    first, again = (b for b in report.graph_breaks if b.compile_id == "0/0")
    assert (first.attempt, again.attempt, again.frame_skipped) == (0, 1, True)
    text = render_breaks(report, color=False)
    assert "     [0/0]\n     [0/0_1] · frame skipped" in text, text
    assert json.loads(report.to_json())["graph_breaks"][1]["attempt"] == 1


def _failed_compile(log: Path) -> Path:
    """`log` with its compile 0/0's metrics saying it failed (`fail_type` Unsupported), as torch writes them for
    a frame it skipped after a graph break, and for a model that raised."""
    lines = log.read_text().splitlines(keepends=True)
    i = next(i for i, line in enumerate(lines) if '{"compilation_metrics": {"compile_id": "0/0"' in line)
    assert '"fail_type": null, "fail_reason": null' in lines[i]
    lines[i] = lines[i].replace('"fail_type": null, "fail_reason": null',
                                '"fail_type": "Unsupported", "fail_reason": "Call to `torch._dynamo.graph_break()`"')
    log.write_text("".join(lines))
    return log


def test_a_frame_skipped_after_a_break_is_no_failure_of_the_model(tmp_path: Path) -> None:
    """Found by a hostile user: the trace of samples/break_pre_hook.py (two frames skipped, the run went on) was
    reported as the model failing at [1/0], exit 4, where the live run of the same model exits 0: torch writes a
    skipped frame's compile with fail_type Unsupported. A failed compile whose break skipped no frame still is one."""
    from tritoninspect.run.traces import one_report
    from tritoninspect.source.parse import parse_source

    skipped = one_report(parse_source(str(_failed_compile(_restarted_trace(tmp_path)))))
    assert skipped.failure is None and any(b.frame_skipped for b in skipped.graph_breaks)
    (source,) = (REPO / "tests" / "fixtures" / "traces" / "graph_break").glob("*.log")
    plain = tmp_path / "failed" / "failed.log"
    plain.parent.mkdir()
    plain.write_text(source.read_text())
    failed = one_report(parse_source(str(_failed_compile(plain))))
    assert failed.failure is not None and (failed.failure.compile_id, failed.failure.exc_type) == ("0/0", "Unsupported")


def test_the_capture_records_the_attempt_that_logged_a_break() -> None:
    import logging

    from tritoninspect.capture.recorder import Recorder

    recorder = Recorder("dynamo", compile_only=True)
    for attempt in (0, 1):
        recorder._on_trace(logging.makeLogRecord({
            "metadata": {"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"},
                         "frame_id": 1, "frame_compile_id": 0, "attempt": attempt},
            "payload": f"Graph break in user code at {REPO}/samples/graph_break.py:55\nGraph Break Reason: "
                       f"Call to `torch._dynamo.graph_break()` (attempt {attempt})\n",
        }))
    assert [(b.compile_id, b.attempt) for b in recorder.capture.breaks] == [("1/0", 0), ("1/0", 1)]


def test_a_break_is_tied_to_the_launch_its_call_comes_closest_to_whatever_the_sites_length() -> None:
    """Launch sites keep only their innermost frames, so two launches from one line can keep more or
    fewer outer frames (under pytest-xdist one kept `remote.py:427` and the other not): how close a break
    came is counted from the launch's end. Before, counted from where they met, the break inside the
    second launch's heuristic tied with the first launch, and the first won."""
    from tritoninspect.analyse.breaks import _Frame, _reach
    from tritoninspect.model.report import GraphBreak

    outer, test, fwd, loss = (_Frame("remote.py", 427, "<module>"), _Frame("t.py", 5, "test"),
                              _Frame("m.py", 14, "forward"), _Frame("lib.py", 59, "loss"))
    scale = (outer, test, fwd, loss, _Frame("lib.py", 47, "_scaled"))
    shift = (test, fwd, loss, _Frame("lib.py", 53, "_shifted"))
    stack = ("remote.py:427 in <module>", "t.py:5 in test", "m.py:14 in forward", "lib.py:59 in loss",
             "lib.py:53 in _shifted", "lib.py:33 in <lambda>")
    b = GraphBreak("8/0", "torch.* op returned non-Tensor", "m.py", 14, user_stack=stack)
    assert (_reach(b, False, shift), _reach(b, False, scale)) == (0, -1)
    # A frame Dynamo skipped holds every launch in it: the break at line 10 reaches the launch at 12.
    skipped = GraphBreak("0/0", "r", "m.py", 10, user_stack=("t.py:5 in test", "m.py:10 in forward"), frame_skipped=True)
    assert _reach(skipped, False, (test, _Frame("m.py", 12, "forward"))) == 0
    assert _reach(GraphBreak("0/0", "r", "x.py", 1, user_stack=("x.py:1 in f",)), False, scale) is None
