"""The bad-input matrix (issue 11): every way a user can hold the tool wrong, through the real CLI.

Each case is a `python -m tritoninspect ... --json` process in a project folder of the
user's own files. Every case asserts the documented exit code, exactly one `error:` line
on stderr (hints and the user's own traceback may follow), that stdout is one JSON
document (the error envelope, or the report of a failed compile), that no control
character reaches the terminal, and that no file of the user's changed or appeared.
Cases that compile a model stop early (`--stage dynamo`) where the point allows it; all
run up front, two at a time.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from _expect import REPO, CliRuns, cli_env, explain, sigint_as_from_a_terminal
from _zygote import run as zygote_run

pytestmark = pytest.mark.slow

GOLD = REPO / "tests" / "gold" / "report.json"
ESC = "\x1b"

MODEL = """
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x):
        return torch.sin(x) * 2


class Pair(nn.Module):
    def forward(self, x, y):
        return x + y


class NeedsArgs(nn.Module):
    def __init__(self, width):
        super().__init__()


def make_broken():
    raise RuntimeError("factory failed")


not_a_model = 3


def example_inputs():
    return (torch.ones(8),)
"""

FILES = {
    "model.py": MODEL,
    "printing.py": """
        import torch
        print("printed at import")

        class Net(torch.nn.Module):
            def forward(self, x):
                print("printed in forward")
                return x.cos()

        def example_inputs():
            return (torch.ones(4),)
    """,
    "raises.py": """
        import torch

        class Net(torch.nn.Module):
            def forward(self, x):
                raise ValueError("forward refuses")

        def example_inputs():
            return (torch.ones(4),)
    """,
    "shapes.py": """
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = torch.nn.Parameter(torch.ones(5, 3))

            def forward(self, x):
                return x @ self.w

        def example_inputs():
            return (torch.ones(2, 4),)
    """,
    "broken_import.py": "import torch\nraise ImportError('this module cannot load')\n",
    "syntax.py": "import torch\ndef broken(:\n    pass\n",
    "fake_error_line.py": "raise ValueError('refused\\nerror: a second error line of the program\\nhint: and a hint')\n",
    "no_inputs.py": "import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n",
    "bad_inputs.py": "import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n\n"
                     "def example_inputs():\n    raise KeyError('no inputs today')\n",
    "hang.py": "import time\ntime.sleep(600)\n",
    # Catches everything, the timeout's alarm included: only the watchdog can end it.
    "catch_all.py": "import time\nwhile True:\n    try:\n        time.sleep(1)\n    except BaseException:\n        pass\n",
    "exits.py": """
        import sys
        import torch

        class Net(torch.nn.Module):
            def forward(self, x):
                sys.exit(3)

        def example_inputs():
            return (torch.ones(4),)
    """,
    "own_base.py": """
        import torch

        class Boom(BaseException):
            pass

        class Net(torch.nn.Module):
            def forward(self, x):
                raise Boom("not an Exception")

        def example_inputs():
            return (torch.ones(4),)
    """,
    # A logger thread that outlives the capture, writing while the report is written.
    "threads.py": """
        import os, threading, time
        import torch

        def chatter():
            while True:
                print("thread print")
                os.write(1, b"thread fd 1\\n")
                time.sleep(0.002)

        threading.Thread(target=chatter, daemon=True).start()

        class Net(torch.nn.Module):
            def forward(self, x):
                raise ValueError("forward refuses")

        def example_inputs():
            return (torch.ones(4),)
    """,
    "long_message.py": """
        import torch

        class Net(torch.nn.Module):
            def forward(self, x):
                raise ValueError("x" * 3_000_000)

        def example_inputs():
            return (torch.ones(4),)
    """,
    "forks.py": """
        import os
        import torch

        class Net(torch.nn.Module):
            def forward(self, x):
                os.fork()  # the copy returns through the capture too
                raise ValueError("forked")

        def example_inputs():
            return (torch.ones(4),)
    """,
    "own_base_import.py": "class Boom(BaseException):\n    pass\n\nraise Boom('at import')\n",
    "notes.txt": "my own notes, not tritoninspect's\n",
    "data.json": '{"mine": true}\n',
}


def _reports(project: Path) -> None:
    """Saved reports, one broken way each (the schema tests hold many more)."""
    good = json.loads(GOLD.read_text())
    (project / "good.json").write_text(json.dumps(good))
    (project / "truncated.json").write_text(GOLD.read_text()[:500])
    (project / "binary.json").write_bytes(b"\xff\xfe\x00 not text")
    (project / "empty.json").write_text("")
    (project / "array.json").write_text("[1, 2]")
    (project / "no_meta.json").write_text(json.dumps({k: v for k, v in good.items() if k != "meta"}))
    (project / "bad_kind.json").write_text(json.dumps({**good, "kernels": [{**good["kernels"][0], "entries": ["magic"]}]}))
    (project / "bad_type.json").write_text(json.dumps({**good, "graphs": [{**good["graphs"][0], "op_count": "3"}]}))
    (project / "newer.json").write_text(json.dumps({**good, "schema_version": 99}))
    (project / "version_true.json").write_text(json.dumps({**good, "schema_version": True}))
    # Python's json writes NaN for a float that is not a number (and reads it back); other readers refuse it.
    (project / "nan.json").write_text(json.dumps({**good, "graphs": [{**good["graphs"][0], "compile_time_s": float("nan")}]}))
    (project / "huge_float.json").write_text(json.dumps(good).replace('"compile_time_s": ', '"compile_time_s": 1e999, "x": ', 1))
    (project / "long_int.json").write_text(json.dumps(good).replace(f'"schema_version": {good["schema_version"]}', '"schema_version": ' + "9" * 5000, 1))
    hostile = {**good, "meta": {**good["meta"], "target": f"{ESC}]8;;http://evil{ESC}\\x{ESC}]8;;{ESC}\\"}}
    (project / "hostile.json").write_text(json.dumps({**hostile, "schema_version": "x" + ESC + "[2J"}))
    os.mkfifo(project / "fifo.json")  # no writer: reading it would block for ever
    (project / "loop_a.py").symlink_to("loop_b.py")
    (project / "loop_b.py").symlink_to("loop_a.py")


@dataclass
class Case:
    args: list[str]
    code: int
    #: Text the error line must contain.
    says: str = ""
    #: stdout is a report (a failed compile), not the error envelope.
    report: bool = False
    json: bool = True
    #: Send `sig` (SIGINT by default) this many seconds after start.
    interrupt: float | None = None
    sig: int = signal.SIGINT
    env: dict[str, str] = field(default_factory=dict)


def _cases(p: Path) -> dict[str, Case]:
    m = f"{p}/model.py"
    return {
        # --- signals and time (slowest first) ---
        "ctrl-c during import": Case(["graph", f"{p}/hang.py:Net"], 130, "interrupted", interrupt=8),
        "timeout during import": Case(["graph", f"{p}/hang.py:Net", "--timeout", "3"], 8, "did not finish within 3 s"),
        "timeout, the alarm caught": Case(["graph", f"{p}/catch_all.py:Net", "--timeout", "1"], 8,
                                          "did not finish within 1 s"),
        "SIGTERM during import": Case(["graph", f"{p}/hang.py:Net"], 143, "terminated", interrupt=8,
                                      sig=signal.SIGTERM),
        # --- forward and compile: a report of the failure ---
        "forward raises": Case(["graph", f"{p}/raises.py:Net", "--stage", "dynamo"], 4, "ValueError: forward refuses",
                               report=True),
        "shape mismatch": Case(["graph", f"{p}/shapes.py:Net", "--stage", "dynamo"], 4, "[2, 4] X [5, 3]", report=True),
        "a thread printing through the report": Case(["graph", f"{p}/threads.py:Net", "--stage", "dynamo"], 4,
                                                     "forward refuses", report=True),
        "export, a thread printing through the report": Case(["export", f"{p}/threads.py:Net", "--stage", "export"],
                                                             4, "forward refuses", report=True),
        "a message of megabytes": Case(["graph", f"{p}/long_message.py:Net", "--stage", "dynamo"], 4, "ValueError: xxx",
                                       report=True),
        "a fork in forward": Case(["graph", f"{p}/forks.py:Net", "--stage", "dynamo"], 4, "forked", report=True),
        "sys.exit in forward": Case(["graph", f"{p}/exits.py:Net", "--stage", "dynamo"], 4, "SystemExit: 3", report=True),
        "own BaseException in forward": Case(["graph", f"{p}/own_base.py:Net", "--stage", "dynamo"], 4, "Boom",
                                             report=True),
        "own BaseException at import": Case(["graph", f"{p}/own_base_import.py:Net"], 4, "Boom: at import"),
        "export of a model calling sys.exit": Case(["export", f"{p}/exits.py:Net", "--stage", "export"], 4,
                                                   "SystemExit: 3", report=True),
        "breaks on a failing model": Case(["breaks", f"{p}/raises.py:Net"], 4, "forward refuses", report=True),
        "check on a failing model": Case(["check", f"{p}/raises.py:Net", "--no-breaks"], 1, "", report=False),
        "printing model, bad -o": Case(["graph", f"{p}/printing.py:Net", "-o", f"{p}/notes.txt"], 2, "did not write it"),
        # --- the target spec ---
        "missing file": Case(["graph", f"{p}/nope.py:Net"], 3, "nope.py"),
        "an Inductor cache dir inside a file": Case(["graph", f"{p}/model.py:Net"], 5, "torch._dynamo is not importable",
                                                    env={"TORCHINDUCTOR_CACHE_DIR": f"{p}/model.py/cache"}),
        "a symlink loop as target": Case(["graph", f"{p}/loop_a.py:Net"], 3, "Symlink loop"),
        "a FIFO as saved report": Case(["graph", f"{p}/fifo.json"], 7, "fifo.json: not a regular file"),
        "missing attribute": Case(["graph", f"{m}:Nope"], 3, "Nope"),
        "attribute not a module": Case(["graph", f"{m}:not_model"], 3, "not_model"),
        "module needs arguments": Case(["graph", f"{m}:NeedsArgs"], 3, "NeedsArgs"),
        "factory raises": Case(["graph", f"{m}:make_broken"], 4, "factory failed"),
        "empty attribute": Case(["graph", f"{m}:"], 3, ""),
        "no file before colon": Case(["graph", ":Net"], 3, ""),
        "directory as target": Case(["graph", f"{p}:Net"], 3, ""),
        "not a python file": Case(["graph", f"{p}/notes.txt:Net"], 3, "notes.txt"),
        "unknown module": Case(["graph", "no_such_package.models:Net"], 3, "no_such_package"),
        "attribute not an identifier": Case(["graph", f"{m}:1Net"], 3, "1Net"),
        # --- importing the user's code ---
        "import raises": Case(["graph", f"{p}/broken_import.py:Net"], 4, "this module cannot load"),
        "syntax error": Case(["graph", f"{p}/syntax.py:Net"], 4, "SyntaxError"),
        "an error: line in the program's message": Case(["graph", f"{p}/fake_error_line.py:Net"], 4, "refused"),
        # --- inputs ---
        "no example inputs": Case(["graph", f"{p}/no_inputs.py:Net"], 3, "--inputs"),
        "example_inputs raises": Case(["graph", f"{p}/bad_inputs.py:Net"], 4, "no inputs today"),
        "inputs do not fit forward": Case(["graph", f"{m}:Pair"], 3, "Pair.forward(x, y)"),
        "bad --inputs shape": Case(["graph", f"{m}:Net", "-i", "4xq"], 3, "'4xq'"),
        "bad --inputs dtype": Case(["graph", f"{m}:Net", "-i", "4:floaty"], 3, "floaty"),
        "empty --inputs": Case(["graph", f"{m}:Net", "-i", " "], 3, "--inputs"),
        "too many --inputs": Case(["graph", f"{m}:Net", "-i", "4,4,4"], 3, "got 3 inputs"),
        "inputs too large": Case(["graph", f"{m}:Net", "-i", "100000x100000,100000x100000"], 3, "asks for 40.0 GB"),
        "negative dimension": Case(["graph", f"{m}:Net", "-i", "-4"], 3, "-4"),
        "a dimension of 5000 digits": Case(["graph", f"{m}:Net", "-i", "1" * 5000], 3, "5000 digits"),
        # --- options ---
        "unknown stage": Case(["graph", f"{m}:Net", "--stage", "bad"], 2, "--stage"),
        "unknown device": Case(["graph", f"{m}:Net", "--device", "tpu"], 2, "--device"),
        "cuda without a GPU": Case(["graph", f"{m}:Net", "--device", "cuda"], 5, "no CUDA GPU"),
        "bad --target": Case(["graph", f"{m}:Net", "--target", "sm_banana"], 2, "sm_banana"),
        "unknown option": Case(["graph", f"{m}:Net", "--frobnicate"], 2, "--frobnicate"),
        "no target": Case(["graph"], 2, "TARGET"),
        "unknown command": Case(["grpah", f"{m}:Net"], 2, "grpah"),
        "negative --max-graphs": Case(["check", f"{m}:Net", "--max-graphs", "-1"], 2, "--max-graphs"),
        "negative --context": Case(["diff", "good.json", "good.json", "--context", "-1"], 2, "--context"),
        "zero --timeout": Case(["graph", f"{m}:Net", "--timeout", "0"], 2, "--timeout"),
        "infinite --timeout": Case(["graph", f"{m}:Net", "--timeout", "inf"], 2, "--timeout"),
        "NaN --timeout": Case(["graph", f"{m}:Net", "--timeout", "nan"], 2, "'nan' is not a number of seconds"),
        "unknown --show": Case(["graph", "good.json", "--show", "bytecode"], 2, "--show"),
        "check --allow of no rule": Case(["check", f"{m}:Net", "--allow", "nope"], 2, "no such finding rule"),
        "check bad --entry": Case(["check", f"{m}:Net", "--entry", "k=magic"], 2, "--entry"),
        "capture options on a saved report": Case(["graph", "good.json", "-i", "4", "--stage", "dynamo"], 2, "--inputs"),
        "--target in gpu-less cuda mode": Case(["graph", f"{m}:Net", "--device", "cuda", "--target", "sm_80"], 5, ""),
        # --- outputs ---
        "-o onto the target's source": Case(["graph", f"{m}:Net", "-o", m], 2, "this run reads that file"),
        "-o onto the input report": Case(["graph", "good.json", "-o", "good.json"], 2, "this run reads that file"),
        "-o onto a file of the user's": Case(["graph", "good.json", "-o", "notes.txt"], 2, "did not write it"),
        "-o onto user JSON": Case(["breaks", "good.json", "-o", "data.json"], 2, "did not write it"),
        "-o onto a directory": Case(["graph", "good.json", "-o", str(p)], 2, "is a directory"),
        "-o into a missing directory": Case(["graph", "good.json", "-o", "nowhere/r.json"], 2, "does not exist"),
        "--trace where -o writes": Case(["graph", f"{m}:Net", "--trace", "tr", "-o", "tr"], 2, "-o writes there too"),
        "--trace where --dump writes": Case(["graph", f"{m}:Net", "--trace", "tr", "--dump", "tr"], 2,
                                            "--dump writes there too"),
        "-o onto the --dump directory": Case(["graph", "good.json", "--dump", "out", "-o", "out"], 2, "--dump writes"),
        "export -o onto the target's source": Case(["export", f"{m}:Net", "-o", m], 2, "this run reads that file"),
        "--dump onto a file": Case(["graph", "good.json", "--dump", "notes.txt"], 2, "notes.txt"),
        "diff -o onto an input": Case(["diff", "good.json", "array.json", "-o", "good.json"], 2, "this run reads"),
        "diff --save onto a user file": Case(["diff", "good.json", "good.json", "--save", "notes.txt"], 2, "notes.txt"),
        # --- saved reports ---
        "export of a graph report": Case(["export", "good.json"], 3, "is a torch.compile report"),
        "truncated report": Case(["graph", "truncated.json"], 7, "not valid JSON"),
        "binary report": Case(["graph", "binary.json"], 7, "not UTF-8"),
        "empty report": Case(["graph", "empty.json"], 7, "empty.json"),
        "array report": Case(["breaks", "array.json"], 7, "top level"),
        "report without meta": Case(["graph", "no_meta.json"], 7, "meta: missing"),
        "report with a bad entry kind": Case(["graph", "bad_kind.json"], 7, "entries[0]"),
        "report with a bad type": Case(["check", "bad_type.json", "--no-breaks"], 7, "op_count"),
        "newer report": Case(["graph", "newer.json"], 7, "got 99"),
        "schema_version true": Case(["graph", "version_true.json"], 7, "got true"),
        "an integer too long to read": Case(["breaks", "long_int.json"], 7, "4300 digits"),
        "NaN in a report": Case(["graph", "nan.json"], 7, "NaN is not a JSON value"),
        "NaN in a diff side": Case(["diff", "good.json", "nan.json"], 7, "B: "),
        "a number past a float's range": Case(["breaks", "huge_float.json", "--json"], 7, "1e999 is beyond"),
        "absent report": Case(["graph", "absent.json"], 7, "absent.json"),
        # --- diff ---
        "diff with a broken side": Case(["diff", "good.json", "truncated.json"], 7, "B: "),
        "diff --bench with saved reports": Case(["diff", "good.json", "good.json", "--bench"], 2, "--bench"),
        "diff --inputs-b for a saved B": Case(["diff", f"{m}:Net", "good.json", "--inputs-b", "4"], 2, "--inputs-b"),
        "diff of a target that cannot import": Case(["diff", f"{p}/broken_import.py:Net", "good.json"], 4,
                                                    "this module cannot load"),
        # --- hostile strings ---
        "escape codes in the target": Case(["graph", f"{p}/{ESC}[2Jmodel.py:Net"], 3, ""),
        "newline in the attribute": Case(["graph", f"{m}:Net\nerror: fake"], 3, ""),
        "escape codes in a report": Case(["graph", "hostile.json"], 7, "schema_version"),

    }


def _digest(project: Path) -> dict[str, str]:
    return {str(f.relative_to(project)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(project.rglob("*")) if f.is_file() and "__pycache__" not in f.parts}


def _run(case: Case, project: Path) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "tritoninspect", *case.args, *(["--json"] if case.json else [])]
    env = cli_env(**case.env)
    if case.interrupt is None:
        return zygote_run(args, cwd=project, env=env, timeout=300)
    proc = subprocess.Popen(args, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=sigint_as_from_a_terminal)
    time.sleep(case.interrupt)
    proc.send_signal(case.sig)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Any:
    project = tmp_path_factory.mktemp("project")
    for name, text in FILES.items():
        (project / name).write_text(textwrap.dedent(text).lstrip())
    _reports(project)
    before = _digest(project)
    cases = _cases(project)
    pool = CliRuns(workers=2)
    for key, case in cases.items():
        pool._futures[key] = pool._pool.submit(_run, case, project)  # noqa: SLF001 - same pool, own runner
    yield project, before, cases, pool
    pool.close()


def test_the_matrix_is_large() -> None:
    assert len(_cases(Path("/p"))) >= 60


@pytest.mark.parametrize("key", list(_cases(Path("/p"))))
def test_bad_input(matrix: Any, key: str) -> None:
    project, before, cases, pool = matrix
    case, proc = cases[key], pool.get(key)
    assert proc.returncode == case.code, explain(proc)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    if case.code != 1:
        assert len(errors) == 1, proc.stderr
        assert case.says in errors[0], proc.stderr
        assert len(errors[0]) < 2200, errors[0][:300]  # cut, however long the message
    assert "Traceback (most recent call last)" not in proc.stderr.split("traceback from your code")[0], proc.stderr
    assert ESC not in proc.stdout and ESC not in proc.stderr
    document = json.loads(proc.stdout)
    if case.report:
        assert document["failure"] is not None
    elif case.code == 1:
        assert document["ok"] is False and document["failures"]
    else:
        assert list(document) == ["error"] and document["error"]["exit_code"] == case.code
    after = _digest(project)
    assert after == before, sorted(set(after.items()) ^ set(before.items()))
    leftovers = [f.name for f in project.iterdir() if f.name.startswith(".") and "tritoninspect" in f.name]
    assert not leftovers
