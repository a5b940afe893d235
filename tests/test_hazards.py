"""The hazard analyses (issue 24's findings 1-5; analyse/hazards/) on saved captures, no compiling.

Fixtures: tests/fixtures/capture_hazard_<sample>.json, real compile-only captures of
samples/hazard_<sample>.py:Net (`python tests/fixtures/make_captures.py --hazards`, torch 2.13 CPU).
Expectations come from the samples' sources (kernel, parameter and line names), never from the
fixtures; variants of a finding's conditions are made by editing the records (what another torch,
or following the action, would record), each test saying which.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
import triton
import triton.language as tl

from _expect import REPO, cli_env, kernel_def, kernel_first_line
from _zygote import run as zygote_run
from tritoninspect.analyse import build_report
from tritoninspect.analyse.hazards import RULE_IDS, aliasing, autotune, clones, find_hazards, scalars, views
from tritoninspect.model.hazard_records import AnalysisTime, KernelSource
from tritoninspect.model.records import Capture, FallbackRecord
from tritoninspect.model.report import Evidence, Finding

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLES = REPO / "samples"


def capture(name: str) -> Capture:
    return Capture.from_json((FIXTURES / f"capture_hazard_{name}.json").read_text(encoding="utf-8"))


def only(findings: list[Finding], rule: str) -> Finding:
    (found,) = [f for f in findings if f.rule == rule]
    return found


def line_in(path: Path, kernel: str, statement: str) -> int:
    """The line of `statement` inside `kernel`'s def (the samples repeat statements across kernels)."""
    fn = kernel_def(path, kernel)
    lines = path.read_text().splitlines()
    (found,) = [n for n in range(fn.lineno, fn.end_lineno + 1) if lines[n - 1].strip().startswith(statement)]
    return found


def texts(finding: Finding) -> str:
    return "\n".join(e.text for e in finding.evidence)


# --- 1. autotune hooks ------------------------------------------------------------------------------


def test_dropped_hooks_on_a_benchmarked_kernel_that_writes_are_an_error() -> None:
    src = SAMPLES / "hazard_autotune_hooks.py"
    f = only(autotune.autotune_hooks(capture("autotune_hooks")), "autotune_hooks")
    assert (f.severity, f.kernel, f.compile_ids) == ("error", "scale_sum_kernel", ("0/0",))
    assert "reset_to_zero and restore_value" in f.summary and "3 configs" in f.summary
    assert "x_ptr and sum_ptr" in f.summary and "(eager Triton zeroes and restores them)" in f.summary
    # The evidence: the decorator as written, what the side table and Inductor kept, what the kernel writes.
    decorator = f.evidence[0]
    assert (decorator.kind, decorator.line) == ("decorator", kernel_first_line(src, "scale_sum_kernel"))
    assert "reset_to_zero=['sum_ptr'], restore_value=['x_ptr']" in decorator.text and "configs=4" in decorator.text
    assert "a new Autotuner Dynamo built: 3 configs, reset_to_zero=[], restore_value=[]" in texts(f)
    assert "Inductor's user_autotune for scale_sum_kernel_0: 3 configs" in texts(f)
    assert "once: early_config_prune=keep_small_blocks: run once by Dynamo at trace time, 3 of 4" in texts(f)
    assert f.action.startswith("Prune the config list yourself instead of prune_configs_by")
    assert "single triton.Config" in f.action and "torch.compiler.disable" in f.action


def test_where_mutation_analysis_failed_only_what_the_source_writes_is_named() -> None:
    """torch's tensors_to_clone lists every tensor argument when mutation analysis falls back: a read-only
    input is not among what the benchmark runs leave behind (a newcomer's torchao model said it was)."""
    cap = capture("autotune_hooks")
    kid = next(k for k, r in cap.kernels.items() if r.name == "scale_sum_kernel")
    source = cap.hazards.kernel_sources[kid]
    store = "    tl.store(x_ptr + offs, x, mask=mask)\n"
    assert store in source.source
    cap.hazards.kernel_sources[kid] = KernelSource(source.def_line, source.source.replace(store, "", 1))
    assert "x_ptr and sum_ptr" in only(autotune.autotune_hooks(cap), "autotune_hooks").summary  # torch's word
    cap.fallbacks = [FallbackRecord("0/0", kid, "CompilationError: at 2:11:")]
    f = only(autotune.autotune_hooks(cap), "autotune_hooks")
    assert f.severity == "error" and "so sum_ptr keeps what the benchmark runs wrote" in f.summary
    assert "x_ptr keep" not in f.summary
    params = [e for e in f.evidence if e.kind == "kernel parameter"]
    assert [e.param for e in params] == ["sum_ptr"] and "mutation analysis failed" in params[0].text


