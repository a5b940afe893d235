"""Compile-only mode: what it does around Triton's interpreter.

Fast tests enter `compile_only()` in process; slow ones run test assets through the CLI.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from _expect import REPO, cli_env, json_report, run_cli
from tritoninspect.capture import compat
from tritoninspect.capture.session import compile_only

ASSETS = REPO / "tests" / "assets"


def _load(path: Path) -> Any:
    """Import a test asset as a module (inside compile_only() when it probes the device)."""
    name = f"_ti_asset_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_interpreter_leaves_triton_language_as_it_found_it() -> None:
    """A nested @jit call in the interpreter (tl.max, tl.sum) used to leave triton.language
    patched, so the next real compile failed ("'value' object has no attribute 'dtype'")."""
    import triton.language as tl

    asset = ASSETS / "row_softmax.py"
    before = (tl.core.tensor.__mul__, tl.core.program_id, tl.core.tensor.__add__)
    with compile_only():
        module = _load(asset)
        x = torch.randn(4, 48)
        out = module.Net()(x)
        assert (tl.core.tensor.__mul__, tl.core.program_id, tl.core.tensor.__add__) == before
        compiled = compat.triton_compile.compile_kernel(
            module.row_softmax_kernel, {"x_ptr": torch.float32, "out_ptr": torch.float32, "stride": 48, "n_cols": 48,
                                        "BLOCK": 64}, {})
    torch.testing.assert_close(out, torch.softmax(x, dim=1) * 2)
    assert compiled.metadata.target.arch == 90


@pytest.mark.slow
def test_resources_with_a_cold_triton_cache(tmp_path: Path) -> None:
    proc = run_cli(["graph", "tests/assets/row_softmax.py:Net", "--resources", "--json", "--device", "cpu"],
                   env=cli_env(TRITON_CACHE_DIR=str(tmp_path)))
    report = json_report(proc)
    (kernel,) = report["kernels"]
    (row,) = kernel["resources"]
    assert (row["target"], row["source"]) == ("sm_90", "compiled for sm_90")
    assert row["registers"] and row["num_warps"] == 4
    assert report["diagnostics"] == []
