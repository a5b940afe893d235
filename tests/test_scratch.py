"""A run leaves nothing in the temp dir but torch's own cache folder, as plain torch.compile
does; `diff --bench`'s cold compile uses a scratch cache dir (tritoninspect/capture/scratch.py).

Fast: the scratch directory's scope. Slow (compile-only, each process with a private
TMPDIR and Triton cache): a CLI capture, a capture through the Python API after torch made
its own cache dir, and a CLI capture interrupted (SIGINT) while Inductor compiles.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _expect import REPO, cli_env, explain, run_cli, sigint_as_from_a_terminal
from tritoninspect.capture.scratch import INDUCTOR_CACHE_ENV, scratch_inductor_cache

TARGET = "samples/add_raw.py:Net"


def test_scratch_dir_is_scoped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # re-read TMPDIR
    monkeypatch.delenv(INDUCTOR_CACHE_ENV, raising=False)
    with scratch_inductor_cache() as outer:
        assert outer is not None and os.environ[INDUCTOR_CACHE_ENV] == outer
        assert Path(outer).parent == tmp_path
        Path(outer, "tmpabc", "x.so").parent.mkdir(parents=True)
        with pytest.raises(KeyboardInterrupt), scratch_inductor_cache() as inner:
            assert os.environ[INDUCTOR_CACHE_ENV] == inner != outer
            raise KeyboardInterrupt
        assert os.environ[INDUCTOR_CACHE_ENV] == outer and not Path(inner).exists()  # type: ignore[arg-type]
    assert INDUCTOR_CACHE_ENV not in os.environ and list(tmp_path.iterdir()) == []


def test_a_users_cache_dir_comes_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(INDUCTOR_CACHE_ENV, "/somewhere/mine")
    with scratch_inductor_cache() as scratch:
        assert os.environ[INDUCTOR_CACHE_ENV] == scratch
    assert os.environ[INDUCTOR_CACHE_ENV] == "/somewhere/mine"


def _private_tmp(tmp_path: Path, name: str) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path / name
    tmp.mkdir()
    # Triton's cache too (it lives in $HOME otherwise): the test must not write the user's.
    return tmp, cli_env(TMPDIR=str(tmp), TRITON_CACHE_DIR=str(tmp_path / "triton"), **{INDUCTOR_CACHE_ENV: None})


def _ours(directory: Path) -> list[str]:
    """What is in `directory` besides torch's own cache folder (<tmp>/torchinductor_$USER, where
    plain torch.compile keeps its C++ kernels and precompiled headers), and what in that folder
    only `force_disable_caches` would make (a fresh tmpXXXX directory per compile)."""
    torchs = [p for p in directory.iterdir() if p.name.startswith("torchinductor_")]
    outside = [p for p in directory.iterdir() if p not in torchs]
    fresh = [p for d in torchs for p in d.iterdir() if p.is_dir() and p.name.startswith("tmp")]
    return sorted(str(p.relative_to(directory)) for p in outside + fresh)


@pytest.mark.slow
def test_a_cli_capture_leaves_only_torchs_cache(tmp_path: Path) -> None:
    tmp, env = _private_tmp(tmp_path, "tmp")
    proc = run_cli(["graph", TARGET, "--device", "cpu", "--json"], env=env)
    assert proc.returncode == 0, explain(proc)
    assert _ours(tmp) == []
    assert any(tmp.glob("torchinductor_*/**/*.so")), "the C++ kernels were not cached"


API_RUN = """
import os, sys, tempfile
from pathlib import Path
import torch, torch._dynamo  # torch makes <tmp>/torchinductor_$USER here: torch's, not the capture's
tmp = Path(tempfile.gettempdir())
cache = next(tmp.glob("torchinductor_*"))
before = sorted(str(p) for p in tmp.rglob("*") if cache not in p.parents)
sys.path.insert(0, "samples")
from add_raw import Net, example_inputs
from tritoninspect import inspect_module
report = inspect_module(Net(), example_inputs(), device="cpu")
assert report.kernels, report
after = sorted(str(p) for p in tmp.rglob("*") if cache not in p.parents)
print("new:", sorted(set(after) - set(before)))
"""


@pytest.mark.slow
def test_an_api_capture_leaves_only_torchs_cache(tmp_path: Path) -> None:
    tmp, env = _private_tmp(tmp_path, "tmp")
    proc = subprocess.run([sys.executable, "-c", API_RUN], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, explain(proc)
    assert proc.stdout.strip().splitlines()[-1] == "new: []"
    assert _ours(tmp) == []


@pytest.mark.slow
def test_an_interrupted_capture_leaves_only_torchs_cache(tmp_path: Path) -> None:
    tmp, env = _private_tmp(tmp_path, "tmp")
    proc = subprocess.Popen([sys.executable, "-m", "tritoninspect", "graph", TARGET, "--device", "cpu"],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                preexec_fn=sigint_as_from_a_terminal)
    try:
        # Interrupt once torch has made its cache dir (importing torch._dynamo, before compiling).
        deadline = time.monotonic() + 300
        while not any(tmp.glob("torchinductor_*")) and proc.poll() is None:
            assert time.monotonic() < deadline, "Inductor never started"
            time.sleep(0.1)
        assert proc.poll() is None, "the capture ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0, stderr
    assert _ours(tmp) == [], stderr[-2000:]


@pytest.mark.slow
def test_an_export_timed_out_in_its_aoti_child_leaves_only_torchs_cache(tmp_path: Path) -> None:
    """The AOTInductor child is killed on Ctrl-C or --timeout: what it made in the temp dir (its
    scratch Inductor cache, the package folder, the C++ compiler's files) goes with it."""
    tmp, env = _private_tmp(tmp_path, "tmp")
    proc = subprocess.Popen([sys.executable, "-m", "tritoninspect", "export", "samples/triton_op.py:Net",
                             "--device", "cpu", "--json"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=sigint_as_from_a_terminal)
    try:
        # Wait for the child's scratch Inductor cache beside the parent's, then end the run.
        deadline = time.monotonic() + 300
        while len(list(tmp.rglob("tritoninspect-inductor-*"))) < 2 and proc.poll() is None:
            assert time.monotonic() < deadline, "the AOTInductor child never started"
            time.sleep(0.05)
        assert proc.poll() is None, "the export ended before its child could be stopped"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr[-2000:]
    assert _ours(tmp) == [], stderr[-2000:]
