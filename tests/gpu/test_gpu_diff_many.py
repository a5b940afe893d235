"""`tritoninspect diff` of the three entries of one model on the GPU (tier c on the device machine).

    python -m pytest -q tests/gpu/test_gpu_diff_many.py      # from the repo root, on a machine with a GPU

The raw launch, the triton_op and the custom_op of samples/{add_raw,triton_op,custom_op}.py, captured in
parallel child processes; the summary line of each variant against the raw one. Skipped without CUDA.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from _expect import REPO, cli_env, explain
from tritoninspect.model.diff_report import DiffReport

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

TARGETS = [f"samples/{name}.py:Net" for name in ("add_raw", "triton_op", "custom_op")]


def test_three_entries_on_the_gpu() -> None:
    proc = subprocess.run([sys.executable, "-m", "tritoninspect", "diff", *TARGETS, "--device", "cuda", "--json"],
                          capture_output=True, text=True, env=cli_env(), cwd=REPO, timeout=600)
    assert proc.returncode == 0, explain(proc)
    diff = DiffReport.from_json(proc.stdout)
    assert [(p.b.label, p.b.mode) for p in diff.comparisons] == [("B", "gpu"), ("C", "gpu")]
    assert diff.summary.startswith("B enters add_kernel as triton_op (was hop)")
    assert diff.others[0].summary.startswith("C hides add_kernel from Inductor (custom_op); -1 user kernel launch")
    assert "+1 extern call" in diff.others[0].summary