def test_hooks_in_inductors_metadata_are_kept() -> None:
    """What the NoPruneNet variant records: the user's own Autotuner in the side table, and Inductor's
    triton_meta carrying both hooks."""
    cap = capture("autotune_hooks")
    (side,) = cap.hazards.side_table
    user = cap.hazards.user_autotune[side.kernel_id]
    cap.hazards.side_table = [dataclasses.replace(side, users_object=True, autotune=user)]
    cap.output_code = [dataclasses.replace(o, code=o.code.replace(
        "'constants': {}", "'constants': {}, 'restore_value': ('x_ptr',), 'reset_to_zero': ('sum_ptr',)"))
        for o in cap.output_code]
    f = only(autotune.autotune_hooks(cap), "autotune_hooks")
    assert f.severity == "note" and "reset_to_zero kept; restore_value kept" in f.summary
    assert f.versions == autotune.KEPT_VERSIONS and "no release known to keep them" not in f.versions


def test_dropped_hooks_on_a_single_config_are_harmless() -> None:
    """What SingleConfigNet records: one config, so Inductor never benchmarks."""
    cap = capture("autotune_hooks")
    cap.output_code = [dataclasses.replace(o, code=_one_config(o.code)) for o in cap.output_code]
    f = only(autotune.autotune_hooks(cap), "autotune_hooks")
    assert f.severity == "note" and "harmless here: it launches a single config" in f.summary


def _one_config(code: str) -> str:
    start = code.index("    configs=[") + len("    configs=[")
    end = code.index("],\n", start)
    first = code[start:code.index("}", start) + 1]
    return code[:start] + first + code[end:]


# --- 2. fp64 scalars ---------------------------------------------------------------------------------


def test_an_uncast_float_argument_typed_fp64_is_a_warning() -> None:
    src = SAMPLES / "hazard_fp64_scalar.py"
    f = only(scalars.fp64_scalars(capture("fp64_scalar")), "fp64_scalar_math")
    assert (f.severity, f.kernel) == ("warning", "gated_scale_kernel")
    assert "gets gate as fp64 when compiled (fp32 in eager Triton)" in f.summary
    assert "triton_meta signature of gated_scale_kernel_0: 'gate': 'fp64'" in texts(f)
    assert "eager Triton types gate as fp32" in texts(f)
    (use,) = [e for e in f.evidence if e.kind == "kernel source"]
    assert use.line == line_in(src, "gated_scale_kernel", "y = x * tl.sigmoid(x * gate)") and use.param == "gate"
    assert "`gate = gate.to(tl.float32)`" in f.action


def test_a_compile_that_failed_on_the_fp64_math_is_an_error() -> None:
    """flash-linear-attention 0.4's GatedLinearAttention trained: fused_recurrent_bwd_kernel's fp32 state times
    the fp64 scale fails Triton's compile ("Loop-carried variable b_dh ... re-assigned to ... fp64"); the finding
    was a warning about speed and rounding beside a failure it did not explain (casting scale fixed the run)."""
    from tritoninspect.model.report import Failure

    cap = capture("fp64_scalar")
    message = ("at 20:8:\n    b_dh += x * gate\nAssertionError(\"Loop-carried variable b_dh has initial type "
               "<['16', '32'], fp32> but is re-assigned to <['16', '32'], fp64> in loop!\")")
    cap.failure = Failure("kernel_compile", None, "", "CompilationError", message, kernel="gated_scale_kernel")
    f = only(scalars.fp64_scalars(cap), "fp64_scalar_math")
    assert f.severity == "error" and "why Triton refused to compile the kernel (AssertionError(" in f.summary
    assert "`gate = gate.to(tl.float32)`" in f.action
    assert any(e.text.startswith("Triton's compile of gated_scale_kernel failed") for e in f.evidence)
    cap.failure = dataclasses.replace(cap.failure, message="at 3:4:\nCompilationError: something else")
    assert only(scalars.fp64_scalars(cap), "fp64_scalar_math").severity == "warning"


