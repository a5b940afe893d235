"""Broken saved reports through the command line (tier c, fast: loading a report compiles nothing).

Each case damages a copy of tests/gold/report.json one way, then runs `python -m tritoninspect`
on it (graph, breaks, check, or as one side of diff): exit 7 (`ExitCode.REPORT`), exactly one
`error:` line naming the file and the field path, with `--json` stdout holding only the JSON error
envelope (without it, nothing), no traceback, and the file left as it was.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from _expect import REPO, CliRuns, explain
from tritoninspect.model.errors import ExitCode
from tritoninspect.model.report import SCHEMA_VERSION

GOLD = REPO / "tests" / "gold" / "report.json"


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change setting one field, given as `kernels.0.occurrences.1.grid`."""
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]

    def change(report: dict[str, Any]) -> None:
        node: Any = report
        for part in parents:
            node = node[part]
        node[last] = value
    return change


def _delete(path: str) -> Callable[[dict[str, Any]], None]:
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]

    def change(report: dict[str, Any]) -> None:
        node: Any = report
        for part in parents:
            node = node[part]
        del node[last]
    return change


def _non_utf8(text: str) -> bytes:
    """The report with a Latin-1 "é" in the target's name."""
    return text.replace('"target": "', '"target": "caf\xe9 ', 1).encode("latin-1")


@dataclass(frozen=True)
class Case:
    #: The file's content from the gold report: a change to its parsed form, or new text/bytes from its text.
    content: Callable[[dict[str, Any]], None] | Callable[[str], str | bytes]
    #: The error line after "error: [SIDE: ]FILE: ", exactly, or a regex when `regex`.
    message: str
    #: graph, breaks, check, diff-a (the broken file as A) or diff-b.
    command: str = "graph"
    json: bool = True
    regex: bool = False
    raw: bool = False  # `content` takes and returns text/bytes


