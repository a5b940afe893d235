"""The stdout guard: what the user's program writes to fd 1 goes to stderr, marked (fast)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from _expect import REPO

PROGRAM = textwrap.dedent(
    """
    import ctypes, os, subprocess, sys
    from tritoninspect.run.stdout_guard import stdout_to_stderr
    with stdout_to_stderr() as guard:
        print("from print")
        sys.stdout.write("no newline yet")
        sys.stdout.flush()
        os.write(1, b" then os.write\\n")
        libc = ctypes.CDLL(None)
        libc.printf(b"from printf\\n")
        libc.fflush(None)
        subprocess.run([sys.executable, "-c", "print('from a child process')"], check=True)
    print('{"report": true}')
    print(f"lines={guard.lines}", file=sys.stderr)
    """
)


def test_everything_written_to_stdout_inside_moves_to_stderr_marked() -> None:
    proc = subprocess.run([sys.executable, "-c", PROGRAM], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == '{"report": true}\n'
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("your program's stdout")
    assert lines[1:] == ["│ from print", "│ no newline yet then os.write", "│ from printf",
                         "│ from a child process", "lines=4"]


def test_a_child_that_outlives_the_block_does_not_hold_it_up() -> None:
    program = textwrap.dedent(
        """
        import subprocess, sys, time
        from tritoninspect.run.stdout_guard import stdout_to_stderr
        start = time.monotonic()
        with stdout_to_stderr():
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(20)"])
        print(f"{time.monotonic() - start:.1f}")
        child.kill()
        """
    )
    proc = subprocess.run([sys.executable, "-c", program], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert float(proc.stdout) < 3


def test_a_program_that_replaces_sys_stdout_does_not_take_the_report() -> None:
    program = textwrap.dedent(
        """
        import io, sys
        from tritoninspect.run.stdout_guard import stdout_to_stderr
        with stdout_to_stderr():
            sys.stdout = io.StringIO()  # a model that swallows prints at import
        print('{"report": true}')
        """
    )
    proc = subprocess.run([sys.executable, "-c", program], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == '{"report": true}\n'


def test_atexit_output_of_the_users_module_goes_to_stderr(tmp_path) -> None:
    # The CLI closes stdout behind the report: what the user's atexit handlers print cannot follow the JSON.
    program = textwrap.dedent(
        """
        import atexit, os, sys
        atexit.register(lambda: print("ATEXIT PRINT"))
        atexit.register(lambda: os.write(1, b"ATEXIT FD1\\n"))
        from tritoninspect import cli
        cli.run = lambda args: print('{"report": true}') or 0
        cli.main()
        """
    )
    proc = subprocess.run([sys.executable, "-c", program], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == '{"report": true}\n'
    assert "ATEXIT PRINT" in proc.stderr and "ATEXIT FD1" in proc.stderr



def test_for_good_a_thread_the_program_left_running_never_writes_into_the_report() -> None:
    # A logger thread of the user's outlives the capture: print() and fd-1 writes go on after the block.
    program = textwrap.dedent(
        """
        import os, sys, threading, time
        from tritoninspect.run.stdout_guard import stdout_to_stderr

        def spam():
            while True:
                print("THREAD PRINT", flush=True)
                os.write(1, b"THREAD FD1\\n")
                time.sleep(0.001)

        with stdout_to_stderr(for_good=True):
            threading.Thread(target=spam, daemon=True).start()
            time.sleep(0.05)
        for _ in range(50):  # the report, written slowly while the thread runs
            print('{"report": true}', end="")
            time.sleep(0.002)
        print(f"isatty={sys.stdout.isatty()}", file=sys.stderr)
        sys.stdout.flush()
        """
    )
    proc = subprocess.run([sys.executable, "-c", program], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == '{"report": true}' * 50
    assert "THREAD PRINT" in proc.stderr and "THREAD FD1" in proc.stderr and "isatty=False" in proc.stderr


def test_a_thread_left_running_writes_whole_lines_to_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a CLI capture a user thread's `print()` goes to stderr: its text and its newline were two writes, and
    the tool's `error:` line written between them began mid-line ("thread printerror: the model failed ...")."""
    import io
    import threading

    from tritoninspect.run.stdout_guard import _ReportStdout

    writes: list[str] = []

    class Stderr(io.StringIO):
        def write(self, text: str) -> int:
            writes.append(text)
            return len(text)

    monkeypatch.setattr(sys, "stderr", Stderr())
    real = io.StringIO()
    out = _ReportStdout(real, threading.main_thread())
    half = threading.Event()
    go = threading.Event()

    def user_thread() -> None:
        out.write("thread print")
        half.set()
        go.wait(5)
        out.write("\n")
        out.write("tail")
        out.flush()

    t = threading.Thread(target=user_thread)
    t.start()
    half.wait(5)
    sys.stderr.write("error: the model failed\n")  # the tool's own line, between the thread's two writes
    go.set()
    t.join(5)
    out.write("report")
    assert writes == ["error: the model failed\n", "thread print\n", "tail"] and real.getvalue() == "report"
