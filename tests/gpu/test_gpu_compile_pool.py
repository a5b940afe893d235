"""On a GPU: a capture starts Inductor's compile-worker pool before importing the target, as torch's own
`inductor` backend does at its first call (tritoninspect/capture/compat/inductor.py `warm_compile_workers`),
in the warm-up thread that also builds Triton's driver helper (tritoninspect/capture/warmup.py).

    python -m pytest -q -m gpu tests/gpu/test_gpu_compile_pool.py     # on a machine with a GPU
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from _expect import REPO

pytestmark = pytest.mark.gpu

#: In a fresh process: how many compile pools exist once the mode is entered, before any compile.
POOLS = """
import json, sys
import torch._inductor.async_compile as async_compile
from tritoninspect.run.pipeline import CaptureOptions, enter_mode
with enter_mode(CaptureOptions(device="cuda", stage=sys.argv[1]), user_dir=None) as mode:
    mode.ready()
    print(json.dumps({"pools": len(async_compile._pool_set), "threads": async_compile.get_compile_threads(),
                      "failures": mode.warmup.failures if mode.warmup else []}))
"""


@pytest.mark.parametrize(("stage", "warmed"), [("inductor", True), ("dynamo", False)])
def test_the_compile_pool_is_started_before_the_target_is_imported(stage: str, warmed: bool) -> None:
    proc = subprocess.run([sys.executable, "-c", POOLS, stage], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    if seen["threads"] <= 1:
        pytest.skip("one compile thread here: Inductor makes no pool")
    assert seen["pools"] == (1 if warmed else 0), seen
    assert seen["failures"] == [], seen  # the compile pool, triton_key and Triton's cuda_utils
