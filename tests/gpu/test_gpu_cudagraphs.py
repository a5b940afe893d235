"""CUDA graphs (`graph --cudagraphs`, issue 24 item 6) and epilogue fusion (item 7) on a GPU: the CUDA-graph
tree's own counts (recorded, replayed, run without a graph) for samples/cudagraphs.py, the skip reason tied
to the kernel that writes a graph input, and the fix (writing a fresh tensor, or a buffer) removing it.
Skipped where torch sees no CUDA GPU (tests/conftest.py).

    python -m pytest -q tests/gpu/test_gpu_cudagraphs.py     # on the GPU machine, from the repo root
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from _expect import CliRuns, explain, json_report

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

MODELS = ("Net", "FunctionalNet", "BufferNet")


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=max(2, min(3, (os.cpu_count() or 2) // 2)))
    for name in MODELS:
        cli.submit(name, ["graph", f"samples/cudagraphs.py:{name}", "--json", "--device", "cuda", "--cudagraphs"])
    cli.submit("item", ["graph", "tests/assets/cudagraphs_item.py:Net", "--json", "--device", "cuda", "--cudagraphs"])
    cli.submit("item_nopartition", ["graph", "tests/assets/cudagraphs_item_nopartition.py:Net", "--json", "--device",
                                    "cuda", "--cudagraphs"])
    yield cli
    cli.close()


def only_use(runs: CliRuns, name: str) -> dict[str, Any]:
    rep = json_report(runs.get(name))
    assert rep["meta"]["mode"] == "gpu"
    assert rep["meta"]["calls"] == 3
    (use,) = rep["cudagraphs"]
    print(name, use)  # the figures, for the closing note
    assert use["basis"] == "measured"
    return use


def test_kernel_writing_an_input_keeps_the_graph_out_of_cuda_graphs(runs: CliRuns) -> None:
    use = only_use(runs, "Net")
    assert use["cudagraphed"] is False
    assert use["recordings"] == 0 and use["replays"] == 0
    assert use["eager"] + use["warmups"] == 3
    (reason,) = [r for r in use["reasons"] if r["kind"] == "mutated_inputs"]
    assert (reason["kernel"], reason["param"]) == ("scale_inplace_kernel", "x_ptr")
    assert reason["site"].endswith("samples/cudagraphs.py:38")


def test_the_advice_names_the_kernel(runs: CliRuns) -> None:
    rep = json_report(runs.get("Net"))
    (advice,) = [a for a in rep["advice"] if a["rule"] == "cudagraph_skipped"]
    assert advice["kernel"] == "scale_inplace_kernel"


@pytest.mark.parametrize("name", ["FunctionalNet", "BufferNet"])
def test_following_the_action_records_and_replays(runs: CliRuns, name: str) -> None:
    use = only_use(runs, name)
    assert use["cudagraphed"] is True
    assert use["reasons"] == []
    assert use["warmups"] == 1 and use["recordings"] == 1 and use["replays"] == 1
    rep = json_report(runs.get(name))
    assert not [a for a in rep["advice"] if a["rule"] == "cudagraph_skipped"]


def _plain_reduce_overhead_fails() -> bool:
    """Whether plain `torch.compile(mode="reduce-overhead")`, without tritoninspect, fails on the `.item()` model:
    torch's CUDA-graph trees reject the None or float that crosses the partition (pytorch/pytorch#189123)."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("cudagraphs_item", "tests/assets/cudagraphs_item.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x, count = (t.cuda() for t in module.example_inputs())
    torch._dynamo.reset()
    compiled = torch.compile(module.Net(), mode="reduce-overhead")
    try:
        for _ in range(3):
            compiled(x, count)
    except AssertionError:
        return True
    finally:
        torch._dynamo.reset()
    return False


