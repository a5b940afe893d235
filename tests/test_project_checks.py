"""A project's checks (issue 25): `[[tool.tritoninspect.check]]` in pyproject.toml, `check` without a
TARGET, `--junit-xml`, GitHub annotations (fast tier).

The table is read and validated without a capture; the runs go through the real command with the
capture replaced as in test_commands.py (`captured`: the saved capture picked by the target's file
name, the child run in this process, in the project's folder). End to end, with real compiles in
child processes: the slow test at the end.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from _expect import cli_env, run_cli
from test_commands import REPO, FakeCapture, captured, error_of, run  # noqa: F401 (captured: a fixture)
from tritoninspect.analyse.check_suite import SUITE_SCHEMA_VERSION, EntryResult, SuiteResult
from tritoninspect.analyse.checks import CheckResult
from tritoninspect.model.errors import ExitCode, UsageError
from tritoninspect.render.annotations import render_annotations
from tritoninspect.source.project import find_project, load_project

HEAD = '[project]\nname = "kernels"\nversion = "0"\n\n'
#: Passes (add_kernel enters as a hop), fails (the wanted entry is not the one seen), and fails on breaks.
MIXED = HEAD + """\
[[tool.tritoninspect.check]]
target = "add_raw.py:Net"
entries = { add_kernel = "hop" }
no_breaks = true

[[tool.tritoninspect.check]]
name = "custom op"
target = "custom_op.py:Net"
entries = { add_kernel = "triton_op" }

[[tool.tritoninspect.check]]
target = "break_disabled_dispatch.py:Net"
no_breaks = true
max_graphs = 5
"""


def project(tmp_path: Path, text: str, samples: tuple[str, ...] = ("add_raw", "custom_op",
                                                                 "break_disabled_dispatch")) -> Path:
    for name in samples:
        shutil.copy(REPO / "samples" / f"{name}.py", tmp_path / f"{name}.py")
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    return tmp_path


# --- the table ----------------------------------------------------------------------------------


def test_a_valid_table_is_read_in_order_with_lines_and_names(tmp_path: Path) -> None:
    loaded = load_project(project(tmp_path, MIXED, ()) / "pyproject.toml")
    assert [(e.index, e.line, e.name, e.target) for e in loaded.entries] == [
        (1, 5, "add_raw.py:Net", "add_raw.py:Net"), (2, 10, "custom op", "custom_op.py:Net"),
        (3, 15, "break_disabled_dispatch.py:Net", "break_disabled_dispatch.py:Net")]
    first, second, third = loaded.entries
    assert (first.entries, first.no_breaks, first.max_graphs) == ({"add_kernel": "hop"}, True, None)
    assert (second.no_breaks, third.max_graphs, third.stage) == (False, 5, None)


def test_the_nearest_pyproject_with_the_table_is_found_from_a_subfolder(tmp_path: Path) -> None:
    project(tmp_path, MIXED, ())
    inner = tmp_path / "pkg" / "deep"
    inner.mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text(HEAD)  # no [tool.tritoninspect]: passed over
    assert find_project(inner) == tmp_path / "pyproject.toml"


def test_no_pyproject_with_the_table_says_so(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(HEAD)
    with pytest.raises(UsageError, match=r"no pyproject.toml with \[\[tool.tritoninspect.check\]\].*has no "
                                         r"\[tool.tritoninspect\] table"):
        find_project(tmp_path)


ENTRY = '[[tool.tritoninspect.check]]\ntarget = "add_raw.py:Net"\n'


@pytest.mark.parametrize(("table", "message"), [
    (ENTRY + "no_break = true\n", "#1: unknown key 'no_break' (did you mean 'no_breaks'?)"),
    (ENTRY + 'no_breaks = "yes"\n', "#1: no_breaks must be true or false, not 'yes'"),
    (ENTRY + "max_graphs = true\n", "#1: max_graphs must be an integer, not True"),
    (ENTRY + "max_graphs = -1\n", "#1: max_graphs must be 0 or more"),
    (ENTRY + 'entries = { add_kernel = "eager" }\n', "entries.add_kernel = 'eager': choose one of"),
    (ENTRY + "entries = []\n", "#1: entries must be a table of kernel = kind"),
    (ENTRY + 'stage = "export"\n', "#1: stage 'export': choose one of dynamo, aot, inductor"),
    (ENTRY + "no_clones = []\n", "#1: no_clones must be a kernel name or a list of them"),
    ("[[tool.tritoninspect.check]]\nno_breaks = true\n", "#1: `target` is missing or not a string"),
    (ENTRY + "no_breaks = true\n" + ENTRY + "no_breaks = true\n", "#2 (add_raw.py:Net): #1 has the "
                                                                   "same name"),
    ("[tool.tritoninspect]\nchecks = []\n", "[tool.tritoninspect]: unknown key 'checks' (did you mean 'check'?)"),
    ("[tool.tritoninspect]\ncheck = 1\n", "tool.tritoninspect.check must be one or more"),
    ("[tool.tritoninspect\n", "not valid TOML"),
])
def test_a_wrong_table_is_one_line_naming_the_key_exit_2(captured: FakeCapture, tmp_path: Path, table: str,
                                                        message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, HEAD + table, ("add_raw",)))
    error = error_of(run("check", "-q"), ExitCode.USAGE)
    assert message in error and str(tmp_path / "pyproject.toml") in error
    assert captured.calls == []


def test_an_entry_without_other_conditions_checks_the_findings(captured: FakeCapture, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Every check holds the findings condition (issue 24: an error finding fails), so no entry is empty."""
    monkeypatch.chdir(project(tmp_path, HEAD + ENTRY, ("add_raw",)))
    result = run("check", "-q")
    assert result.exit_code == ExitCode.OK, result.stderr
    assert result.stdout.startswith("PASS  add_raw.py:Net (compile-only; 1 condition: no error finding"), result.stdout


