"""`--help` imports typer's Rich formatter without rich.markdown / rich.traceback
(tritoninspect/commands/_help.py), prints the same help, and leaves no stand-in behind."""

from __future__ import annotations

import subprocess
import sys

import pytest

from _expect import REPO, cli_env
from tritoninspect.commands._help import wants_help

RUN = """
import sys
{preload}
from tritoninspect.cli import run
code = run({args!r})
heavy = sorted(m for m in ("rich.markdown", "markdown_it", "rich.traceback", "pygments") if m in sys.modules)
print("HEAVY:", heavy, "CODE:", code)
"""


def _help(args: list[str], preload: str = "") -> tuple[str, str]:
    proc = subprocess.run([sys.executable, "-c", RUN.format(preload=preload, args=args)], cwd=REPO,
                          env=cli_env(COLUMNS="100"), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    text, _, tail = proc.stdout.rpartition("HEAVY:")
    return text, tail.strip()


@pytest.mark.parametrize("args", [["--help"], ["graph", "--help"], ["diff", "-h"]])
def test_help_is_the_same_without_the_unused_rich_modules(args: list[str]) -> None:
    quick, quick_tail = _help(args)
    full, _ = _help(args, preload="import rich.markdown, rich.traceback")
    assert quick == full and "Usage:" in quick
    assert quick_tail == "[] CODE: 0"


def test_after_help_the_real_modules_import() -> None:
    proc = subprocess.run([sys.executable, "-c", "from tritoninspect.cli import run; run(['--help']);"
                           "import rich.markdown; print(rich.markdown.Markdown.__module__, rich.markdown.__file__)"],
                          cwd=REPO, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    module, file = proc.stdout.split()[-2:]
    assert module == "rich.markdown" and file.endswith("markdown.py")


@pytest.mark.parametrize(("args", "expected"), [
    ([], True), (["--help"], True), (["graph", "-h"], True), (["graph", "m.py:Net"], False),
    (["graph", "m.py:Net", "--", "-h"], False),
])
def test_wants_help(args: list[str], expected: bool) -> None:
    assert wants_help(args) is expected