def test_data_dependent_size_is_kept_out_of_cuda_graphs(runs: CliRuns) -> None:
    """With graph partitions (torch's default) the `.item()` runs outside and the rest is recorded; without
    them (an older default) Inductor skips the whole graph for the incompatible op. Where torch itself cannot
    record the partition (torch 2.11 on the H200: plain mode="reduce-overhead" fails too), the report is a
    failure report that says so and gives the workaround."""
    proc = runs.get("item")
    if _plain_reduce_overhead_fails():
        print("item: plain torch.compile(mode='reduce-overhead') fails too; tritoninspect said:", proc.stderr[-600:])
        assert proc.returncode == 4, explain(proc)
        failure = json.loads(proc.stdout)["failure"]
        assert failure["exc_type"] == "AssertionError" and failure["stage"] == "run"
        assert "_allocate_and_copy_recording_inputs" in failure["torch_frame"]
        assert "pytorch/pytorch#189123" in proc.stderr and "graph_partition = False" in proc.stderr
        return
    rep = json_report(proc)
    (use,) = rep["cudagraphs"]
    print("item", use)
    assert use["basis"] == "measured"
    kinds = {(r["when"], r["kind"]) for r in use["reasons"]}
    if use["partitioned"]:
        assert ("partition", "unbacked") in kinds and use["recordings"] >= 1
        assert [r["kernel"] for r in use["reasons"] if r["when"] == "partition"] == ["scale_kernel"]
    else:
        assert use["cudagraphed"] is False and any(k in ("incompatible_op", "unbacked") for _, k in kinds), kinds


def test_the_hints_workaround_runs_without_cuda_graphs(runs: CliRuns) -> None:
    """The failure hint's workaround (graph partitions off) runs the model; the graph is skipped whole for the
    data-dependent op, and the finding says so once."""
    rep = json_report(runs.get("item_nopartition"))
    (use,) = rep["cudagraphs"]
    print("item_nopartition", use)
    assert use["basis"] == "measured" and use["partitioned"] is False and use["cudagraphed"] is False
    assert {r["kind"] for r in use["reasons"]} & {"incompatible_op", "unbacked"}, use["reasons"]
    (finding,) = [f for f in rep["findings"] if f["rule"] == "cudagraph_skipped"]
    assert "aten._local_scalar_dense" in finding["summary"]


def test_epilogue_fusion_says_whether_this_torch_has_it(runs: CliRuns) -> None:
    import torch

    from tritoninspect.capture.compat.epilogues import available

    rep = json_report(runs.get("FunctionalNet"))
    (fusion,) = rep["epilogues"]
    assert fusion["kernel"] == "scale_kernel"
    assert fusion["available"] is available(), torch.__version__


@pytest.fixture(scope="module")
def epilogue_runs() -> Any:
    cli = CliRuns(workers=2)
    for name in ("Net", "TwoStoresNet"):
        cli.submit(name, ["graph", f"samples/epilogues.py:{name}", "--json", "--device", "cuda"])
    yield cli
    cli.close()


def test_epilogue_fused_on_torch_that_has_it(epilogue_runs: CliRuns) -> None:
    from tritoninspect.capture.compat.epilogues import available

    (fusion,) = json_report(epilogue_runs.get("Net"))["epilogues"]
    print("epilogues Net", fusion)
    assert fusion["kernel"] == "add_kernel"
    if not available():  # torch 2.11: the report says so, nothing was considered
        assert fusion["available"] is False and all(n["fused"] is None for n in fusion["neighbours"])
        return
    assert fusion["enabled"] is True and fusion["blockers"] == []
    assert [n["fused"] for n in fusion["neighbours"] if "relu" in n["ops"]] == [True]


def test_epilogue_refused_for_two_stores(epilogue_runs: CliRuns) -> None:
    from tritoninspect.capture.compat.epilogues import available

    (fusion,) = json_report(epilogue_runs.get("TwoStoresNet"))["epilogues"]
    print("epilogues TwoStoresNet", fusion)
    if available():
        assert any("2 tl.store" in b for b in fusion["blockers"])
        assert all(n["fused"] is not True for n in fusion["neighbours"])