def test_allow_in_an_entry_is_checks_allow(captured: FakeCapture, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, HEAD + ENTRY + 'allow = ["aliased_args_split"]\n', ("add_raw",)))
    result = run("check", "-q")
    assert result.exit_code == ExitCode.OK, result.stderr
    assert "no error finding (--allow aliased_args_split)" in result.stdout, result.stdout
    monkeypatch.chdir(project(tmp_path, HEAD + ENTRY + 'allow = "no_such_rule"\n', ("add_raw",)))
    error = error_of(run("check"), ExitCode.USAGE)
    assert "#1 (add_raw.py:Net): " in error and "no_such_rule" in error


def test_an_entry_whose_file_is_missing_is_refused_before_any_capture(captured: FakeCapture, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, MIXED, ("add_raw", "custom_op")))
    result = run("check")
    assert result.exit_code == ExitCode.TARGET, result.stderr
    assert "#3 (break_disabled_dispatch.py:Net)" in result.stderr and captured.calls == []


@pytest.mark.parametrize("flag", [["--no-breaks"], ["--entry", "k=hop"], ["--inputs", "8"], ["--stage", "aot"]])
def test_conditions_on_the_command_line_need_a_target(captured: FakeCapture, tmp_path: Path, flag: list[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, MIXED, ()))
    assert f"{flag[0]}: give a TARGET" in error_of(run("check", *flag), ExitCode.USAGE)


# --- running them -------------------------------------------------------------------------------


def test_mixed_pass_and_fail_one_line_each_exit_1_and_junit(captured: FakeCapture, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, MIXED))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    result = run("check", "--junit-xml", "out.xml", "-j", "2")
    assert result.exit_code == ExitCode.FINDINGS, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(
        "PASS  add_raw.py:Net (compile-only; 3 conditions: --no-breaks, --entry add_kernel=hop, no error finding, ")
    assert lines[1] == "FAIL  custom op: --entry add_kernel=triton_op: add_kernel entered as custom_op"
    assert lines[2].startswith("FAIL  break_disabled_dispatch.py:Net: --no-breaks: ")
    assert lines[-1] == "checks: 1 passed, 2 failed, 0 errors (pyproject.toml)"
    assert not any(line.startswith("::") for line in lines)  # annotations only in GitHub Actions
    # Each entry captured the earliest stage its conditions need, in the project's folder.
    assert sorted(spec.display_name.rsplit("/", 1)[-1] for spec, _ in captured.calls) == [
        "add_raw.py", "break_disabled_dispatch.py", "custom_op.py"]
    assert "wrote out.xml" in result.stderr

    root = ET.parse(tmp_path / "out.xml").getroot()
    suite = root.find("testsuite")
    assert suite is not None and root.tag == "testsuites"
    assert {k: suite.get(k) for k in ("name", "tests", "failures", "errors")} == {
        "name": "tritoninspect.check", "tests": "3", "failures": "2", "errors": "0"}
    cases = suite.findall("testcase")
    assert [(c.get("name"), c.get("file"), c.get("line")) for c in cases] == [
        ("add_raw.py:Net", "pyproject.toml", "5"), ("custom op", "pyproject.toml", "10"),
        ("break_disabled_dispatch.py:Net", "pyproject.toml", "15")]
    assert cases[0].find("failure") is None and cases[0].find("error") is None
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("type") == "check"
    assert failure.get("message") == "--entry add_kernel=triton_op: add_kernel entered as custom_op"
    conditions = [p.get("value") for p in cases[2].iter("property") if p.get("name") == "condition"]
    # (the saved capture behind it stops at Dynamo: the findings label says so)
    assert conditions == ["--no-breaks", "--max-graphs 5",
                          "no error finding at stage dynamo (the findings of later stages were not looked for)"]


