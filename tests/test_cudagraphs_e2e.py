"""CUDA graphs (`graph --cudagraphs`) and epilogue fusion end to end in compile-only mode (tier c): the samples
through the real CLI, each verdict "predicted" from Inductor's own checks and tied to the kernel. The GPU's
measured side is tests/gpu/test_gpu_cudagraphs.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from _expect import REPO, CliRuns, cli_env, json_report
from _zygote import run as zygote_run

pytestmark = pytest.mark.slow

CPU = ["--device", "cpu"]


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=2)
    for name in ("Net", "FunctionalNet"):
        cli.submit(name, ["graph", f"samples/cudagraphs.py:{name}", "--json", "--cudagraphs", *CPU])
    cli.submit("item", ["graph", "tests/assets/cudagraphs_item.py:Net", "--json", "--cudagraphs", *CPU])
    for name in ("Net", "TwoStoresNet"):
        cli.submit(f"epilogues {name}", ["graph", f"samples/epilogues.py:{name}", "--json", *CPU])
    yield cli
    cli.close()


def test_kernel_writing_its_input_is_predicted_to_keep_cuda_graphs_off(runs: CliRuns) -> None:
    rep = json_report(runs.get("Net"))
    assert rep["meta"]["calls"] == 3
    (use,) = rep["cudagraphs"]
    assert (use["basis"], use["cudagraphed"], use["recordings"]) == ("predicted", False, None)
    (reason,) = use["reasons"]
    assert (reason["kind"], reason["kernel"], reason["param"]) == ("mutated_inputs", "scale_inplace_kernel", "x_ptr")
    assert reason["site"].endswith("samples/cudagraphs.py:38")
    (advice,) = [a for a in rep["advice"] if a["rule"] == "cudagraph_skipped"]
    assert advice["kernel"] == "scale_inplace_kernel" and "[predicted]" in advice["finding"]


def test_fresh_output_is_predicted_cudagraphed(runs: CliRuns) -> None:
    rep = json_report(runs.get("FunctionalNet"))
    (use,) = rep["cudagraphs"]
    assert use["cudagraphed"] is True and use["reasons"] == []
    assert not [a for a in rep["advice"] if a["rule"] == "cudagraph_skipped"]


def test_saved_report_shows_the_section(runs: CliRuns, tmp_path: Path) -> None:
    saved = tmp_path / "report.json"
    saved.write_text(json.dumps(json_report(runs.get("Net"))))
    proc = zygote_run([sys.executable, "-m", "tritoninspect", "graph", str(saved)], cwd=REPO, env=cli_env(),
                      capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = " ".join(proc.stdout.split())
    assert "CUDA graphs (reduce-overhead) (1)" in text
    assert "not CUDA-graphed (predicted from Inductor's checks" in text
    assert "scale_inplace_kernel writes x_ptr (graph input arg0_1) in place at samples/cudagraphs.py:38" in text


def test_epilogue_candidate_refused_by_compile_only_backend(runs: CliRuns) -> None:
    rep = json_report(runs.get("epilogues Net"))
    assert "cudagraphs" in rep and rep["cudagraphs"] == []
    (fusion,) = rep["epilogues"]
    assert (fusion["kernel"], fusion["available"], fusion["enabled"], fusion["blockers"]) == ("add_kernel", True, True, [])
    (relu,) = [n for n in fusion["neighbours"] if n["ops"] == ["relu"]]
    assert relu["fused"] is False and "a GPU run decides" in relu["reason"]
    assert not [a for a in rep["advice"] if a["rule"] == "epilogue_refused"]


def test_two_stores_block_any_epilogue(runs: CliRuns) -> None:
    rep = json_report(runs.get("epilogues TwoStoresNet"))
    (fusion,) = rep["epilogues"]
    assert any("2 tl.store calls" in b for b in fusion["blockers"])
    assert all(n["fused"] is None for n in fusion["neighbours"])
    (advice,) = [a for a in rep["advice"] if a["rule"] == "epilogue_refused"]
    assert advice["kernel"] == "add_two_kernel"


def test_data_dependent_size_is_kept_out_and_the_rest_cudagraphed(runs: CliRuns) -> None:
    (use,) = json_report(runs.get("item"))["cudagraphs"]
    assert use["cudagraphed"] is True and use["partitioned"] is True
    (reason,) = use["reasons"]
    assert (reason["when"], reason["kind"], reason["kernel"]) == ("partition", "unbacked", "scale_kernel")
    assert reason["site"].endswith("tests/assets/cudagraphs_item.py:21") and "_local_scalar_dense" in reason["text"]