CASES: dict[str, Case] = {
    "missing top-level field": Case(_delete("kernels"), "kernels: missing"),
    "missing meta field": Case(_delete("meta.torch"), "meta.torch: missing", command="breaks"),
    "missing nested field": Case(_delete("kernels.0.occurrences.1.stage"), "kernels[0].occurrences[1].stage: missing"),
    "wrong type at depth": Case(
        _set("kernels.0.occurrences.0.grid", "x"), 'kernels[0].occurrences[0].grid: expected an array or null, got "x"'
    ),
    "wrong type in a grid": Case(
        _set("kernels.0.occurrences.0.grid", [[4, 1.5, 1]]),
        "kernels[0].occurrences[0].grid[0][1]: expected an integer or a string, got 1.5", command="check",
    ),
    "wrong type of a record": Case(
        _set("kernels.0.occurrences.0.clones", []),
        "kernels[0].occurrences[0].clones: expected an object or null, got an array", json=False,
    ),
    "wrong entry kind": Case(
        _set("kernels.0.occurrences.0.entry", "inline"),
        'kernels[0].occurrences[0].entry: expected one of "hop", "triton_op", "custom_op", "eager", got "inline"',
    ),
    "wrong entry in a kernel's entries": Case(
        _set("kernels.0.entries", ["hop", "magic"]),
        'kernels[0].entries[1]: expected one of "hop", "triton_op", "custom_op", "eager", got "magic"', command="check",
    ),
    "wrong diagnostic severity": Case(
        _set("diagnostics.0.severity", "fatal"),
        'diagnostics[0].severity: expected one of "error", "warning", "note", got "fatal"', command="breaks",
    ),
    "null where not allowed": Case(_set("meta.backward", None), "meta.backward: expected true or false, got null"),
    "null list": Case(_set("graphs", None), "graphs: expected an array, got null", json=False),
    "unknown field": Case(_set("kernels.0.colour", "red"), "kernels[0].colour: unknown field"),
    "several problems": Case(
        lambda r: (_set("graphs.1.op_count", "3")(r), _set("graphs.0.stage", "nowhere")(r)),
        'graphs[0].stage: expected one of "dynamo", "aot_forward", "aot_backward", "aot_inference", "post_grad", '
        '"post_grad_final", "output_code", "export", "aoti_output_code", "runtime", got "nowhere" (and 1 more)',
    ),
    "newer schema_version": Case(
        _set("schema_version", SCHEMA_VERSION + 1),
        f"schema_version: this tritoninspect reads version {SCHEMA_VERSION}, got {SCHEMA_VERSION + 1}",
    ),
    "schema_version as a string": Case(
        _set("schema_version", str(SCHEMA_VERSION)),
        f'schema_version: this tritoninspect reads version {SCHEMA_VERSION}, got "{SCHEMA_VERSION}"', command="check",
    ),
    "no schema_version": Case(
        _delete("schema_version"), "schema_version: missing (not a saved tritoninspect report?)", command="breaks"
    ),
    "truncated JSON": Case(
        lambda text: text[: len(text) // 2], r"not valid JSON: .+: line \d+ column \d+ \(char \d+\)", raw=True,
        regex=True,
    ),
    "empty file": Case(lambda text: "", "not valid JSON: Expecting value: line 1 column 1 (char 0)", raw=True,
                       command="check"),
    "non-UTF-8 bytes": Case(
        _non_utf8, r"not UTF-8 text \(invalid continuation byte at byte \d+\)", raw=True, regex=True, json=False
    ),
    "a key given twice": Case(
        lambda text: text.replace("{", '{"schema_version": 999, ', 1),
        "not a report: the key 'schema_version' appears twice in one object (JSON readers disagree on which value "
        "wins)", raw=True, command="diff-b",
    ),
    "array instead of object": Case(lambda text: f"[{text}]", "top level: expected an object, got an array", raw=True),
    "diff, broken side B": Case(_set("kernels.0.name", 7), "kernels[0].name: expected a string, got 7",
                                command="diff-b"),
    "diff, broken side A": Case(_delete("graphs.2.code"), "graphs[2].code: missing", command="diff-a", json=False),
    "a backward without grad": Case(
        lambda r: (_set("meta.backward", True)(r), _set("meta.grad", False)(r)),
        "meta.grad: false with meta.backward: true: a backward runs only after a forward with grad on",
        command="breaks",
    ),
}


def _content(case: Case) -> bytes:
    text = GOLD.read_text(encoding="utf-8")
    if case.raw:
        made = case.content(text)  # type: ignore[arg-type]
        return made if isinstance(made, bytes) else made.encode("utf-8")
    report = copy.deepcopy(json.loads(text))
    case.content(report)  # type: ignore[arg-type]
    return (json.dumps(report, indent=2) + "\n").encode("utf-8")


def _argv(case: Case, broken: Path, good: Path) -> list[str]:
    args = {
        "graph": ["graph", str(broken)],
        "breaks": ["breaks", str(broken)],
        "check": ["check", str(broken), "--no-breaks"],
        "diff-a": ["diff", str(broken), str(good)],
        "diff-b": ["diff", str(good), str(broken)],
    }[case.command]
    return args + (["--json"] if case.json else [])


@dataclass
class Runs:
    runs: CliRuns
    files: dict[str, Path]
    digests: dict[Path, str]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("broken")
    good = tmp / "good.json"
    good.write_bytes(GOLD.read_bytes())
    files = {}
    for index, (name, case) in enumerate(CASES.items()):
        files[name] = tmp / f"case{index:02d}.json"
        files[name].write_bytes(_content(case))
    digests = {path: _digest(path) for path in [good, *files.values()]}
    pool = CliRuns(workers=2)
    for name, case in CASES.items():
        pool.submit(name, _argv(case, files[name], good), timeout=120)
    yield Runs(pool, files, digests)
    pool.close()


def test_the_matrix_is_broad() -> None:
    assert len(CASES) >= 15
    assert {case.command for case in CASES.values()} == {"graph", "breaks", "check", "diff-a", "diff-b"}


def test_the_damaged_files_differ_from_a_valid_report() -> None:
    for name, case in CASES.items():
        assert _content(case) != GOLD.read_bytes(), name


@pytest.mark.parametrize("name", list(CASES))
def test_broken_report_exits_7_with_one_line(runs: Runs, name: str) -> None:
    case, broken = CASES[name], runs.files[name]
    proc = runs.runs.get(name)
    assert proc.returncode == ExitCode.REPORT, explain(proc)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and all(line.startswith(("error: ", "hint: ")) for line in lines), proc.stderr
    side = {"diff-a": "A: ", "diff-b": "B: "}.get(case.command, "")
    message = errors[0].removeprefix("error: ")
    prefix = f"{side}{broken}: "
    assert message.startswith(prefix), message
    detail = message.removeprefix(prefix)
    if case.regex:
        assert re.fullmatch(case.message, detail), detail
    else:
        assert detail == case.message
    if case.json:
        assert json.loads(proc.stdout) == {"error": {"type": "ReportError", "message": message, "exit_code": 7}}
    else:
        assert proc.stdout == ""
    assert _digest(broken) == runs.digests[broken], "the report was changed"


def test_the_valid_report_beside_them_was_not_changed(runs: Runs) -> None:
    for name in CASES:
        runs.runs.get(name)
    for path, digest in runs.digests.items():
        assert _digest(path) == digest, path