def test_a_cast_before_use_is_a_note() -> None:
    """The CastNet variant's kernel source, as its capture records it."""
    cap = capture("fp64_scalar")
    kid = next(iter(cap.kernels))
    source = cap.hazards.kernel_sources[kid]
    body = source.source.replace("BLOCK: tl.constexpr):\n", "BLOCK: tl.constexpr):\n    gate = gate.to(tl.float32)\n", 1)
    cap.hazards.kernel_sources[kid] = KernelSource(source.def_line, body)
    f = only(scalars.fp64_scalars(cap), "fp64_scalar_math")
    assert f.severity == "note" and "casts it before use, so its math stays fp32" in f.summary
    assert not [x for x in scalars.fp64_scalars(cap) if x.rule == scalars.CAST_RULE]


def test_a_cast_where_mutation_analysis_fails_is_said() -> None:
    """What torch 2.11 records for Liger's `eps.to(tl.float32)`: a CompilationError at the cast,
    `at L:C:` counted from the kernel's def."""
    cap = capture("fp64_scalar")
    kid = next(iter(cap.kernels))
    source = cap.hazards.kernel_sources[kid]
    body = source.source.replace("BLOCK: tl.constexpr):\n", "BLOCK: tl.constexpr):\n    gate = gate.to(tl.float32)\n", 1)
    cap.hazards.kernel_sources[kid] = KernelSource(source.def_line, body)
    cap.fallbacks = [FallbackRecord("0/0", kid, "CompilationError: at 2:11:")]
    f = only(scalars.fp64_scalars(cap), scalars.CAST_RULE)
    assert f.severity == "warning" and "cast of gate (line " in f.summary
    (where,) = [e for e in f.evidence if e.text.startswith("mutation analysis failed here")]
    assert where.line == source.def_line + 1


def _branching(cap: Capture, branches: str, constants: dict[str, object] | None = None) -> int:
    """The fixture's kernel with `branches` (statements, 4-space indented) after its def line; the def's line."""
    kid = next(iter(cap.kernels))
    source = cap.hazards.kernel_sources[kid]
    body = source.source.replace("BLOCK: tl.constexpr):\n", "BLOCK: tl.constexpr):\n" + branches, 1)
    cap.hazards.kernel_sources[kid] = KernelSource(source.def_line, body, constants)
    return source.def_line


def _source_evidence(cap: Capture) -> tuple[Finding, Evidence]:
    f = only(scalars.fp64_scalars(cap), "fp64_scalar_math")
    (use,) = [e for e in f.evidence if e.kind == "kernel source"]
    return f, use


def test_the_cast_cited_is_the_one_on_the_branch_the_launch_took() -> None:
    # Liger's rms_norm casts eps in both branches of `if casting_mode == _CASTING_MODE_NONE:`; a "llama"
    # launch takes the else, and the note cited the if's cast (the branch it did not take).
    cap = capture("fp64_scalar")  # the launch passes BLOCK=1024
    at = _branching(cap, "    if BLOCK == 1:\n        gate = gate.to(tl.float16)\n"
                         "    else:\n        gate = gate.to(tl.float32)\n")
    f, use = _source_evidence(cap)
    assert f.severity == "note" and (use.text, use.line) == ("gate cast before use", at + 4)


def test_a_module_constexpr_decides_the_branch() -> None:
    cap = capture("fp64_scalar")
    at = _branching(cap, "    if BLOCK != _BIG:\n        gate = gate.to(tl.float16)\n"
                         "    else:\n        gate = gate.to(tl.float32)\n", {"_BIG": 1024})
    assert _source_evidence(cap)[1].line == at + 4


def test_an_undecidable_branch_cites_no_line() -> None:
    cap = capture("fp64_scalar")  # _NONE not recorded: which branch ran is unknown
    at = _branching(cap, "    if BLOCK == _NONE:\n        gate = gate.to(tl.float16)\n"
                         "    else:\n        gate = gate.to(tl.float32)\n")
    f, use = _source_evidence(cap)
    assert f.severity == "note" and use.line is None
    assert use.text == (f"gate cast before use, on the branch the launch took (lines {at + 2} and {at + 4}, "
                        "under an `if` whose test this report cannot evaluate)")


