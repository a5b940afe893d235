"""Issue 24's hazard samples end to end in compile-only mode (tier c): the real CLI compiles each
sample and the models following each finding's action, and the report says what the sample's
docstring says; where the interpreter shows it, the compiled result is compared with eager's.

The same checks run in gpu mode, with measured values and timings, in tests/gpu/test_gpu_hazards.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from _expect import REPO, CliRuns, json_report, run_cli
from _hazard_expect import CHECKS, MODELS, inputs, load, max_diff, outputs

pytestmark = pytest.mark.slow

CPU = ["--device", "cpu"]
ASSETS = REPO / "tests" / "assets"


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=2)
    for name, models in MODELS.items():
        for model in models:
            cli.submit(f"{name}:{model}", ["graph", f"samples/{name}.py:{model}", "--json", *CPU])
    yield cli
    cli.close()


CASES = [(name, model) for name, models in MODELS.items() for model in models]


@pytest.mark.parametrize(("name", "model"), CASES)
def test_hazard_sample_report(runs: CliRuns, name: str, model: str) -> None:
    report = json_report(runs.get(f"{name}:{model}"))
    assert report["meta"]["mode"] == "compile-only" and report["failure"] is None
    # Triton's interpreter gets a Python float where the GPU gets an fp32: `gate.to(tl.float32)` cannot run
    # there, so compile-only mode skips CastNet's launch (its graphs and code are still whole).
    allowed = {"interpreter"} if (name, model) == ("hazard_fp64_scalar", "CastNet") else set()
    assert {d["source"] for d in report["diagnostics"] if d["severity"] != "note"} <= allowed
    found = CHECKS[name](report, model)
    if name == "hazard_view_clone" and model == "Net":
        assert found, "torch 2.13 (checked): Inductor's lowering reads past the view's buffer"


def test_check_fails_on_the_samples_errors_and_allow_accepts_them(tmp_path: Any, runs: CliRuns) -> None:
    saved = tmp_path / "aliasing.json"
    saved.write_text(runs.get("hazard_aliasing:Net").stdout, encoding="utf-8")
    bad = run_cli(["check", str(saved)])
    assert bad.returncode == 1 and bad.stdout.startswith("FAIL finding aliased_args_split [0/0]"), bad.stdout
    ok = run_cli(["check", str(saved), "--allow", "aliased_args_split", "--json"])
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_default_text_ranks_the_error_first(runs: CliRuns, tmp_path: Any) -> None:
    saved = tmp_path / "view.json"
    saved.write_text(runs.get("hazard_view_clone:Net").stdout, encoding="utf-8")
    text = run_cli(["graph", str(saved)]).stdout
    findings = text[text.index("Findings, by impact"):]
    assert findings.splitlines()[1].startswith("1. error [view_clone_overread]: row_loss_kernel writes loss_ptr")


def test_html_shows_the_findings_with_their_evidence(runs: CliRuns, tmp_path: Any) -> None:
    saved = tmp_path / "hooks.json"
    saved.write_text(runs.get("hazard_autotune_hooks:Net").stdout, encoding="utf-8")
    page = tmp_path / "hooks.html"
    assert run_cli(["graph", str(saved), "-o", str(page)]).returncode == 0
    html = page.read_text(encoding="utf-8")
    assert '<span class="pill error">error</span><code>autotune_hooks</code>' in html
    assert "Dynamo&#x27;s side table holds a new Autotuner Dynamo built" in html


# --- compiled against eager, in the interpreter -------------------------------------------------------


def compiled_and_eager(name: str, model: str) -> tuple[tuple[Any, ...], tuple[Any, ...], Any]:
    """The model's outputs eagerly and compiled with the recording backend (compile-only mode)."""
    import torch

    from tritoninspect.capture.recorder import Recorder
    from tritoninspect.capture.session import compile_only

    with compile_only():
        module = load(name)
        net = getattr(module, model)()
        eager = outputs(net(*inputs(module, "cpu")))
        recorder = Recorder("inductor", compile_only=True)
        torch._dynamo.reset()
        try:
            with recorder.installed():
                compiled = outputs(torch.compile(net, backend=recorder.backend)(*inputs(module, "cpu")))
        finally:
            torch._dynamo.reset()
    return eager, compiled, recorder.capture


def test_aliasing_compiled_differs_from_eager_and_one_pointer_does_not() -> None:
    eager, compiled, capture = compiled_and_eager("hazard_aliasing", "Net")
    # Eager: sin(x) * 2 + 1 through one buffer; compiled: the shift applied to a separate copy.
    assert max_diff(eager, compiled) > 0.5
    import torch

    torch.testing.assert_close(compiled[0], eager[0] / 2 + 0.5)  # (2s + 1) / 2 + 0.5 == s + 1
    eager, compiled, _ = compiled_and_eager("hazard_aliasing", "OnePointerNet")
    assert max_diff(eager, compiled) < 1e-5  # Inductor's sin and eager's differ in the last bit


