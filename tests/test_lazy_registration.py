"""Kernels and ops a library makes on its first call, inside the compiled forward, are what the report
says they are. Found trying torchao 0.18 (`kernel/blockwise_quantization.py` builds its kernels and
registers the custom_op `ao::blockwise_fp8_gemm` under a lock the first time it is called): the launch
inside that op was listed as a raw `hop` launch, the op as hiding no kernel."""

from __future__ import annotations

import pytest
from _expect import json_report, kernels_by_name, run_cli


@pytest.mark.slow
def test_a_launch_inside_a_custom_op_registered_during_the_run_is_the_ops() -> None:
    report = json_report(run_cli(["graph", "tests/assets/lazy_custom_op.py:Net", "--json", "-q"]))
    kernel = kernels_by_name(report)["lazy_scale_kernel"]
    assert kernel["entries"] == ["custom_op"]
    runtime = [(o["custom_op"], o["launches"]) for o in kernel["occurrences"] if o["stage"] == "runtime"]
    assert runtime == [("tilazy::scale", 1)]
    ops = {(o["op"], tuple(o["kernels"])) for o in report["opaque_ops"] if o["stage"] == "dynamo"}
    assert ops == {("tilazy::scale", ("lazy_scale_kernel",))}
    assert any(a["rule"] == "custom_op_hides_kernel" for a in report["advice"]), report["advice"]
