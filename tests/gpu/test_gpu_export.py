"""`tritoninspect export` in gpu mode (tier c on the device machine): the AOTInductor package of
each entry kind built, loaded and compared with eager on the example inputs.

    python -m pytest -q tests/gpu/test_gpu_export.py   # on a machine with a GPU, from the repo root

scripts/gpu-export runs every export sample the same way and writes a summary.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from _expect import CliRuns, json_report

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

RUNS = {
    "hop": ["samples/add_raw.py:Net", "--strict"],
    "triton_op": ["samples/triton_op.py:Net"],
    "custom_op": ["samples/custom_op.py:Net"],
    "dynamic": ["samples/export_dynamic.py:Net", "--dynamic"],
}


@pytest.fixture(scope="module")
def runs() -> Any:
    cli = CliRuns(workers=max(2, min(4, (os.cpu_count() or 2) // 2)))
    for key, args in RUNS.items():
        cli.submit(key, ["export", *args, "--device", "cuda", "--json"])
    yield cli
    cli.close()


@pytest.mark.parametrize("key", list(RUNS))
def test_package_is_built_loaded_and_matches_eager(runs: Any, key: str) -> None:
    report = json_report(runs.get(key))
    assert report["meta"]["mode"] == "gpu"
    aoti = report["export"]["aoti"]
    assert (aoti["status"], aoti["loaded"], aoti["matches_eager"]) == ("built", True, True), aoti
    (kernel,) = [k for k in report["export"]["kernels"] if k["appears_as"] != "absent"]
    assert kernel["appears_as"] == (key if key != "dynamic" else "triton_op")
    assert kernel["in_aoti_code"] is True
