"""A failed compile or run on the GPU still gives a report (issue 11), as in compile-only mode."""

from __future__ import annotations

import json

import pytest

from _expect import REPO, explain, run_cli
from tritoninspect.model.errors import ExitCode

pytestmark = pytest.mark.gpu
ASSETS = REPO / "tests" / "assets" / "failures"


def _graph(asset: str, *extra: str) -> tuple[int, dict, str]:
    proc = run_cli(["graph", f"tests/assets/failures/{asset}:Net", "--device", "cuda", "--json", *extra], timeout=400)
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def test_shape_mismatch_on_the_gpu() -> None:
    code, report, stderr = _graph("shape_mismatch.py")
    assert code == ExitCode.USER_CODE, stderr
    assert report["meta"]["mode"] == "gpu"
    failure = report["failure"]
    assert (failure["stage"], failure["compile_id"]) == ("dynamo", "0/0")
    assert "[2, 4] X [5, 3]" in failure["message"], failure
    assert [line for line in stderr.splitlines() if line.startswith("error:")], stderr


def test_backward_failure_on_the_gpu_keeps_the_forward() -> None:
    code, report, stderr = _graph("backward_raises.py")
    assert code == ExitCode.USER_CODE, stderr
    assert report["failure"]["stage"] == "backward" and report["failure"]["exc_type"] == "ValueError"
    assert any(g["stage"] == "aot_forward" for g in report["graphs"])


def test_none_pointer_kernel_gives_a_report_either_way() -> None:
    """torch 2.11 fails in Inductor's autotuning (the launcher gets -1 for None); a fixed
    torch runs it. Either way there is a report with the kernel in it."""
    code, report, stderr = _graph("none_pointer.py")
    assert [k["name"] for k in report["kernels"]] == ["bias_add_kernel"], report["kernels"]
    if report["failure"] is None:
        assert code == 0, stderr
        return
    assert code == ExitCode.USER_CODE, stderr
    failure = report["failure"]
    assert failure["stage"] in ("inductor", "run"), failure
    assert failure["exc_type"] == "TypeError" and "launcher()" in failure["message"], failure
    assert any(g["stage"] == "dynamo" for g in report["graphs"])


def test_a_kernel_copy_lacking_a_module_alias_fails_on_the_gpu_too() -> None:
    """The GPU's side of test_failure.py's compile-only test: Inductor's copy of a kernel calling
    `ldv.tanh` lacks `ldv`, and torch.compile fails there with NameError when Triton compiles the copy
    (H200, torch 2.11: CompilationError "NameError('ldv is not defined')" at Inductor's compile)."""
    code, report, stderr = _graph("libdevice_module_alias.py")
    assert code == ExitCode.USER_CODE, stderr
    assert report["meta"]["mode"] == "gpu"
    failure = report["failure"]
    assert failure is not None and failure["stage"] == "kernel_compile", failure
    assert "NameError('ldv is not defined')" in failure["message"], failure