def test_an_uncast_use_on_a_branch_not_taken_is_no_warning() -> None:
    # fla's fused_recurrent backward: `scale` in `if STATE_V_FIRST:` was cited with STATE_V_FIRST=False.
    cap = capture("fp64_scalar")
    at = _branching(cap, "    if BLOCK == 1:\n        n = n * gate\n    gate = gate.to(tl.float32)\n")
    f, use = _source_evidence(cap)
    assert f.severity == "note" and use.line == at + 3


def test_the_capture_records_the_module_constexprs_a_kernel_names() -> None:
    from tritoninspect.capture.hazards import kernel_source

    source = kernel_source(_moded_kernel)
    assert source is not None and source.constants == {"_MODE_NONE": -1}


_MODE_NONE = tl.constexpr(-1)


@triton.jit
def _moded_kernel(x_ptr, eps, MODE: tl.constexpr):
    if MODE == _MODE_NONE:
        eps = eps.to(tl.float16)
    tl.store(x_ptr, eps)


# --- 3. aliasing ----------------------------------------------------------------------------------


def test_one_tensor_through_two_written_parameters_split_apart_is_an_error() -> None:
    f = only(aliasing.aliased_args(capture("aliasing")), aliasing.RULE)
    assert (f.severity, f.kernel) == ("error", "scale_then_shift_kernel")
    assert "gets one tensor as scaled_ptr and shifted_ptr" in f.summary and "clones shifted_ptr" in f.summary
    assert "scaled_ptr and shifted_ptr are one tensor in what eager passes" in texts(f)
    assert "the final graph clones shifted_ptr" in texts(f)
    assert "the compiled launch passed scaled_ptr in storage s0, shifted_ptr in storage s1" in texts(f)
    assert "one pointer parameter" in f.action
    assert "pytorch/pytorch#196657" in f.cite


def test_one_written_parameter_of_an_alias_split_apart_is_a_warning() -> None:
    """The analysis finds one parameter written (what a kernel that reads one and writes the other records):
    the result differs only where the kernel reads what it wrote."""
    cap = capture("aliasing")
    cap.nodes = [dataclasses.replace(n, tensors_to_clone=("shifted_ptr",)) if n.tensors_to_clone else n
                 for n in cap.nodes]
    f = only(aliasing.aliased_args(cap), aliasing.RULE)
    assert f.severity == "warning" and "reads through scaled_ptr the values from before its writes" in f.summary


def test_an_alias_split_after_a_fallback_is_a_warning() -> None:
    """Mutation analysis fell back (torch 2.11 on Liger's rms_norm backward, where dY and dX are one tensor):
    what the kernel writes is not known, so the split is not called wrong."""
    cap = capture("aliasing")
    cap.fallbacks = [FallbackRecord("0/0", next(iter(cap.kernels)), "CompilationError: at 2:1:")]
    f = only(aliasing.aliased_args(cap), aliasing.RULE)
    assert f.severity == "warning" and "mutation analysis fell back" in f.summary


def test_aliased_parameters_torch_keeps_together_are_fine() -> None:
    """Re-inplacing removed the clone (what a kernel reading one and writing the other records)."""
    cap = capture("aliasing")
    cap.nodes = [dataclasses.replace(n, inductor_clones={}) if n.stage == "post_grad_final" else n for n in cap.nodes]
    assert [f for f in aliasing.aliased_args(cap) if f.rule == aliasing.RULE] == []


# --- 4. views ---------------------------------------------------------------------------------------


def test_a_view_copy_read_past_its_buffer_is_an_error() -> None:
    f = only(views.view_args(capture("view_clone")), views.RULE)
    assert (f.severity, f.kernel) == ("error", "row_loss_kernel")
    assert "3 of 4 launches" in f.summary and "16" in f.summary
    lowering = [e for e in f.evidence if e.kind == "lowering"]
    # Chunks 2, 3 and 4 (offsets 16, 32, 48) copy 32, 48 and 64 elements of a 16-element buffer.
    assert sorted(int(e.text.split("needing ")[1].split()[0]) for e in lowering) == [32, 48, 64]
    assert all(e.text.endswith("which holds 16") for e in lowering)
    assert "a 16-element view at offset 16 of a 64-element storage" in texts(f)
    assert "whole tensor and the view's offset" in f.action


