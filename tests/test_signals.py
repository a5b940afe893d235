"""SIGTERM ends a run as Ctrl-C does: its capture children die with it; signals held while importing (fast)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _expect import REPO, sigint_as_from_a_terminal


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


def _blocked(tid: int) -> set[int]:
    """The signals thread `tid` of this process blocks (SigBlk in /proc)."""
    with open(f"/proc/self/task/{tid}/status") as f:
        mask = int(next(line for line in f if line.startswith("SigBlk:")).split()[1], 16)
    return {n for n in range(1, 65) if mask >> (n - 1) & 1}


HELD = """
import json, os, signal, sys, threading
from tritoninspect.commands._capture import signals_held

def blocked():
    with open(f"/proc/self/task/{threading.get_native_id()}/status") as f:
        mask = int(next(line for line in f if line.startswith("SigBlk:")).split()[1], 16)
    return sorted(n for n in range(1, 65) if mask >> (n - 1) & 1)

seen, inside, said = [], False, "not raised"
try:
    with signals_held():
        os.kill(os.getpid(), signal.SIGINT)  # held: nothing raises inside the block
        thread = threading.Thread(target=lambda: seen.append(blocked()))
        thread.start()
        thread.join()
        inside = True
except KeyboardInterrupt:
    said = "raised after the block" if inside else "raised inside"
print(json.dumps({"said": said, "thread": seen, "main": blocked()}))
"""


def test_ctrl_c_while_importing_acts_after_the_imports_and_their_threads_never_take_it() -> None:
    """Under load, Ctrl-C in the middle of `import torch` was said as "torch is not importable" (exit 5), and
    once was lost to another thread, hanging the run in the user's `time.sleep` (tests/test_bad_inputs.py).
    In a fresh interpreter: pytest's own threads and handlers stay out of it."""
    import signal

    proc = subprocess.run([sys.executable, "-c", HELD], cwd=REPO, capture_output=True, text=True, timeout=60,
                          preexec_fn=sigint_as_from_a_terminal)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["said"] == "raised after the block", proc.stdout
    (thread_mask,) = seen["thread"]
    assert {signal.SIGINT, signal.SIGTERM, signal.SIGALRM} <= set(thread_mask), proc.stdout
    assert signal.SIGINT not in seen["main"], proc.stdout  # the main thread takes them again


def test_the_stdout_forwarder_thread_never_takes_a_signal() -> None:
    import io
    import os
    import signal
    import time

    from tritoninspect.run.stdout_guard import _Forwarder

    read_fd, write_fd = os.pipe()
    forwarder = _Forwarder(read_fd, io.BytesIO())
    forwarder.start()
    time.sleep(0.2)
    try:
        assert {signal.SIGINT, signal.SIGTERM, signal.SIGALRM} <= _blocked(forwarder.native_id)
    finally:
        os.close(write_fd)
        forwarder.stop()


#: Stands in for typer: Ctrl-C arrives while the CLI's imports run, then the real typer is imported.
SHADOW_TYPER = """
import os, signal, sys
os.kill(os.getpid(), signal.SIGINT)
del sys.modules["typer"]
sys.path.remove(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import typer
"""


@pytest.mark.parametrize("json_out", [False, True])
def test_ctrl_c_while_the_cli_is_imported_is_one_line_and_exit_130(tmp_path: Path, json_out: bool) -> None:
    import signal

    (tmp_path / "typer").mkdir()
    (tmp_path / "typer" / "__init__.py").write_text(SHADOW_TYPER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]), "NO_COLOR": "1"}
    args = ["graph", "samples/add_raw.py:Net", *(["--json"] if json_out else [])]
    proc = subprocess.run([sys.executable, "-m", "tritoninspect", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=60, preexec_fn=sigint_as_from_a_terminal)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.splitlines() == ["error: interrupted"], proc.stderr
    if json_out:
        assert json.loads(proc.stdout)["error"]["type"] == "Interrupted"
    else:
        assert proc.stdout == ""


def test_a_time_limit_names_the_caller_not_the_lock_python_was_waiting_on() -> None:
    """`--timeout` says where the run was: a wait in `threading` (the capture waiting for its warm-up
    thread, capture/warmup.py) is named by the line that waited, not by `threading.py`'s internals."""
    import signal
    import threading

    from tritoninspect.commands._capture import _where

    seen: list[str] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: seen.append(_where(frame)))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        threading.Event().wait(0.5)  # the line named below; the alarm interrupts the wait, not the test
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert len(seen) == 1 and seen[0].startswith(f"{__file__}:") and seen[0].endswith(
        " in test_a_time_limit_names_the_caller_not_the_lock_python_was_waiting_on"), seen
