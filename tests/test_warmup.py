"""The first compile's one-off jobs run in a thread while the target is imported
(tritoninspect/capture/warmup.py, compat.inductor.first_compile_jobs).

Fast: the thread runs each job once, keeps a failing job's error instead of raising it, and is waited
for; a capture in compile-only mode has `triton_key()` computed by the time it compiles, and a capture
that stops before Inductor starts no jobs. The GPU side (the compile pool and Triton's `cuda_utils`) is
tests/gpu/test_gpu_compile_pool.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

from _expect import REPO
from tritoninspect.capture.warmup import Warmup


def test_jobs_run_once_in_another_thread_and_a_failure_is_kept_not_raised() -> None:
    seen: list[str] = []

    def fine() -> None:
        seen.append(threading.current_thread().name)

    def broken() -> None:
        raise OSError("gcc: not found")

    warm = Warmup([broken, fine])
    warm.wait()
    assert seen == ["tritoninspect-warmup"]
    assert warm.failures == ["broken: OSError: gcc: not found"]


def test_wait_returns_only_when_the_jobs_are_done() -> None:
    release = threading.Event()
    done: list[bool] = []
    warm = Warmup([lambda: release.wait(5), lambda: done.append(True)])
    assert not done
    release.set()
    warm.wait()
    assert done == [True]


#: In a fresh process: the mode entered, then whether triton_key() is cached once the mode is ready.
READY = """
import json, sys
from torch._inductor.runtime.triton_compat import triton_key
from tritoninspect.run.pipeline import CaptureOptions, enter_mode
with enter_mode(CaptureOptions(device="cpu", stage=sys.argv[1]), user_dir=None) as mode:
    mode.ready()
    print(json.dumps({"warmup": mode.warmup is not None, "cached": triton_key.cache_info().currsize,
                      "failures": mode.warmup.failures if mode.warmup else []}))
"""


def _ready(stage: str) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", READY, stage], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_compile_only_mode_has_triton_key_hashed_before_the_first_compile() -> None:
    assert _ready("inductor") == {"warmup": True, "cached": 1, "failures": []}


def test_a_capture_that_stops_before_inductor_warms_nothing() -> None:
    assert _ready("dynamo") == {"warmup": False, "cached": 0, "failures": []}


#: In a fresh process: the warm-ups an export starts, for each stage and isolation.
EXPORTS = """
import json, sys
import tritoninspect.capture.warmup as warmup
started = []
start = warmup.start
warmup.start = lambda **kw: started.append(kw) or start(**kw)
from tritoninspect.run.pipeline_export import ExportOptions, export_capture
from tritoninspect.source.spec import parse_spec
export_capture(parse_spec("samples/custom_op.py:Net"), ExportOptions(device="cpu", stage="export"))
print(json.dumps(started))
"""


def test_an_export_that_compiles_in_a_child_or_not_at_all_warms_nothing_here() -> None:
    """`export --stage export` compiles nothing, and the AOTInductor package is built in a child: the
    parent's warm-up would be of no use to it (run/pipeline_export.py)."""
    proc = subprocess.run([sys.executable, "-c", EXPORTS], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
