"""The test zygote (tests/_zygote.py) runs a program as a fresh `python` would: the same arguments, working
directory, path, environment, output, exit code and atexit handlers; a timeout kills it; a run whose
environment torch would read while importing gets a plain subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from _zygote import cli_env, run as zygote_run

PROBE = textwrap.dedent("""
    import atexit, json, os, sys, threading, time
    atexit.register(lambda: print("atexit ran", file=sys.stderr))
    threading.Thread(target=lambda: (time.sleep(0.3), print("thread ended", file=sys.stderr))).start()
    print(json.dumps({
        "argv": sys.argv, "cwd": os.getcwd(), "path0": sys.path[0], "name": __name__,
        "columns": os.environ.get("COLUMNS"), "stdin": sys.stdin.read(), "tmp": __import__("tempfile").gettempdir(),
        "torch_loaded": "torch" in sys.modules,
    }))
    print("to stderr", file=sys.stderr)
    if sys.argv[-1] == "raise":
        raise ValueError("boom")
    if sys.argv[-1] == "interrupt":
        raise KeyboardInterrupt
    sys.exit(int(sys.argv[-1]) if sys.argv[-1].isdigit() else sys.argv[-1])
""")


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    (tmp_path / "probe_pkg").mkdir()
    (tmp_path / "probe_pkg" / "__init__.py").write_text("")
    (tmp_path / "probe_pkg" / "__main__.py").write_text(PROBE)
    (tmp_path / "probe.py").write_text(PROBE)
    (tmp_path / "tmp").mkdir()
    return tmp_path


def _both(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], ...]:
    forked = zygote_run(cmd, cwd=cwd, env=env, timeout=120)
    plain = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return forked, plain


def _facts(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    facts = json.loads(proc.stdout)
    return {**facts, "rc": proc.returncode, "stderr": proc.stderr}


@pytest.mark.parametrize("how", [["-m", "probe_pkg"], ["probe.py"]])
@pytest.mark.parametrize("last", ["0", "3", "raise", "interrupt", "a message"])
def test_a_forked_run_is_what_a_fresh_interpreter_does(probe: Path, how: list[str], last: str) -> None:
    cmd = [sys.executable, *how, "an arg", last]
    forked, plain = _both(cmd, probe, cli_env(COLUMNS="123"))
    a, b = _facts(forked), _facts(plain)
    assert a.pop("torch_loaded") is True, "the run did not come from the zygote"
    assert b.pop("torch_loaded") is False
    if last in ("raise", "interrupt"):  # the same traceback's end (the frame that raised), then the rest
        a_err, b_err = a.pop("stderr").splitlines(), b.pop("stderr").splitlines()
        assert a_err[0] == b_err[0] == "to stderr" and a_err[-5:] == b_err[-5:], (a_err, b_err)
    assert a == b
    assert a["rc"] == {"0": 0, "3": 3, "raise": 1, "interrupt": -2, "a message": 1}[last]
    # Non-daemon threads end before the atexit handlers run, as at a real exit.
    assert (forked.stderr.splitlines()[-2:] == plain.stderr.splitlines()[-2:] == ["thread ended", "atexit ran"]
            if last != "a message" else forked.stderr.splitlines()[-3:] == plain.stderr.splitlines()[-3:])


def test_a_run_over_its_timeout_is_killed_with_what_it_started(tmp_path: Path) -> None:
    script = tmp_path / "sleeper.py"
    script.write_text(textwrap.dedent(f"""
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        open({str(tmp_path / "pids")!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
        print("started", flush=True)
        time.sleep(120)
    """))
    with pytest.raises(subprocess.TimeoutExpired) as caught:
        zygote_run([sys.executable, str(script)], cwd=tmp_path, env=cli_env(), timeout=3)
    assert caught.value.stdout == "started\n"
    pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie waiting for its parent is dead too
        return f.read().split(") ")[-1][0] != "Z"


def test_an_environment_read_at_import_time_gets_a_plain_subprocess(probe: Path) -> None:
    proc = zygote_run([sys.executable, "probe.py", "0"], cwd=probe, env=cli_env(TORCH_LOGS="+dynamo"), timeout=120)
    assert proc.returncode == 0 and json.loads(proc.stdout)["torch_loaded"] is False
