"""`os._exit()` in the user's code, which no `except` can catch: the user's code failing (exit 4, one
`error:` line, the report of the failure), not a silent end of the run with the user's exit code (a
hostile user's find: `os._exit(0)` in `forward` exited 0 with an empty stdout, `os._exit(3)` exited 3,
the code of a wrong target)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from _expect import explain, run_cli

pytestmark = pytest.mark.slow

MODEL = """
import os
import torch

{top}

class Net(torch.nn.Module):
    def forward(self, x):
        {forward}
        return x.sin()


def example_inputs():
    return (torch.ones(4),)
"""


@pytest.mark.parametrize(("top", "forward", "where"), [
    ("", "os._exit(0)", "the model failed while running"),
    ("os._exit(3)", "pass", "error while importing"),
])
def test_os_exit_in_the_users_code_is_their_code_failing(tmp_path: Path, top: str, forward: str, where: str) -> None:
    (tmp_path / "model.py").write_text(textwrap.dedent(MODEL).format(top=top, forward=forward))
    proc = run_cli(["graph", "model.py:Net", "--stage", "dynamo", "--json"], cwd=tmp_path)
    assert proc.returncode == 4, explain(proc)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and where in errors[0] and "os._exit(" in errors[0], proc.stderr
    json.loads(proc.stdout)  # the report of the failure, or the envelope: JSON either way


def test_os_exit_in_a_diff_side_is_that_sides_code_failing(tmp_path: Path) -> None:
    """diff captures each side in a child process, which `os._exit(0)` ended without an answer: an
    internal error (exit 6, 'ended (exit 0) without a result')."""
    (tmp_path / "model.py").write_text(textwrap.dedent(MODEL).format(top="", forward="os._exit(0)"))
    (tmp_path / "other.py").write_text(textwrap.dedent(MODEL).format(top="", forward="pass"))
    proc = run_cli(["diff", "model.py:Net", "other.py:Net", "--stage", "dynamo", "--json"], cwd=tmp_path)
    assert proc.returncode == 4, explain(proc)
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: A: ") and "os._exit(0)" in errors[0], proc.stderr
    json.loads(proc.stdout)
