"""The samples in gpu mode (tier c on the device machine): the same checks as tests/test_samples.py,
with `--device cuda` and `meta.mode == "gpu"`. Skipped where torch sees no CUDA GPU (tests/conftest.py).

    python -m pytest -q tests/gpu        # on a machine with a GPU, from the repo root

Needs only torch, triton, typer and rich (no install: the checkout is put on PYTHONPATH).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from _expect import (
    EAGER_SAMPLES,
    SAMPLES,
    SUBGRAPH_SAMPLES,
    CliRuns,
    check_autotune_grids,
    check_backward,
    check_dynamic_shapes,
    check_graph_break_compiles,
    check_sample,
    check_subgraphs,
    compiled_matches_eager,
    json_report,
    kernels_by_name,
    occurrences,
)

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

CUDA = ["--device", "cuda"]


@pytest.fixture(scope="module")
def runs() -> Any:
    # Each run is one process compiling on the GPU; the host has cores to spare.
    cli = CliRuns(workers=max(2, min(8, (os.cpu_count() or 2) // 2)))
    for name in SAMPLES:
        cli.submit(name, ["graph", f"samples/{name}.py:Net", "--json", *CUDA])
    cli.submit("dynamic_shapes --dynamic", ["graph", "samples/dynamic_shapes.py:Net", "--json", "--dynamic", *CUDA])
    yield cli
    cli.close()


def report(runs: CliRuns, key: str) -> dict[str, Any]:
    return json_report(runs.get(key))


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_report_matches_docstring_on_gpu(runs: CliRuns, name: str) -> None:
    rep = report(runs, name)
    check_sample(name, rep, mode="gpu")
    assert "interpreted" not in rep["meta"]["device"]


@pytest.mark.parametrize("name", SUBGRAPH_SAMPLES)
def test_sub_graph_sample_says_where_its_kernel_runs_on_gpu(runs: CliRuns, name: str) -> None:
    check_subgraphs(name, report(runs, name))


def test_graph_break_kernels_on_both_sides_on_gpu(runs: CliRuns) -> None:
    check_graph_break_compiles(report(runs, "graph_break"))


@pytest.mark.parametrize("name", ["autotune", "heuristics"])
def test_autotune_grid_per_config_on_gpu(runs: CliRuns, name: str) -> None:
    check_autotune_grids(name, report(runs, name))


def test_dynamic_shapes_recompiles_with_symbolic_grid_on_gpu(runs: CliRuns) -> None:
    check_dynamic_shapes(report(runs, "dynamic_shapes"))


def test_dynamic_from_the_start_compiles_once_on_gpu(runs: CliRuns) -> None:
    rep = report(runs, "dynamic_shapes --dynamic")
    assert rep["meta"]["dynamic"] is True
    assert rep["recompiles"] == []
    (kernel,) = rep["kernels"]
    assert {o["compile_id"] for o in occurrences(kernel, "dynamo")} == {"0/0"}
    for o in occurrences(kernel, "dynamo"):
        assert any(isinstance(v, str) for g in o["grid"] for v in g), o["grid"]
    assert sum(o["launches"] for o in occurrences(kernel, "runtime")) == 2  # two calls, one compile
    assert kernels_by_name(rep)["relu_add_kernel"]["entries"] == ["hop"]


def test_autograd_function_backward_graphs_on_gpu(runs: CliRuns) -> None:
    check_backward(report(runs, "autograd_function"))


@pytest.mark.parametrize("name", EAGER_SAMPLES)
def test_compiled_result_equals_eager_on_gpu(name: str) -> None:
    compiled_matches_eager(name, device="cuda", compile_only=False)
