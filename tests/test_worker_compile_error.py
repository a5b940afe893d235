"""A kernel Triton refuses inside one of Inductor's compile workers (how a GPU compiles user kernels): the
failure was "SubprocException: An exception occurred in a subprocess:" and the worker's traceback, no kernel
named, and the fp64 finding that explains it stayed a warning (H200, torch 2.11, flash-linear-attention's
GatedLinearAttention trained: tests/fixtures/gpu_worker_compile_error.txt is that run's failure message)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tritoninspect.analyse.failed_kernel import failure_with_kernel
from tritoninspect.analyse.hazards import scalars
from tritoninspect.capture.compat.triton_compile import worker_compile_error
from tritoninspect.capture.failure import Progress, failure_record
from tritoninspect.model.records import Capture
from tritoninspect.model.report import Failure

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GPU_TEXT = (FIXTURES / "gpu_worker_compile_error.txt").read_text(encoding="utf-8")


class SubprocException(Exception):
    """As torch/_inductor/compile_worker/subproc_pool.py raises it: the worker's traceback as its message."""


def test_the_workers_error_is_triton_s_not_its_traceback() -> None:
    text = worker_compile_error(SubprocException(GPU_TEXT))
    assert text is not None and text.startswith("at 172:4:\n    if USE_GK:")
    assert text.endswith("re-assigned to <['16', '32'], fp64> in loop! Please make sure that the type stays consistent.\")")
    assert worker_compile_error(RuntimeError("triton.compiler.errors.CompilationError: no traceback")) is None
    failure = failure_record(SubprocException(GPU_TEXT), Progress())
    assert (failure.stage, failure.exc_type, failure.kernel) == ("kernel_compile", "CompilationError", None)
    assert failure.headline().startswith("AssertionError(\"Loop-carried variable b_dh")


def _fp64_capture(quoted: str) -> Capture:
    capture = Capture.from_json((FIXTURES / "capture_hazard_fp64_scalar.json").read_text(encoding="utf-8"))
    message = f"at 5:4:\n{quoted}\n    ^\nAssertionError(\"Loop-carried variable y has initial type fp32 but is re-assigned to fp64\")"
    capture.failure = Failure("kernel_compile", None, "", "CompilationError", message)
    return capture


def test_the_kernel_is_the_one_whose_source_holds_the_quoted_lines() -> None:
    capture = _fp64_capture("    x = tl.load(x_ptr + offs, mask=mask)\n    y = x * tl.sigmoid(x * gate)")
    assert failure_with_kernel(capture).kernel == "gated_scale_kernel"  # type: ignore[union-attr]
    (finding,) = [f for f in scalars.fp64_scalars(capture) if f.rule == scalars.RULE]
    assert finding.severity == "error" and "why Triton refused to compile the kernel" in finding.summary
    other = _fp64_capture("    b_dgk = tl.sum(b_h * b_dh, 0)")
    assert failure_with_kernel(other).kernel is None  # type: ignore[union-attr]
    assert [f.severity for f in scalars.fp64_scalars(other) if f.rule == scalars.RULE] == ["warning"]
    named = dataclasses.replace(other.failure, kernel="k")  # type: ignore[arg-type]
    other.failure = named
    assert failure_with_kernel(other) is named
