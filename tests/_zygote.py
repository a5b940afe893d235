"""`subprocess.run` for the end-to-end tests' Python runs, forked from a warm interpreter (a zygote).

Every end-to-end test runs `python -m tritoninspect ...` (or a helper script) in a fresh process, as a user
does. About half of such a run on CPU is importing torch, Dynamo, Inductor and Triton (8 of 15 s for a small
sample): the same work, hundreds of times a suite. Each pytest process starts one zygote on first use
(tests/_zygote_server.py), which imports them once and forks a child per run; the child then runs the module
or script in its own process, with its own arguments, working directory, environment, stdout and stderr, and
exits as the interpreter would. What a run does after the imports, its compile included, is unchanged.

A run takes a plain subprocess instead when its environment differs from the zygote's in anything but the
names in `RUNTIME_ONLY` (torch and Triton read others, e.g. TORCHINDUCTOR_CACHE_DIR or TORCH_LOGS, while
importing), when it is not `python -m MODULE` or `python SCRIPT`, or everywhere with
TRITONINSPECT_TESTS_FRESH=1 (the check that forking hides nothing: the suite passes either way), and on a
machine with an NVIDIA GPU (CUDA must not meet a fork; the GPU tests are few).
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[1]
_SERVER = Path(__file__).with_name("_zygote_server.py")
#: Environment variables read when used, never while importing: they may differ from the zygote's.
RUNTIME_ONLY = frozenset({"PYTEST_CURRENT_TEST", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TERM"})


class _Zygote:
    def __init__(self, env: dict[str, str]) -> None:
        self._dir = tempfile.mkdtemp(prefix="ti-zygote-")
        self.socket = os.path.join(self._dir, "s")
        # A pseudo-file name, as `<frozen runpy>` is in a real `python -m` run: the report's user stacks
        # (tritoninspect/textformats/origin.py) leave such frames out, so they hold the same frames as there.
        code = f"exec(compile(open({str(_SERVER)!r}).read(), '<tests/_zygote_server.py>', 'exec'))"
        self._proc = subprocess.Popen([sys.executable, "-c", code, self.socket], env=env, cwd=self._dir,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self._proc.stdout.readline() if self._proc.stdout else ""
        if ready.strip() != "ready":
            raise RuntimeError(f"the test zygote did not start (exit {self._proc.poll()})")

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        for name in os.listdir(self._dir):
            os.unlink(os.path.join(self._dir, name))
        os.rmdir(self._dir)

    def run(self, cmd: list[str], argv: list[str], cwd: str, env: dict[str, str], timeout: float | None) -> tuple[int, str, str]:
        with tempfile.TemporaryDirectory(prefix="ti-run-") as tmp:
            out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.connect(self.socket)
                conn.sendall((json.dumps({"argv": argv, "cwd": cwd, "env": env, "out": out, "err": err}) + "\n")
                             .encode())
                lines = _Lines(conn)
                pid = lines.next()
                conn.settimeout(timeout)
                try:
                    status = lines.next()
                except (TimeoutError, socket.timeout):
                    _kill_group(pid)
                    conn.settimeout(None)
                    lines.next()  # the waiter saw it end
                    raise subprocess.TimeoutExpired(cmd, timeout or 0, _read(out), _read(err)) from None
            return os.waitstatus_to_exitcode(status), _read(out), _read(err)


class _Lines:
    """The waiter's answers (one integer a line), read without a buffer a timeout would spoil."""

    def __init__(self, conn: socket.socket) -> None:
        self._conn, self._buf = conn, b""

    def next(self) -> int:
        while b"\n" not in self._buf:
            chunk = self._conn.recv(64)
            if not chunk:
                raise RuntimeError("the test zygote's waiter closed the connection")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return int(line)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


_lock = threading.Lock()
_zygote: _Zygote | None = None


def _python_argv(cmd: list[str]) -> list[str] | None:
    """`[python, -m, MOD, ...]` or `[python, SCRIPT.py, ...]` without interpreter options: what follows python."""
    if len(cmd) < 2 or cmd[0] != sys.executable:
        return None
    if cmd[1] == "-m" and len(cmd) >= 3:
        return cmd[1:]
    if cmd[1].endswith(".py"):
        return cmd[1:]
    return None


def cli_env(**changes: str | None) -> dict[str, str]:
    """The environment for a CLI subprocess: the checkout importable, no colour, some changes."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_REPO), env.get("PYTHONPATH")]))
    env.pop("FORCE_COLOR", None)
    env["NO_COLOR"] = "1"
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def _same_imports(env: dict[str, str], base: dict[str, str]) -> bool:
    keys = (set(env) | set(base)) - RUNTIME_ONLY
    return all(env.get(k) == base.get(k) for k in keys)


def _warm(env: dict[str, str]) -> _Zygote | None:
    """The zygote (started with `cli_env()` on first use) when a run with `env` may fork from it, else None."""
    global _zygote
    if not _same_imports(env, cli_env()):
        return None
    with _lock:
        if _zygote is None:
            _zygote = _Zygote(cli_env())
            atexit.register(_zygote.close)
        return _zygote


def run(cmd: list[str], *, cwd: Path | str, env: dict[str, str], timeout: float | None = None,
        **_: Any) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)`."""
    argv = _python_argv(cmd)
    fresh = os.environ.get("TRITONINSPECT_TESTS_FRESH") or os.path.exists("/dev/nvidiactl")
    zygote = None if argv is None or fresh else _warm(env)
    if zygote is None:
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    code, out, err = zygote.run(cmd, argv, str(Path(cwd).resolve()), env, timeout)
    return subprocess.CompletedProcess(cmd, code, out, err)