def test_all_passing_exits_0(captured: FakeCapture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = MIXED.split("\n\n[[tool.tritoninspect.check]]\nname")[0] + "\n"
    monkeypatch.chdir(project(tmp_path, text, ("add_raw",)))
    result = run("check", "-q")
    assert result.exit_code == ExitCode.OK, result.stderr
    assert result.stdout.splitlines()[-1] == "checks: 1 passed, 0 failed, 0 errors (pyproject.toml)"


def test_an_entry_whose_capture_fails_is_an_error_and_the_others_go_on(captured: FakeCapture, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    table = (HEAD + '[[tool.tritoninspect.check]]\ntarget = "add_raw.py:Raises"\nno_breaks = true\n\n'
             '[[tool.tritoninspect.check]]\ntarget = "add_raw.py:Net"\nno_breaks = true\n')
    monkeypatch.chdir(project(tmp_path, table, ("add_raw",)))
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path.parent))
    result = run("check", "-q", "--junit-xml", str(tmp_path / "j.xml"))
    assert result.exit_code == ExitCode.FINDINGS, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "ERROR add_raw.py:Raises: the model failed under torch.compile: ValueError: bad"
    assert lines[1].startswith("PASS  add_raw.py:Net (compile-only; 2 conditions: --no-breaks, no error finding")
    assert lines[2] == "checks: 1 passed, 0 failed, 1 error (pyproject.toml)"
    # In GitHub Actions: one annotation, at the entry's line, the file named from the workspace.
    assert lines[3:] == [f"::error file={tmp_path.name}/pyproject.toml,line=5,title=tritoninspect%3A could not "
                         "check%3A add_raw.py%3ARaises::the model failed under torch.compile: ValueError: bad"]
    error = ET.parse(tmp_path / "j.xml").getroot().find("testsuite/testcase/error")
    assert error is not None and error.get("type") == "UserCodeError"


def test_the_suite_json_is_versioned(captured: FakeCapture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, MIXED))
    result = run("check", "--json")
    assert result.exit_code == ExitCode.FINDINGS and result.stderr == ""
    data = json.loads(result.stdout)
    assert list(data) == ["schema_version", "tool", "tool_version", "pyproject", "ok", "counts", "checks"]
    assert (data["schema_version"], data["ok"], data["counts"]) == (SUITE_SCHEMA_VERSION, False,
                                                                    {"pass": 1, "fail": 2, "error": 0})
    assert [c["status"] for c in data["checks"]] == ["pass", "fail", "fail"]
    assert list(data["checks"][0]) == ["name", "target", "file", "line", "status", "mode", "seconds", "conditions",
                                       "failures", "error"]


def test_junit_for_one_target_and_a_bad_junit_path(captured: FakeCapture, tmp_path: Path) -> None:
    out = tmp_path / "one.xml"
    result = run("check", "samples/add_raw.py:Net", "--no-breaks", "-q", "--junit-xml", str(out))
    assert result.exit_code == ExitCode.OK, result.stderr
    case = ET.parse(out).getroot().find("testsuite/testcase")
    assert case is not None and (case.get("name"), case.get("file")) == ("samples/add_raw.py:Net",
                                                                         "samples/add_raw.py")
    assert "is a directory" in error_of(run("check", "samples/add_raw.py:Net", "--no-breaks", "--junit-xml",
                                            str(tmp_path)), ExitCode.USAGE)
    assert "does not exist" in error_of(run("check", "samples/add_raw.py:Net", "--no-breaks", "--junit-xml",
                                            str(tmp_path / "no" / "j.xml")), ExitCode.USAGE)
    assert "--jobs: for a project's checks" in error_of(run("check", "samples/add_raw.py:Net", "--no-breaks",
                                                            "-j", "2"), ExitCode.USAGE)


def test_annotations_escape_what_the_runner_reads() -> None:
    failed = CheckResult("t.py:Net", ("--no-breaks",), ("--no-breaks: 100% broken,\nat a:1",))
    suite = SuiteResult("pyproject.toml", (
        EntryResult("a,b:c", "t.py:Net", "dir,x/pyproject.toml", 7, failed),
        EntryResult("ok", "t.py:Net", "pyproject.toml", 0, CheckResult("t.py:Net", ("--no-breaks",), ())),
    ))
    assert render_annotations(suite) == (
        "::error file=dir%2Cx/pyproject.toml,line=7,title=tritoninspect%3A check failed%3A a%2Cb%3Ac::"
        "--no-breaks: 100%25 broken,%0Aat a:1")


