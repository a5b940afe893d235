"""SIGTERM ends a run as Ctrl-C does: its capture children die with it (fast)."""

from __future__ import annotations

import subprocess
import sys

from _expect import REPO


def _children(pid: int) -> set[int]:
    """The processes `pid`'s threads started (diff starts each capture from a worker thread)."""
    import glob

    found: set[int] = set()
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(path) as f:
                found.update(int(p) for p in f.read().split())
        except OSError:
            pass
    return found


def test_sigterm_to_diff_kills_its_capture_children() -> None:
    import os
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-m", "tritoninspect", "diff", "samples/add_raw.py:Net",
                             "samples/custom_op.py:Net", "--device", "cpu"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(children := _children(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(children) == 2, "the two captures did not start"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    time.sleep(0.5)
    alive = [pid for pid in children if os.path.exists(f"/proc/{pid}") and
             open(f"/proc/{pid}/stat").read().split()[2] != "Z"]
    assert alive == [], "capture children outlived the diff"
