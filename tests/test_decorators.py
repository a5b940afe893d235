"""The decorator line of a kernel (`--detail`, `--kernel NAME`, HTML): the stack as written, with what an
Autotuner keeps that changes how eager launches tune (tier c: one compile in compile-only mode)."""

from __future__ import annotations

import json

from _expect import explain, run_cli


def test_an_autotuners_cache_results_is_on_its_decorator_line() -> None:
    """`@triton.autotune(..., cache_results=True)` (fla-core's Autotuners) read as a plain `@autotune(configs=2,
    key=[n])`: nothing said that eager launches keep their tuning in Triton's disk cache."""
    target = "tests/assets/autotune_cache_results.py:Net"
    detail = run_cli(["graph", target, "--detail", "--device", "cpu", "-q"])
    assert detail.returncode == 0, explain(detail)
    lines = [line.strip() for line in detail.stdout.splitlines() if line.strip().startswith("decorators")]
    assert lines == ["decorators  @autotune(configs=2, key=[n], cache_results=True) @jit",
                     "decorators  @autotune(configs=2, key=[n]) @jit"], lines
    report = json.loads(run_cli(["graph", target, "--json", "--device", "cpu", "--stage", "dynamo"]).stdout)
    assert {k["name"]: k["autotune_cache_results"] for k in report["kernels"]} == {
        "cached_add_kernel": True, "plain_add_kernel": False}