def test_a_view_copy_inside_its_buffer_is_a_note() -> None:
    """No overread recorded: what a torch whose lowering sizes the copy right records."""
    cap = capture("view_clone")
    cap.hazards.overreads = []
    found = views.view_args(cap)
    assert [f.rule for f in found] == [views.NOTE_RULE]
    # Launches 2-4 (offsets 16, 32, 48) copy 32 + 48 + 64 floats for three 16-float views.
    assert found[0].severity == "note" and "576 B copied for 192 B of views" in found[0].summary


# --- 5. clone cost ----------------------------------------------------------------------------------


def test_clone_cost_per_compile_with_reasons_and_analysis_time() -> None:
    f = only(clones.clone_cost(capture("clone_cost")), clones.RULE)
    assert (f.severity, f.kernel, f.compile_ids) == ("warning", "add_one_kernel", ("0/0",))
    assert "4.0 KB of copies per call in 0/0 (x_ptr: a view of a graph input" in f.summary
    (copy,) = [e for e in f.evidence if e.param == "x_ptr"]
    assert copy.text.startswith("launch 1 of 2 (inference): clones x_ptr (4.0 KB)")
    (timing,) = [e for e in f.evidence if e.text.startswith("mutation analysis ran")]
    assert timing.text == "mutation analysis ran 8 times for add_one_kernel in 0/0" and timing.seconds > 0


def test_clone_cost_counts_each_compile_on_its_own() -> None:
    """A recompile (0/1) with the same launches: two findings of 4.0 KB, never one of 8.0 KB."""
    cap = capture("clone_cost")
    again = lambda cid: lambda r: dataclasses.replace(r, compile_id=cid)  # noqa: E731
    cap.nodes += [again("0/1")(n) for n in cap.nodes]
    cap.output_code += [again("0/1")(o) for o in cap.output_code]
    cap.hazards.layouts += [again("0/1")(x) for x in cap.hazards.layouts]
    cap.hazards.clone_causes += [again("0/1")(x) for x in cap.hazards.clone_causes]
    found = clones.clone_cost(cap)
    assert sorted((f.compile_ids, "4.0 KB" in f.summary) for f in found) == [(("0/0",), True), (("0/1",), True)]


def test_clone_cost_of_symbolic_sizes_says_so() -> None:
    """Copies whose sizes are all symbolic (a dynamic sequence length) read "costs 0 B and more (symbolic
    sizes) of copies"; a known size with symbolic ones beside it keeps its bytes."""
    cap = capture("clone_cost")
    symbolic = lambda n: dataclasses.replace(  # noqa: E731
        n, inductor_clones={p: None for p in n.inductor_clones}) if n.inductor_clones else n
    cap.nodes = [symbolic(n) for n in cap.nodes]
    f = only(clones.clone_cost(cap), clones.RULE)
    assert "costs copies of symbolic size per call in 0/0" in f.summary and "0 B" not in f.summary


def test_clone_cost_never_hands_a_kernel_that_reads_its_output_a_fresh_tensor() -> None:
    """add_one_kernel loads x_ptr before storing to it: a fresh (empty) tensor in x_ptr's place would feed it
    garbage, so the action asks for an output pointer of its own. A kernel that only stores may take one."""
    cap = capture("clone_cost")
    f = only(clones.clone_cost(cap), clones.RULE)
    assert f.action == clones.ACTIONS_READ["view_of_input"] and "empty_like" not in f.action
    kid = next(iter(cap.kernels))
    written_only = cap.hazards.kernel_sources[kid].source.replace("tl.load(x_ptr + offs, mask=mask) + 1", "1.0")
    cap.hazards.kernel_sources[kid] = dataclasses.replace(cap.hazards.kernel_sources[kid], source=written_only)
    assert only(clones.clone_cost(cap), clones.RULE).action == clones.ACTIONS["view_of_input"]


def test_clone_cost_names_a_fallback_first() -> None:
    cap = capture("clone_cost")
    kid = next(iter(cap.kernels))
    cap.fallbacks = [FallbackRecord("0/0", kid, "CompilationError: at 3:4: boom")]
    cap.hazards.analysis_times.append(AnalysisTime("0/0", kid, 0.5, fell_back=True))
    f = only(clones.clone_cost(cap), clones.RULE)
    assert "mutation analysis fell back" in f.summary and f.action.startswith("Remove what mutation analysis")
    (line,) = [e for e in f.evidence if e.text.startswith("mutation analysis fell back")]
    assert line.line == cap.hazards.kernel_sources[kid].def_line + 2


