"""A temp folder with a space in its path: torch's C++ builds split their compiler command on whitespace
(found by a hostile user: `TMPDIR="/tmp/a b" tritoninspect export` failed in the package build with
exit 4, as if the user's code had raised). `export` now builds in a folder without a space, and a CPU
kernel that cannot build under such a cache folder is named with what to set."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from _expect import REPO, cli_env
from tritoninspect.capture import scratch


def test_a_temp_folder_with_a_space_is_replaced_by_one_without(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spaced = tmp_path / "a b"
    spaced.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spaced))
    parent = scratch.spaceless_temp_parent()
    assert parent is not None and not scratch.has_space(parent) and Path(parent).is_dir()
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(plain))
    assert scratch.spaceless_temp_parent() == str(plain)  # no space: the user's own temp folder
    monkeypatch.setattr(tempfile, "tempdir", str(spaced))
    monkeypatch.setattr(scratch, "_FALLBACK_TEMP", (str(tmp_path / "absent"),))
    assert scratch.spaceless_temp_parent() is None  # nowhere else: torch's own error, not a guess
    assert scratch.has_space("/tmp/a\tb") and not scratch.has_space("/tmp/ab")


@pytest.mark.slow
def test_a_cpu_kernel_that_cannot_build_under_a_spaced_cache_says_why(tmp_path: Path) -> None:
    spaced = tmp_path / "sp ace"
    spaced.mkdir()
    env = {k: v for k, v in cli_env().items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-m", "tritoninspect", "graph", "samples/custom_op.py:Net", "--json"],
                          cwd=REPO, env={**env, "TMPDIR": str(spaced)}, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr
    messages = [d["message"] for d in json.loads(done.stdout)["diagnostics"]]
    hint = [m for m in messages if "has a space in its path" in m]
    # Torch's C++ build of the op's CPU kernel fails there; the warning says why and what to set.
    assert hint and "TORCHINDUCTOR_CACHE_DIR" in hint[0] and str(spaced) in hint[0], messages


def test_the_hint_is_for_cpp_builds_under_a_spaced_folder_only() -> None:
    class CppCompileError(Exception):
        pass

    assert "TORCHINDUCTOR_CACHE_DIR" in scratch.space_hint(CppCompileError("x"), "/tmp/a b/torchinductor_u")
    assert scratch.space_hint(CppCompileError("x"), "/tmp/ab/torchinductor_u") == ""
    assert scratch.space_hint(RuntimeError("out of memory"), "/tmp/a b/torchinductor_u") == ""
