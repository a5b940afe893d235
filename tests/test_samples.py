"""End to end (tier c): every sample through the real CLI in compile-only mode, checked
against what its docstring says tritoninspect should report.

Each CLI run compiles in a fresh interpreter (~25 s), so every run this file needs is
started once, up front, two at a time (`runs` fixture); tests wait for theirs.
Expectations and checks are in tests/_expect.py, shared with tests/gpu/.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from _expect import (
    BREAK_SAMPLES,
    SUBGRAPH_SAMPLES,
    EAGER_SAMPLES,
    EXPECTED,
    SAMPLES,
    CliRuns,
    check_autotune_grids,
    check_backward,
    check_dynamic_shapes,
    check_graph_break_compiles,
    check_sample,
    check_subgraphs,
    compiled_matches_eager,
    explain,
    json_report,
    kernels_by_name,
    occurrences,
    run_cli,
)
from _gpu_agreement import check_agrees_with_gpu_report, stored_gpu_report
from tritoninspect.model import schema

pytestmark = pytest.mark.slow

#: Forced compile-only mode, so the checks hold on a GPU machine too.
CPU = ["--device", "cpu"]


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the --dump and -o run writes."""
    return tmp_path_factory.mktemp("cli")


@pytest.fixture(scope="module")
def runs(out: Path) -> Any:
    cli = CliRuns(workers=2)
    # The quick one first: it has no Inductor stage.
    cli.submit("add_raw --stage dynamo", ["graph", "samples/add_raw.py:Net", "--stage", "dynamo", "--json", *CPU])
    for name in (*SAMPLES, *BREAK_SAMPLES):  # the break samples for the stored-GPU comparison only
        cli.submit(name, ["graph", f"samples/{name}.py:Net", "--json", *CPU])
    # --show, --dump and -o together: they are independent outputs of one report.
    cli.submit(
        "add_raw --show code",
        ["graph", "samples/add_raw.py:Net", "--show", "code", "--dump", str(out / "dump"), "-o", str(out / "r.json"),
         *CPU],
    )
    yield cli
    cli.close()


def report(runs: CliRuns, key: str) -> dict[str, Any]:
    return json_report(runs.get(key))


def test_every_sample_has_an_expectation() -> None:
    assert SAMPLES and sorted(EXPECTED) == SAMPLES


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_report_matches_docstring(runs: CliRuns, name: str) -> None:
    check_sample(name, report(runs, name), mode="compile-only")


@pytest.mark.parametrize("name", SUBGRAPH_SAMPLES)
def test_sub_graph_sample_says_where_its_kernel_runs(runs: CliRuns, name: str) -> None:
    check_subgraphs(name, report(runs, name))


@pytest.mark.parametrize("name", [*SAMPLES, *BREAK_SAMPLES])
def test_sample_agrees_with_the_stored_gpu_report(runs: CliRuns, name: str) -> None:
    """Compile-only mode here says what the GPU run said (tests/fixtures/gpu/), save known version differences."""
    stored = stored_gpu_report(name)  # before waiting for the run: skip at once when there is none
    check_agrees_with_gpu_report(stored, report(runs, name))


@pytest.mark.parametrize("name", ["add_raw --stage dynamo", *SAMPLES, *BREAK_SAMPLES])
def test_sample_report_is_valid_under_the_shipped_schema(runs: CliRuns, name: str) -> None:
    """What a capture writes today reads back: every value within the schema's types and closed sets."""
    schema.validate(report(runs, name), schema.REPORT_SCHEMA, name)


def test_meta_describes_the_run(runs: CliRuns) -> None:
    meta = report(runs, "add_raw")["meta"]
    assert meta["tool"] == "tritoninspect"
    assert meta["inputs"] == ["64:float32", "64:float32"]  # example_inputs(): two randn(64)
    assert "interpreted" in meta["device"]
    assert meta["dynamic"] is None


def test_graph_break_kernels_on_both_sides(runs: CliRuns) -> None:
    check_graph_break_compiles(report(runs, "graph_break"))


@pytest.mark.parametrize("name", ["autotune", "heuristics"])
def test_autotune_grid_per_config(runs: CliRuns, name: str) -> None:
    check_autotune_grids(name, report(runs, name))


def test_dynamic_shapes_recompiles_with_symbolic_grid(runs: CliRuns) -> None:
    check_dynamic_shapes(report(runs, "dynamic_shapes"))


def test_autograd_function_backward_graphs(runs: CliRuns) -> None:
    check_backward(report(runs, "autograd_function"))