def test_view_clone_action_keeps_eagers_result() -> None:
    # The overread reads whatever memory follows a small CPU buffer: not asserted here (GPU test poisons it).
    eager, compiled, _ = compiled_and_eager("hazard_view_clone", "BaseOffsetNet")
    assert max_diff(eager, compiled) < 1e-5


def test_clone_cost_action_keeps_eagers_result() -> None:
    """The copies change no value: Net and FreshNet (the action) compute the same, compiled and eager."""
    eager, compiled, _ = compiled_and_eager("hazard_clone_cost", "Net")
    assert max_diff(eager, compiled) < 1e-5
    fresh_eager, fresh_compiled, capture = compiled_and_eager("hazard_clone_cost", "FreshNet")
    assert max_diff(fresh_eager, fresh_compiled) < 1e-5 and max_diff(eager, fresh_eager) == 0
    final = [n for n in capture.nodes if n.stage == "post_grad_final" and n.inductor_clones is not None]
    assert final and all(not n.inductor_clones for n in final), final


def test_capture_records_the_evidence_it_promises() -> None:
    _, _, capture = compiled_and_eager("hazard_view_clone", "Net")
    hz = capture.hazards
    assert {lay.stage for lay in hz.layouts} >= {"dynamo", "aot_inference", "runtime"}
    assert [o.needed for o in sorted(hz.overreads, key=lambda o: o.needed or 0)] == [32, 48, 64]
    assert sorted(cs.view_offset for cs in hz.clone_sources) == [0, 16, 32, 48]
    assert hz.analysis_times and all(t.seconds > 0 for t in hz.analysis_times)


def test_two_equal_allocations_the_compile_merged_are_not_an_aliasing_error() -> None:
    """Liger's group_norm passes two torch.zeros of one shape (Mean, RSTD): AOTAutograd's CSE makes them
    one tensor and torch clones one apart again, so compiled equals eager. It was reported as an
    aliased_args_split error ("one tensor in what eager passes ... writes are dropped")."""
    import sys

    import torch

    from tritoninspect.analyse import build_report
    from tritoninspect.capture.recorder import Recorder
    from tritoninspect.capture.session import compile_only

    sys.path.insert(0, str(ASSETS))
    try:
        import merged_zeros
    finally:
        sys.path.remove(str(ASSETS))
    x = torch.randn(100, requires_grad=True)  # the training graph: AOTAutograd's CSE runs on the joint graph
    with compile_only():
        eager = merged_zeros.Net()(x)
        recorder = Recorder("inductor", compile_only=True)
        torch._dynamo.reset()
        try:
            with recorder.installed():
                compiled = torch.compile(merged_zeros.Net(), backend=recorder.backend)(x)
        finally:
            torch._dynamo.reset()
    torch.testing.assert_close(compiled, eager)
    aot = [lay for lay in recorder.capture.hazards.layouts if lay.stage == "aot_forward"]
    assert aot
    report = build_report(recorder.capture)
    assert [f.rule for f in report.findings if f.rule == "aliased_args_split"] == []
    if len({a.storage for a in aot[0].args if a.param in ("mean_ptr", "rstd_ptr")}) != 1:
        # torch 2.14's AOTAutograd keeps the two apart (two storages): nothing merged, no copy to explain
        pytest.skip(f"torch {torch.__version__} did not merge the two allocations")
    costs = [f for f in report.findings if f.rule == "clone_cost"]
    assert all("merged by the compile" in f.summary for f in costs), costs


def test_a_view_of_a_new_tensor_is_told_to_be_allocated_with_its_strides() -> None:
    """torchao 0.18's `x.new_empty(...).as_strided(...)` scales: the clone stays because functionalization writes
    the result back into the new tensor (as_strided_scatter). The finding said "read after the launch" and told
    the user to write into a fresh torch.empty, which the code already does; torch.empty_strided removes it."""
    target = str(ASSETS / "view_of_new_kernel.py")
    report = json_report(run_cli(["graph", f"{target}:Net", "--json", *CPU]))
    (found,) = [f for f in report["findings"] if f["rule"] == "clone_cost" and f["kernel"] == "triple_kernel"]
    assert found["severity"] == "warning" and "y_ptr: a view of a new tensor, written back into it" in found["summary"]
    assert "torch.empty_strided(size, stride)" in found["action"] and "read after" not in found["summary"]
    fixed = json_report(run_cli(["graph", f"{target}:StridedNet", "--json", *CPU]))
    (note,) = [f for f in fixed["findings"] if f["rule"] == "clone_cost" and f["kernel"] == "triple_kernel"]
    assert note["severity"] == "note" and "costs no copies" in note["summary"]
