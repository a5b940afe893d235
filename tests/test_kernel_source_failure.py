"""A kernel's generated source that does not load is a failure, as on a GPU, not compile-only mode's CPU
load. Found trying torchao 0.18's blockwise fp8 training (`triton_fp8_gemm_1x128_128x128` takes
`out_dtype`, a torch.dtype constexpr): the run said "Inductor's module could not be loaded in compile-only
mode ... the graph ran uncompiled", so the backward never compiled, and its three kernels were then said
to be dropped for want of a use ("use what the kernel writes"), advice that cannot help."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _expect import run_cli

from tritoninspect.capture.compat.inductor import kernel_source_failed


def _raised_at_top_of(path: Path, text: str) -> BaseException:
    path.write_text(text)
    try:
        exec(compile(text, str(path), "exec"), {})
    except Exception as exc:  # noqa: BLE001 - the exception is the fixture
        try:
            raise RuntimeError("InductorError") from exc
        except RuntimeError as wrapped:
            return wrapped
    raise AssertionError("did not raise")


def test_an_error_at_the_top_of_a_kernel_source_is_the_kernels(tmp_path: Path) -> None:
    kernel = "import triton\n\n@triton.jit\ndef k(x_ptr, out_dtype: 'constexpr'):\n    pass\nmeta = torch.bfloat16\n"
    assert kernel_source_failed(_raised_at_top_of(tmp_path / "kernel.py", kernel))
    # The output module itself (it calls async_compile) failing to load is compile-only mode's to say.
    module = "async_compile = None\n# @triton.jit kernels are inside strings here\nfrom torch._C import _nothing\n"
    assert not kernel_source_failed(_raised_at_top_of(tmp_path / "module.py", module))
    assert not kernel_source_failed(ValueError("no traceback"))


@pytest.mark.slow
def test_a_kernel_source_that_does_not_load_fails_the_capture() -> None:
    done = run_cli(["graph", "tests/assets/dtype_constexpr_arg.py:Net", "--json", "-q"])
    assert done.returncode == 4, done.stderr
    report = json.loads(done.stdout)
    failure = report["failure"]
    assert (failure["stage"], failure["exc_type"], failure["message"]) == (
        "inductor", "NameError", "name 'torch' is not defined")
    assert not any("ran uncompiled" in d["message"] for d in report["diagnostics"])
