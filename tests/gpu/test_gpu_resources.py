"""`--resources` on the GPU machine: registers, shared memory and spills read from the kernel
loaded on the GPU, and the same numbers from compile-only mode compiling for that GPU's
architecture on the same machine (same Triton, same target: the same cubin).

    python -m pytest -q -m gpu tests/gpu        # on a machine with a GPU, from the repo root
"""

from __future__ import annotations

from typing import Any

import pytest

from _expect import CliRuns, autotune_configs, json_report, sample_path

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

SAMPLES = ("autotune", "add_raw")
FIELDS = ("registers", "shared", "spills", "num_warps", "num_stages")


def gpu_arch() -> str:
    import torch

    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}"


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=4)
    for name in SAMPLES:
        args = ["graph", f"samples/{name}.py:Net", "--stage", "dynamo", "--resources", "--json"]
        cli.submit(f"{name} gpu", [*args, "--device", "cuda"])
        cli.submit(f"{name} cpu", [*args, "--device", "cpu", "--target", gpu_arch()])
    yield cli
    cli.close()


def rows(runs: CliRuns, key: str) -> list[dict[str, Any]]:
    report = json_report(runs.get(key))
    assert report["diagnostics"] == []
    (kernel,) = report["kernels"]
    return kernel["resources"]


def test_autotune_resources_from_the_gpu(runs: CliRuns) -> None:
    got = rows(runs, "autotune gpu")
    configs = autotune_configs(sample_path("autotune"), "scaled_add_kernel")
    assert len(got) == len(configs)
    for row, config in zip(got, configs):
        assert row["config"].items() >= config.items()
        assert (row["source"], row["target"]) == ("gpu", gpu_arch())
        assert row["num_warps"] == config["num_warps"]
        assert row["registers"] > 0 and row["spills"] >= 0 and row["shared"] >= 0


@pytest.mark.parametrize("name", SAMPLES)
def test_compile_only_for_this_gpu_gives_the_same_numbers(runs: CliRuns, name: str) -> None:
    on_gpu, compiled = rows(runs, f"{name} gpu"), rows(runs, f"{name} cpu")
    assert [r["config"] for r in on_gpu] == [r["config"] for r in compiled]
    assert {r["source"] for r in compiled} == {f"compiled for {gpu_arch()}"}
    for a, b in zip(on_gpu, compiled):
        assert {f: a[f] for f in FIELDS} == {f: b[f] for f in FIELDS}
