"""Clones, copies and fusion neighbourhood in gpu mode: the compile-only checks of
tests/test_fusion.py where they hold on a GPU, with Triton kernels around the user kernel.
Skipped where torch sees no CUDA GPU (tests/conftest.py).

    python -m pytest -q tests/gpu/test_gpu_fusion.py     # on the GPU machine, from the repo root
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _expect import REPO, CliRuns, cli_env, json_report, kernel_pointer_params, kernel_stored_params, line_of

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

SAMPLES = ("add_raw", "custom_op", "inplace", "inline_asm")


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=max(2, min(4, (os.cpu_count() or 2) // 2)))
    for name in SAMPLES:
        cli.submit(name, ["graph", f"samples/{name}.py:Net", "--json", "--device", "cuda"])
    cli.submit("softmax_cop", ["graph", "tests/assets/softmax_cop_model.py:Net", "--json", "--device", "cuda"])
    yield cli
    cli.close()


def report(runs: CliRuns, name: str) -> dict[str, Any]:
    rep = json_report(runs.get(name))
    assert rep["meta"]["mode"] == "gpu"
    return rep


def only_kernel(rep: dict[str, Any]) -> dict[str, Any]:
    (kernel,) = rep["kernels"]
    return kernel


def stage(kernel: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [o for o in kernel["occurrences"] if o["stage"] == name]


def output_graph(rep: dict[str, Any]) -> dict[str, Any]:
    (graph,) = [g for g in rep["graphs"] if g["stage"] == "output_code"]
    return graph


def show_fusion(rep: dict[str, Any], tmp_path: Path) -> str:
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(rep))
    proc = subprocess.run([sys.executable, "-m", "tritoninspect", "graph", str(saved), "--show", "fusion"],
                          cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_raw_kernel_between_triton_kernels_on_gpu(runs: CliRuns, tmp_path: Path) -> None:
    rep = report(runs, "add_raw")
    kernel = only_kernel(rep)
    graph = output_graph(rep)
    assert (graph["inductor_kernels"], graph["user_kernels"], graph["extern_calls"]) == (2, 1, 0)
    (launch,) = stage(kernel, "output_code")
    (n,) = launch["neighbourhood"]
    assert n["before"]["name"].startswith("triton_") and n["after"]["name"].startswith("triton_")
    assert n["before"]["ops"] == ["sin"] and n["after"]["ops"] == ["cos", "mul"]
    stored = kernel_stored_params(REPO / "samples" / "add_raw.py", kernel["name"])
    assert [(s["flow"], s["arg"] in stored) for s in n["before"]["shared"]] == [("producer", False)]
    assert [(s["flow"], s["arg"]) for s in n["after"]["shared"]] == [("consumer", a) for a in stored]
    assert n["epilogue_fusion"] in ("off", None)  # None: this torch cannot fuse into user kernels
    text = show_fusion(rep, tmp_path)
    assert "Inductor's kernels: Triton kernels" in text and "► " in text


def test_opaque_op_splits_triton_kernels_on_gpu(runs: CliRuns, tmp_path: Path) -> None:
    rep = report(runs, "custom_op")
    (runtime,) = stage(only_kernel(rep), "runtime")
    (n,) = runtime["neighbourhood"]
    assert n["call"].startswith("torch.ops.tisample_custom_op.add.")
    assert n["before"]["ops"] == ["sin"] and n["after"]["ops"] == ["cos", "mul"]
    assert "compiled as separate kernels around it" in show_fusion(rep, tmp_path)


def test_kernel_named_after_an_opaque_op_lists_only_what_it_fused(runs: CliRuns) -> None:
    """Inductor names the Triton kernel computing the opaque op's input after the op too
    (triton_poi_fused_add_mul_softmax_cop_0, and its comment lists it); it fused add and mul."""
    calls = output_graph(report(runs, "softmax_cop"))["code_calls"]
    assert calls[0]["name"].startswith("triton_poi_fused_add_mul_softmax_cop_"), calls
    assert (calls[0]["ops"], calls[0]["ops_source"]) == (["add", "mul"], "inductor")
    assert [(c["kind"], c["ops"]) for c in calls[1:]] == [("extern", []), ("inductor", ["sin"])]


def test_inplace_clones_on_gpu(runs: CliRuns) -> None:
    rep = report(runs, "inplace")
    kernel = only_kernel(rep)
    written = kernel_stored_params(REPO / "samples" / "inplace.py", kernel["name"])
    whole, view = (o["clones"] for o in stage(kernel, "aot_inference"))
    assert whole["before_reinplace"] == view["before_reinplace"] == written
    assert whole["after_reinplace"] == [] and view["after_reinplace"] == written
    assert view["bytes"] == 32 * 4 and view["copies"]
    assert output_graph(rep)["copies"] >= 1


def test_fallback_clones_on_gpu(runs: CliRuns) -> None:
    rep = report(runs, "inline_asm")
    assert rep["diagnostics"] == []  # the inline asm runs on the GPU
    src = REPO / "samples" / "inline_asm.py"
    (aot,) = stage(only_kernel(rep), "aot_inference")
    clones = aot["clones"]
    assert clones["before_reinplace"] == kernel_pointer_params(src, "asm_copy_kernel")
    assert {a["reason"] for a in clones["arguments"]} == {"assumed"}
    assert clones["fallback_line"] == line_of(src, "y = tl.inline_asm_elementwise(")


def test_epilogue_fused_into_the_user_kernel_when_asked() -> None:
    """torch 2.8+: with epilogue fusion on, Inductor writes cos * 2 inside add_kernel."""
    import torch

    from _expect import load_sample
    from tritoninspect.capture import compat
    from tritoninspect import inspect_module

    if compat.inductor.epilogue_fusion_user_kernels() is None:
        pytest.skip(f"torch {torch.__version__} cannot fuse epilogues into user kernels")
    module = load_sample("add_raw")
    x, w = (t.cuda() for t in module.example_inputs())
    with torch._inductor.config.patch(epilogue_fusion_user_defined_triton_kernel=True):
        rep = inspect_module(module.Net().cuda(), (x, w), device="cuda")
    (kernel,) = rep.kernels
    (launch,) = [o for o in kernel.occurrences if o.stage == "output_code"]
    (n,) = launch.neighbourhood
    assert n.epilogue_fusion == "fused", [(c.name, c.ops) for g in rep.graphs for c in g.code_calls]
