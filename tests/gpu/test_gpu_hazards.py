"""Issue 24's findings proved on the GPU: each finding that claims a wrong result or a slowdown is
measured here with plain `torch.compile` against eager on the same inputs, and the model following
the finding's action is measured too. The report (the CLI in gpu mode) says what the docstrings say
(the checks of tests/test_hazards_e2e.py). Skipped where torch sees no CUDA GPU (tests/conftest.py).

    TRITONINSPECT_HAZARD_FIGURES=figures.jsonl python -m pytest -q -s tests/gpu/test_gpu_hazards.py

Each measured figure is printed (`FIGURE key: value`) and appended to that file when set.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from _expect import REPO, CliRuns, json_report
from _hazard_expect import (
    CHECKS,
    MODELS,
    errors,
    finding,
    findings,
    inputs,
    load,
    max_diff,
    outputs,
    record_figure,
    timed,
)

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

CUDA = ["--device", "cuda"]
#: Real-library models: Liger's rms_norm (an fp64 scalar cast in the kernel) and its fused linear
#: cross entropy (slices of a loss buffer written chunk by chunk, rows skipped at ignore_index).
REALLIB = {"liger_rms_norm": "tests/reallib/liger_rms_norm.py:Net", "liger_flce": "tests/assets/liger_flce.py:Net"}


#: The CLI runs each test reads (test_report_on_gpu: its own parameters).
NEEDS = {
    "test_autotune_hooks_change_the_result_and_the_actions_restore_it": [
        "hazard_autotune_hooks:Net", "hazard_autotune_hooks:NoPruneNet", "hazard_autotune_hooks:SingleConfigNet"],
    "test_fp64_scalar_is_slower_and_the_cast_restores_eagers_speed": ["hazard_fp64_scalar:Net"],
    "test_aliasing_changes_the_result_and_one_pointer_restores_it": ["hazard_aliasing:Net"],
    "test_view_clone_overread_matches_the_values_and_the_offset_restores_them": [
        "hazard_view_clone:Net", "hazard_view_clone:BaseOffsetNet"],
    "test_clone_cost_is_slower_and_a_fresh_tensor_removes_it": ["hazard_clone_cost:Net", "hazard_clone_cost:FreshNet"],
    "test_liger_rms_norm_fp64_cast": ["liger_rms_norm"],
    "test_liger_fused_linear_cross_entropy": ["liger_flce"],
}


def _wanted(items: list[Any]) -> list[str]:
    """The CLI runs the selected tests of this module read, in a stable order."""
    keys: list[str] = []
    for item in items:
        if item.module is None or item.module.__name__ != __name__:
            continue
        if item.originalname == "test_report_on_gpu":
            keys.append(f"{item.callspec.params['name']}:{item.callspec.params['model']}")
        keys += NEEDS.get(item.originalname, [])
    return list(dict.fromkeys(keys))


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> Any:
    cli = CliRuns(workers=max(2, min(6, (os.cpu_count() or 2) // 2)))
    keys = _wanted(request.session.items)
    for key in keys:
        if key in REALLIB:
            cli.submit(key, ["graph", REALLIB[key], "--json", *CUDA])
        else:
            name, model = key.split(":")
            cli.submit(key, ["graph", f"samples/{name}.py:{model}", "--json", *CUDA])
    yield cli
    _save_reports(cli, keys)
    cli.close()


def _save_reports(cli: CliRuns, keys: list[str]) -> None:
    """Each run's report (or stderr) into $TRITONINSPECT_HAZARD_REPORTS, when set: the GPU's own words."""
    folder = os.environ.get("TRITONINSPECT_HAZARD_REPORTS")
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    for key in keys:
        proc = cli.get(key)
        name = key.replace(":", "_")
        with open(os.path.join(folder, f"{name}.json"), "w", encoding="utf-8") as out:
            out.write(proc.stdout)
        if proc.returncode:
            with open(os.path.join(folder, f"{name}.err"), "w", encoding="utf-8") as out:
                out.write(proc.stderr[-20000:])


def report(runs: CliRuns, key: str) -> dict[str, Any]:
    rep = json_report(runs.get(key))
    assert rep["meta"]["mode"] == "gpu" and rep["failure"] is None, rep["failure"]
    return rep


def compiled_vs_eager(name: str, model: str, *, poison: bool = False, scale: int = 1) -> float:
    """max |compiled - eager| of the model on the GPU, plain torch.compile, compiled and tuned afresh."""
    module = load(name)
    net = getattr(module, model)().cuda()
    eager = outputs(net(*inputs(module, "cuda", scale=scale)))
    compiled = compiled_outputs(net, module, poison=poison, scale=scale)
    return max_diff(eager, compiled)


def compiled_outputs(net: Any, module: Any, *, poison: bool = False, scale: int = 1) -> tuple[Any, ...]:
    """The first call of a fresh compile (Dynamo reset, Inductor's caches off: no autotune result is read
    from an earlier process, so Inductor tunes on this call as a first run does)."""
    import torch
    import torch._inductor.config as inductor_config

    torch._dynamo.reset()
    with inductor_config.patch(force_disable_caches=True):
        compiled_net = torch.compile(net)
        if poison:
            compiled_net(*inputs(module, "cuda", scale=scale))  # compile first: the poison must reach the measured call
            _poison_allocator()
        compiled = outputs(compiled_net(*inputs(module, "cuda", scale=scale)))
    torch.cuda.synchronize()
    return compiled


def _poison_allocator() -> None:
    """Fill freed blocks of the caching allocator with NaN, so a read past a small buffer finds NaN
    (as pytorch/pytorch#192219's reproducer does) instead of whatever happened to be there."""
    import torch

    blocks = [torch.full((128,), float("nan"), device="cuda") for _ in range(4096)]
    del blocks


def test_versions() -> None:
    import torch
    import triton

    record_figure("versions", f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}")


@pytest.mark.parametrize(("name", "model"), [(n, m) for n, ms in MODELS.items() for m in ms])
def test_report_on_gpu(runs: CliRuns, name: str, model: str) -> None:
    CHECKS[name](report(runs, f"{name}:{model}"), model)


def test_autotune_hooks_change_the_result_and_the_actions_restore_it(runs: CliRuns) -> None:
    assert finding(report(runs, "hazard_autotune_hooks:Net"), "autotune_hooks")["severity"] == "error"
    module = load("hazard_autotune_hooks")
    (x,) = inputs(module, "cuda")
    reference = (x * 0.5, (x * 0.5).sum().reshape(1))  # what the kernel computes, by torch alone
    eager = outputs(module.Net().cuda()(*inputs(module, "cuda")))
    compiled = compiled_outputs(module.Net().cuda(), module)
    record_figure("autotune_hooks Net max|eager-reference|", max_diff(eager, reference))
    record_figure("autotune_hooks Net max|compiled-reference|", max_diff(compiled, reference))
    diff = max_diff(eager, compiled)
    record_figure("autotune_hooks Net max|compiled-eager|", diff)
    assert max_diff(eager, reference) < 1e-5
    assert diff > 1e-3
    for model in ("NoPruneNet", "SingleConfigNet"):
        assert errors(report(runs, f"hazard_autotune_hooks:{model}")) == []
        kept = compiled_vs_eager("hazard_autotune_hooks", model)
        record_figure(f"autotune_hooks {model} max|compiled-eager|", kept)
        assert kept < 1e-5


@pytest.mark.timing
def test_fp64_scalar_is_slower_and_the_cast_restores_eagers_speed(runs: CliRuns) -> None:
    import torch

    assert finding(report(runs, "hazard_fp64_scalar:Net"), "fp64_scalar_math")["severity"] == "warning"
    module = load("hazard_fp64_scalar")
    # bf16 in and out, as Liger's swiglu: less memory traffic per element, so the fp64 math shows; large
    # enough (~0.1 ms a launch) that back-to-back calls keep the GPU busy (the timing is the kernel's).
    x = torch.randn(1 << 26, device="cuda", dtype=torch.bfloat16)
    net, cast = module.Net().cuda(), module.CastNet().cuda()
    torch._dynamo.reset()
    compiled, compiled_cast = torch.compile(net), torch.compile(cast)
    t_eager, t_fp64, t_cast = timed(net, x), timed(compiled, x), timed(compiled_cast, x)
    record_figure("fp64_scalar eager ms (fp32)", t_eager)
    record_figure("fp64_scalar compiled ms (fp64 gate)", t_fp64)
    record_figure("fp64_scalar compiled ms (cast to fp32)", t_cast)
    record_figure("fp64_scalar slowdown compiled/cast", t_fp64 / t_cast)
    record_figure("fp64_scalar max|compiled-eager|", max_diff(outputs(compiled(x)), outputs(net(x))))
    record_figure("fp64_scalar cast max|compiled-eager|", max_diff(outputs(compiled_cast(x)), outputs(net(x))))
    # The fp64 kernel is slower than eager's and than the compiled cast one. (The compiled cast one is not
    # held to eager's time: a compiled call's own overhead, ~80 us here, can exceed this kernel's.)
    assert t_fp64 > 1.3 * t_cast
    assert t_fp64 > 1.3 * t_eager


def test_aliasing_changes_the_result_and_one_pointer_restores_it(runs: CliRuns) -> None:
    assert finding(report(runs, "hazard_aliasing:Net"), "aliased_args_split")["severity"] == "error"
    diff = compiled_vs_eager("hazard_aliasing", "Net")
    record_figure("aliasing Net max|compiled-eager|", diff)
    assert diff > 0.5
    kept = compiled_vs_eager("hazard_aliasing", "OnePointerNet")
    record_figure("aliasing OnePointerNet max|compiled-eager|", kept)
    assert kept < 1e-5  # Inductor's sin and eager's differ in the last bit


def test_view_clone_overread_matches_the_values_and_the_offset_restores_them(runs: CliRuns) -> None:
    rep = report(runs, "hazard_view_clone:Net")
    found = bool(findings(rep, "view_clone_overread"))
    diff = compiled_vs_eager("hazard_view_clone", "Net", poison=True)
    record_figure(f"view_clone Net overread found={found} max|compiled-eager|", diff)
    # The finding says the copy reads past its buffer exactly when the values show it.
    assert found is (diff > 1e-3), rep["findings"]
    kept = compiled_vs_eager("hazard_view_clone", "BaseOffsetNet", poison=True)
    record_figure("view_clone BaseOffsetNet max|compiled-eager|", kept)
    assert kept < 1e-5


@pytest.mark.timing
def test_clone_cost_is_slower_and_a_fresh_tensor_removes_it(runs: CliRuns) -> None:
    """Net's copy of its input (from the start to the view's end) and back costs time; FreshNet (the action:
    the kernel writes a fresh tensor, copied into the slice after) has no copy and computes the same."""
    import torch

    costs = findings(report(runs, "hazard_clone_cost:Net"), "clone_cost")
    (cost,) = [x for x in costs if x["kernel"] == "add_one_kernel"]
    assert cost["severity"] == "warning", cost
    record_figure("clone_cost summary", cost["summary"])
    fresh = findings(report(runs, "hazard_clone_cost:FreshNet"), "clone_cost")
    assert fresh and all(f["severity"] == "note" for f in fresh), fresh
    for model in ("Net", "FreshNet"):
        diff = compiled_vs_eager("hazard_clone_cost", model)
        record_figure(f"clone_cost {model} max|compiled-eager|", diff)
        assert diff < 1e-5
    module = load("hazard_clone_cost")
    # 32M floats (128 MB): each pass over the input is ~50 us, well past a compiled call's overhead.
    (x,) = inputs(module, "cuda", scale=1 << 15)
    torch._dynamo.reset()
    net, fresh_net = module.Net().cuda(), module.FreshNet().cuda()
    t_eager = timed(net, x.clone())
    t_net, t_fresh = timed(torch.compile(net), x.clone()), timed(torch.compile(fresh_net), x.clone())
    record_figure("clone_cost eager ms", t_eager)
    record_figure("clone_cost compiled ms (Net: the view's clone and copy back)", t_net)
    record_figure("clone_cost compiled ms (FreshNet)", t_fresh)
    record_figure("clone_cost slowdown Net/FreshNet", t_net / t_fresh)
    assert t_net > 1.15 * t_fresh


def test_liger_rms_norm_fp64_cast(runs: CliRuns) -> None:
    """Liger casts eps and offset to fp32 in the kernel: a note; where that cast is where mutation
    analysis fails (torch 2.11), the cast finding says so and the clones name the fallback."""
    rep = report(runs, "liger_rms_norm")
    notes = findings(rep, "fp64_scalar_math")
    assert notes and all(f["severity"] == "note" and "casts" in f["summary"] for f in notes), notes
    cast = findings(rep, "fp64_cast_breaks_analysis")
    record_figure("liger_rms_norm torch", rep["meta"]["torch"])
    record_figure("liger_rms_norm cast findings", [f["summary"] for f in cast])
    fell_back = any(o["mutation_analysis_fallback"] for k in rep["kernels"] for o in k["occurrences"])
    assert bool(cast) is fell_back
    if fell_back:
        costs = [f for f in findings(rep, "clone_cost") if "mutation analysis fell back" in f["summary"]]
        record_figure("liger_rms_norm clone_cost", [f["summary"] for f in costs])
        assert costs


def test_liger_fused_linear_cross_entropy(runs: CliRuns) -> None:
    """Liger's fused linear cross entropy writes slices of its loss buffer (pytorch/pytorch#192226)."""
    rep = report(runs, "liger_flce")
    found = findings(rep, "view_clone_overread")
    record_figure("liger_flce findings", [(f["rule"], f["severity"], f["summary"]) for f in rep["findings"]
                                          if f["rule"].startswith("view")])
    import sys

    sys.path.insert(0, str(REPO / "tests" / "assets"))
    import torch

    import liger_flce

    net = liger_flce.Net().cuda()
    x, target = (t.cuda() for t in liger_flce.example_inputs())
    eager = net(x, target)
    torch._dynamo.reset()
    compiled_net = torch.compile(net)
    compiled_net(x, target)  # compile first, then poison the allocator for the measured call
    _poison_allocator()
    compiled = compiled_net(x, target)
    diff = max_diff(outputs(eager), outputs(compiled))
    record_figure("liger_flce loss eager, compiled", (float(eager), float(compiled)))
    assert bool(found) is (diff > 1e-3), rep["findings"]