@pytest.mark.slow
def test_a_project_end_to_end(tmp_path: Path) -> None:
    """The real CLI on a project: real captures, each in its own child, a dotted target imported from the
    project's folder, run from a subfolder (the pyproject is found upward)."""
    shutil.copy(REPO / "samples" / "triton_op.py", tmp_path / "triton_op.py")
    shutil.copy(REPO / "samples" / "graph_break.py", tmp_path / "graph_break.py")
    (tmp_path / "pyproject.toml").write_text(HEAD + """\
[[tool.tritoninspect.check]]
target = "triton_op:Net"
entries = { add_kernel = "triton_op" }
no_breaks = true

[[tool.tritoninspect.check]]
target = "graph_break.py:Net"
max_graphs = 1
""")
    (tmp_path / "sub").mkdir()
    result = run_cli(["check", "--junit-xml", "j.xml"], cwd=tmp_path / "sub", env=cli_env(GITHUB_ACTIONS=None))
    assert result.returncode == ExitCode.FINDINGS, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("PASS  triton_op:Net (compile-only; 3 conditions: --no-breaks, "
                               "--entry add_kernel=triton_op, no error finding, ")
    assert lines[1] == "FAIL  graph_break.py:Net: --max-graphs 1: 3 Dynamo graphs (0/0, 1/0, 2/0)"
    # Above the current directory, the pyproject is named in full.
    assert lines[2] == f"checks: 1 passed, 1 failed, 0 errors ({tmp_path / 'pyproject.toml'})"
    suite = ET.parse(tmp_path / "sub" / "j.xml").getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("2", "1")


def test_junit_suite_time_is_the_runs_wall_time_not_the_sum_of_parallel_entries() -> None:
    from tritoninspect.analyse.check_suite import EntryResult, SuiteResult
    from tritoninspect.render.junit import render_junit

    entries = tuple(EntryResult(f"e{i}", "m.py:Net", "pyproject.toml", i, None, error="x", seconds=s)
                    for i, s in enumerate((2.0, 3.0), 1))
    root = ET.fromstring(render_junit(SuiteResult("pyproject.toml", entries, seconds=3.25)).split("\n", 1)[1])
    assert root.get("time") == root.find("testsuite").get("time") == "3.250"
    assert [c.get("time") for c in root.iter("testcase")] == ["2.000", "3.000"]
    untimed = ET.fromstring(render_junit(SuiteResult("pyproject.toml", entries)).split("\n", 1)[1])
    assert untimed.get("time") == "5.000"


def test_junit_never_replaces_a_users_file_and_records_a_target_that_could_not_be_checked(
        captured: FakeCapture, tmp_path: Path) -> None:
    """Found by a hostile user: `--junit-xml` replaced any file (a kernel module the model imports), and a target
    that could not be checked left an earlier run's passing JUnit file behind for CI to read."""
    mine = tmp_path / "notes.xml"
    mine.write_text("<mine/>\n")
    assert "tritoninspect did not write it" in error_of(
        run("check", "samples/add_raw.py:Net", "--no-breaks", "--junit-xml", str(mine)), ExitCode.USAGE)
    assert mine.read_text() == "<mine/>\n"

    out = tmp_path / "j.xml"
    assert run("check", "samples/add_raw.py:Net", "--no-breaks", "-q", "--junit-xml", str(out)).exit_code == 0
    assert ET.parse(out).getroot().get("failures") == "0"
    failed = run("check", "samples/add_raw.py:Raises", "--no-breaks", "-q", "--junit-xml", str(out))
    assert failed.exit_code == ExitCode.USER_CODE, failed.stderr
    root = ET.parse(out).getroot()  # replaced: it is ours
    (case,) = root.iter("testcase")
    error = case.find("error")
    assert root.get("errors") == "1" and error is not None and error.get("type") == "UserCodeError"
    assert "ValueError: bad" in (error.get("message") or "")


def test_allow_given_twice_with_space_is_one_rule() -> None:
    """Found by a hostile user: `--allow " aliased_args_split" --allow aliased_args_split` listed it twice."""
    from tritoninspect.commands.check import _conditions

    conditions = _conditions(False, None, [], [], False, [" aliased_args_split", "aliased_args_split"])
    (label,) = conditions
    assert label == "no error finding (--allow aliased_args_split)"
    assert conditions[label]["allow"] == ["aliased_args_split"]