# --- the registry and the outputs, on real captures -------------------------------------------------


@pytest.mark.parametrize(("name", "rule"), [
    ("autotune_hooks", "autotune_hooks"), ("aliasing", "aliased_args_split"), ("view_clone", "view_clone_overread"),
])
def test_each_error_fails_check_unless_allowed(name: str, rule: str, tmp_path: Path) -> None:
    saved = tmp_path / "report.json"
    saved.write_text(build_report(capture(name)).to_json(), encoding="utf-8")

    def check(*args: str) -> subprocess.CompletedProcess[str]:
        return zygote_run([sys.executable, "-m", "tritoninspect", "check", str(saved), *args], cwd=REPO,
                          env=cli_env(), capture_output=True, text=True, timeout=120)

    bad = check()
    assert bad.returncode == 1, bad.stderr
    assert bad.stdout.startswith(f"FAIL finding {rule} [0/0]: ") and f"--allow {rule}" in bad.stdout
    ok = check("--allow", rule)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.startswith(f"ok: no error finding (--allow {rule}) for "), ok.stdout


def test_every_finding_has_a_known_rule_evidence_and_the_torch_it_was_seen_on() -> None:
    for name in ("autotune_hooks", "fp64_scalar", "aliasing", "view_clone", "clone_cost"):
        found, failed = find_hazards(capture(name))
        assert failed == [] and found, name
        for f in found:
            assert f.rule in RULE_IDS and f.evidence and f.torch == "2.13.0+cpu" and f.compile_ids, f
            assert f.cite and f.basis
            assert bool(f.action) is (f.severity != "note"), f
    # The report keeps them worst first, and its advice ranks the errors above everything else.
    report = build_report(capture("view_clone"))
    assert [f.severity for f in report.findings] == sorted((f.severity for f in report.findings),
                                                          key=("error", "warning", "note").index)
    assert report.advice[0].rule == views.RULE
    assert json.loads(report.to_json())["findings"][0]["rule"] == views.RULE


# --- what the GPU said (torch 2.11, H200) -------------------------------------------------------------

GPU = FIXTURES / "gpu-hazards"


@pytest.mark.parametrize("name", ["autotune_hooks", "fp64_scalar", "aliasing", "view_clone", "clone_cost"])
def test_the_stored_gpu_reports_carry_the_same_findings(name: str) -> None:
    """`tritoninspect graph samples/hazard_<name>.py:Net --device cuda --json` on the H200 (torch 2.11,
    tests/fixtures/README.md): the checks of the compile-only end-to-end tests hold there too."""
    from _hazard_expect import CHECKS

    from tritoninspect.model.report import read_report

    path = GPU / f"hazard_{name}_Net.json"
    read_report(path)  # valid under today's schema
    report = json.loads(path.read_text(encoding="utf-8"))
    assert (report["meta"]["mode"], report["meta"]["torch"][:4]) == ("gpu", "2.11")
    found = CHECKS[f"hazard_{name}"](report, "Net")
    if name == "view_clone":
        assert found, "torch 2.11 reads past the view's buffer too"


def test_liger_rms_norm_on_torch_211_names_its_casts_where_the_analysis_fails() -> None:
    report = json.loads((GPU / "liger_rms_norm.json").read_text(encoding="utf-8"))
    casts = {f["kernel"]: f for f in report["findings"] if f["rule"] == scalars.CAST_RULE}
    assert sorted(casts) == ["_rms_norm_backward_kernel", "_rms_norm_forward_kernel"]
    assert "cast of eps (line 125)" in casts["_rms_norm_forward_kernel"]["summary"]
    assert "cast of offset (line 194)" in casts["_rms_norm_backward_kernel"]["summary"]
    notes = [f for f in report["findings"] if f["rule"] == scalars.RULE]
    assert notes and all(f["severity"] == "note" for f in notes)  # the math itself stays fp32
    costs = [f for f in report["findings"] if f["rule"] == clones.RULE and f["severity"] == "warning"]
    assert costs and all("mutation analysis fell back" in f["summary"] for f in costs)
