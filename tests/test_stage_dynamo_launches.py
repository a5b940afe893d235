"""Launches from a graph run as is (`--stage dynamo`) are the graph's, backward subgraphs included.

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
    done = run_cli(["breaks", "samples/autograd_function.py:Net", "--json"])
    assert done.returncode == 0, done.stderr
    (kernel,) = json.loads(done.stdout)["kernels"]
    assert kernel["name"] == "mul_kernel" and kernel["entries"] == ["hop"]
    runtime = [o for o in kernel["occurrences"] if o["stage"] == "runtime"]
    # One launch in the forward, two in the backward body (its two triton_kernel_wrapper nodes).
    assert [(o["compile_id"], o["launches"]) for o in runtime] == [("0/0", 3)]