def test_stage_dynamo_stops_before_aot(runs: CliRuns) -> None:
    rep = report(runs, "add_raw --stage dynamo")
    assert rep["meta"]["stage"] == "dynamo"
    assert {g["stage"] for g in rep["graphs"]} == {"dynamo"}
    kernel = kernels_by_name(rep)["add_kernel"]
    (node,) = occurrences(kernel, "dynamo")
    assert node["entry"] == "hop"
    assert node["in_output_code"] is None  # no output code was generated
    assert {o["stage"] for o in kernel["occurrences"]} == {"dynamo", "runtime"}
    assert sum(o["launches"] for o in occurrences(kernel, "runtime")) == 1


def test_stage_dynamo_launch_runs_inside_the_graph(runs: CliRuns) -> None:
    kernel = kernels_by_name(report(runs, "add_raw --stage dynamo"))["add_kernel"]
    assert kernel["entries"] == ["hop"]
    assert [(o["entry"], o["compile_id"]) for o in occurrences(kernel, "runtime")] == [("hop", "0/0")]


def test_show_code_marks_the_kernel_launch(runs: CliRuns) -> None:
    proc = runs.get("add_raw --show code")
    assert proc.returncode == 0, explain(proc)
    marked = [line for line in proc.stdout.splitlines() if line.startswith("►")]
    assert any("add_kernel" in line and ".run(" in line for line in marked), proc.stdout[-3000:]
    assert any(line.startswith("== output_code") for line in proc.stdout.splitlines())


def test_dump_writes_each_stage(runs: CliRuns, out: Path) -> None:
    proc = runs.get("add_raw --show code")
    assert proc.returncode == 0, explain(proc)
    dump = out / "dump"
    assert "triton_kernel_wrapper_mutation" in (dump / "0_0_dynamo.py").read_text()
    (code,) = dump.glob("0_0_output_code*.py")
    assert "add_kernel" in code.read_text() and "async_compile.triton(" in code.read_text()
    assert (dump / "graph_breaks.txt").read_text() == "no graph breaks\n"
    dumped = json.loads((dump / "report.json").read_text())
    written = json.loads((out / "r.json").read_text())
    assert dumped == written
    assert kernels_by_name(written)["add_kernel"]["entries"] == ["hop"]


def show_fusion(runs: CliRuns, name: str, out: Path) -> str:
    """`--show fusion` of the sample's saved JSON report (re-rendered: nothing recompiles)."""
    saved = out / f"{name}.json"
    saved.write_text(json.dumps(report(runs, name)))
    proc = run_cli(["graph", str(saved), "--show", "fusion"])
    assert proc.returncode == 0, explain(proc)
    return proc.stdout


def test_show_fusion_raw_kernel_between_inductor_kernels(runs: CliRuns, out: Path) -> None:
    text = show_fusion(runs, "add_raw", out)
    assert "Inductor's kernels: CPU (C++) kernels in compile-only mode" in text
    marked = [line for line in text.splitlines() if line.lstrip().startswith("►")]
    assert len(marked) == 1 and "add_kernel_0" in marked[0] and " user " in marked[0]
    assert re.search(r"before\s+cpp_fused_sin_\d+ \(#0, inductor: sin\): writes buf\d+, which the kernel reads as x_ptr", text)
    assert re.search(r"after\s+cpp_fused_cos_mul_\d+ \(#2, inductor: cos, mul\): reads buf\d+", text)


def test_show_fusion_opaque_op_boundary(runs: CliRuns, out: Path) -> None:
    text = show_fusion(runs, "custom_op", out)
    marked = [line for line in text.splitlines() if line.lstrip().startswith("►")]
    assert len(marked) == 1 and "torch.ops.tisample_custom_op.add." in marked[0] and " extern " in marked[0]
    assert "sin and cos, mul compiled as separate kernels around it" in text


def test_inplace_view_is_cloned_and_copied_back(runs: CliRuns) -> None:
    kernel = kernels_by_name(report(runs, "inplace"))["add_inplace_kernel"]
    whole, view = (o["clones"] for o in occurrences(kernel, "aot_inference"))
    assert (whole["after_reinplace"], view["after_reinplace"]) == ([], ["x_ptr"])
    assert (whole["copies"], len(view["copies"]), view["bytes"]) == ([], 2, 32 * 4)


def test_inline_asm_fallback_clones_every_input(runs: CliRuns, out: Path) -> None:
    rep = report(runs, "inline_asm")
    (aot,) = occurrences(kernels_by_name(rep)["asm_copy_kernel"], "aot_inference")
    assert aot["clones"]["before_reinplace"] == ["x_ptr", "out_ptr"]
    assert "tt.elementwise_inline_asm" in aot["clones"]["fallback"]
    text = show_fusion(runs, "inline_asm", out)
    assert "assumed written (fallback)" in text and "mutation analysis fell back at samples/inline_asm.py:" in text


@pytest.mark.parametrize("name", EAGER_SAMPLES)
def test_compiled_result_equals_eager(name: str) -> None:
    from tritoninspect.capture.session import compile_only

    with compile_only():
        compiled_matches_eager(name, device="cpu", compile_only=True)
