"""Kernel resources per autotune config (`--resources`, `--target`), in compile-only mode.

Pure parts (templates, target parsing, the table) run without compiling a model; a kernel
compiled for sm_90 through Triton's own toolchain takes about a second. The CLI runs are
`--stage dynamo` (no Inductor compile): the HOP node already holds every config.
Expectations come from the samples' sources (tests/_expect.py), never from a report.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch

from _expect import CliRuns, autotune_configs, json_report, load_sample, sample_path
from tritoninspect.capture.resources import LaunchTemplate, hop_template, launch_template, measure
from tritoninspect.capture.session import compile_only, parse_target
from tritoninspect.model.errors import UsageError
from tritoninspect.render._resources import config_label, resource_table
from tritoninspect.render.terminal import TerminalRenderer
from tritoninspect.model.report import Kernel, Report, Resources

CPU = ["--device", "cpu", "--stage", "dynamo", "--resources", "--json"]


# --- pure ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "arch"), [("sm_90", 90), ("sm_90a", 90), ("SM_80", 80), ("100", 100), ("sm120", 120)])
def test_parse_target(text: str, arch: int) -> None:
    assert parse_target(text) == arch


@pytest.mark.parametrize("text", ["hopper", "sm_9", "cuda:90", "gfx942", ""])
def test_parse_target_refuses_what_is_not_a_cuda_architecture(text: str) -> None:
    with pytest.raises(UsageError, match="--target"):
        parse_target(text)


def test_launch_template_binds_arguments_by_name() -> None:
    kernel = load_sample("add_raw").add_kernel
    x = torch.zeros(4)
    template = launch_template(kernel, (x, x, x), {"n": 4, "BLOCK": 16, "grid": (1,), "warmup": False, "num_warps": 2})
    assert template is not None and template.from_launch
    assert template.args == {"x_ptr": torch.float32, "y_ptr": torch.float32, "out_ptr": torch.float32,
                             "n": 4, "BLOCK": 16}
    assert template.configs == [{"num_warps": 2}]
    assert launch_template(kernel, (x,) * 9, {}) is None  # more arguments than parameters


def test_hop_template_takes_every_autotune_config_and_refuses_tma() -> None:
    tuner = load_sample("autotune").scaled_add_kernel
    template = hop_template(tuner, {"n": 256}, {"alpha": 0.5}, {})
    want = autotune_configs(sample_path("autotune"), "scaled_add_kernel")
    assert template is not None and template.kernel is tuner.fn and not template.from_launch
    assert len(template.configs) == len(want)
    for got, expected in zip(template.configs, want):
        assert got.items() >= expected.items()
    assert hop_template(tuner, {}, {}, {"x_ptr": ("stable", ([16],))}) is None


def test_a_config_that_does_not_compile_is_a_problem_not_a_failure() -> None:
    kernel = load_sample("add_raw").add_kernel
    broken = LaunchTemplate(kernel, {"x_ptr": torch.float32}, [{}])  # arguments missing
    with compile_only():
        records, problems = measure({"k": broken}, gpu=False)
    assert records == {}
    ((source, message),) = problems
    assert source == "resources" and message.startswith("add_kernel [as launched]: could not compile")


def test_one_kernel_compiled_for_sm_90_and_sm_80() -> None:
    kernel = load_sample("add_raw").add_kernel
    template = LaunchTemplate(kernel, {"x_ptr": torch.float32, "y_ptr": torch.float32, "out_ptr": torch.float32,
                                       "n": 64, "BLOCK": 16}, [{"num_warps": 2}])
    for arch in (90, 80):
        with compile_only(arch):
            records, problems = measure({"add_raw.add_kernel": template}, gpu=False)
        ((record,),) = records.values()
        assert problems == []
        assert (record.target, record.source) == (f"sm_{arch}", f"compiled for sm_{arch}")
        assert record.num_warps == 2 and record.config == {"num_warps": 2}
        assert record.registers > 0 and record.spills == 0 and record.shared >= 0


def test_config_label_keeps_what_has_no_column() -> None:
    assert config_label({"BLOCK": 16, "num_warps": 2, "num_ctas": 1, "num_stages": 3}) == "BLOCK=16"
    assert config_label({"BLOCK": 16, "num_ctas": 2, "maxnreg": 128}) == "BLOCK=16, num_ctas=2, maxnreg=128"
    assert config_label({}) == "as launched"


def test_the_terminal_shows_a_row_per_config() -> None:
    kernel = Kernel("m.k", "k", None, None, ("autotune", "jit"), ("BLOCK",), resources=(
        Resources({"BLOCK": 16, "num_warps": 2}, "sm_90", "gpu", 30, 1024, 0, 2, 3),
        Resources({"BLOCK": 32, "num_warps": 4}, "sm_90", "gpu", 40, 2048, 6, 4, 3),
    ))
    from tritoninspect.render._console import console_text, make_console

    console = make_console(width=100, color=False)
    console.print(resource_table(kernel))
    lines = [line.split() for line in console_text(console).splitlines() if line.strip()]
    assert lines[0] == ["resources", "gpu", "(sm_90)"]
    assert lines[1] == ["config", "registers", "shared", "spills", "warps", "stages"]
    assert lines[-2:] == [["BLOCK=16", "30", "1024", "B", "0", "2", "3"],
                          ["BLOCK=32", "40", "2048", "B", "6", "4", "3"]]


# --- end to end (CLI, compile-only, --stage dynamo) ------------------------------------------------


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=2)
    cli.submit("autotune", ["graph", "samples/autotune.py:Net", *CPU])
    cli.submit("add_raw", ["graph", "samples/add_raw.py:Net", *CPU])
    cli.submit("add_raw sm_80", ["graph", "samples/add_raw.py:Net", "--target", "sm_80", *CPU])
    yield cli
    cli.close()


def resources(runs: CliRuns, key: str) -> list[dict[str, Any]]:
    report = json_report(runs.get(key))
    assert report["diagnostics"] == []
    (kernel,) = report["kernels"]
    return kernel["resources"]


@pytest.mark.slow
def test_autotune_resources_one_row_per_config(runs: CliRuns) -> None:
    rows = resources(runs, "autotune")
    configs = autotune_configs(sample_path("autotune"), "scaled_add_kernel")
    assert len(rows) == len(configs) == 2
    for row, config in zip(rows, configs):
        assert row["config"].items() >= config.items()
        assert row["num_warps"] == config["num_warps"]
        assert (row["target"], row["source"]) == ("sm_90", "compiled for sm_90")
        assert row["registers"] > 0 and row["spills"] >= 0 and row["shared"] >= 0 and row["num_stages"] >= 1


@pytest.mark.slow
def test_add_raw_resources_as_launched(runs: CliRuns) -> None:
    (row,) = resources(runs, "add_raw")
    assert row["config"] == {}  # no autotune: compiled as the launch gave it
    assert (row["target"], row["source"]) == ("sm_90", "compiled for sm_90")
    assert row["registers"] > 0 and row["num_warps"] >= 1


@pytest.mark.slow
def test_target_picks_the_architecture(runs: CliRuns) -> None:
    report = json_report(runs.get("add_raw sm_80"))
    assert "sm_80" in report["meta"]["device"]
    (row,) = report["kernels"][0]["resources"]
    assert (row["target"], row["source"]) == ("sm_80", "compiled for sm_80")


@pytest.mark.slow
def test_resources_in_the_text_report(runs: CliRuns) -> None:
    report = Report.from_dict(json_report(runs.get("autotune")))
    text = TerminalRenderer(width=100, color=False).render(report)
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "resources  compiled for sm_90")
    assert lines[start + 1].split() == ["config", "registers", "shared", "spills", "warps", "stages"]
    rows = [line.split()[0] for line in lines[start + 3 : start + 5]]
    configs = autotune_configs(sample_path("autotune"), "scaled_add_kernel")
    assert rows == [f"BLOCK={c['BLOCK']}" for c in configs]
    without = dataclasses.replace(report, kernels=tuple(dataclasses.replace(k, resources=()) for k in report.kernels))
    assert "resources" not in TerminalRenderer(width=100, color=False).render(without)
