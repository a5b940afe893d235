"""Facts a `--stage dynamo` run must get right: launches and op nodes tied to their kernels.

Found by the newcomer pass (h20): `breaks samples/autograd_function.py` listed mul_kernel as `eager`
(two launches "outside compiled graphs"), although the backward ran the traced `bwd_body_0`: torch
2.13 runs it through `torch.fx.Interpreter`, whose frames name no graph code file.
"""

from __future__ import annotations

import json

import pytest
from _expect import run_cli


@pytest.mark.slow
def test_an_autograd_function_backward_launch_under_stage_dynamo_is_not_eager() -> None:
    done = run_cli(["breaks", "samples/autograd_function.py:Net", "--backward", "--json"])
    assert done.returncode == 0, done.stderr
    (kernel,) = json.loads(done.stdout)["kernels"]
    assert kernel["name"] == "mul_kernel" and kernel["entries"] == ["hop"]
    runtime = [o for o in kernel["occurrences"] if o["stage"] == "runtime"]
    # One launch in the forward, two in the backward body (its two triton_kernel_wrapper nodes).
    assert [(o["compile_id"], o["launches"]) for o in runtime] == [("0/0", 3)]


@pytest.mark.slow
def test_breaks_runs_a_training_forward_without_its_backward_unless_asked() -> None:
    # The parameters require grad: the forward runs with grad on (Dynamo traces the autograd.Function's
    # backward too), the backward does not, and the header says so. --no-backward: under no_grad.
    done = run_cli(["breaks", "samples/autograd_function.py:Net", "--json"])
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["meta"]["backward"], report["meta"]["grad"]) == (False, True)
    (kernel,) = report["kernels"]
    assert [o["launches"] for o in kernel["occurrences"] if o["stage"] == "runtime"] == [1]
    # The graph Dynamo made is the training one: the backward body traced with the forward.
    dynamo = [g for g in report["graphs"] if g["stage"] == "dynamo"]
    assert any("autograd_function_apply" in g["code"] for g in dynamo), [g["code"] for g in dynamo]
    text = run_cli(["breaks", "samples/autograd_function.py:Net"])
    assert "backward: no (forward with grad on; --backward runs it)" in text.stdout, text.stdout
    done = run_cli(["breaks", "samples/autograd_function.py:Net", "--no-backward", "--json"])
    meta = json.loads(done.stdout)["meta"]
    assert (meta["backward"], meta["grad"]) == (False, False)


@pytest.mark.slow
def test_a_triton_op_call_is_tied_to_its_kernel_when_torchs_scan_misses_it() -> None:
    # `torch.library.wrap_triton(k)` (qualified): torch 2.13's scan names no kernel for the op.
    done = run_cli(["graph", "tests/assets/triton_op_qualified.py:Net", "--stage", "dynamo", "--json"])
    assert done.returncode == 0, done.stderr
    (kernel,) = json.loads(done.stdout)["kernels"]
    assert kernel["name"] == "scale_kernel" and kernel["entries"] == ["triton_op"]
    dynamo = [(o["compile_id"], o["node"], o["custom_op"]) for o in kernel["occurrences"] if o["stage"] == "dynamo"]
    assert dynamo == [("0/0", "scale_default", "tiasset_qualified::scale")]
