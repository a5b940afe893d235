"""The pytest plugin (issue 25, item 1), run by pytest's own `pytester` on small test files.

Fast tier: the options, the marker's and the assertion helper's failures, and the HTML folder, with
the capture replaced by a saved report (in process). Slow: real captures in a fresh pytest process,
in compile-only mode held for the session, and under pytest-xdist (skipped where it is not installed).
The plugin is found through the `pytest11` entry point where tritoninspect is installed with it;
elsewhere (a checkout run without installing) `-p tritoninspect.pytest_plugin` loads it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from _expect import REPO

pytest_plugins = ("pytester",)

REGISTERED = any(ep.value == "tritoninspect.pytest_plugin" for ep in entry_points(group="pytest11"))
LOAD = () if REGISTERED else ("-p", "tritoninspect.pytest_plugin")
SAVED = REPO / "tests" / "fixtures" / "gpu"

#: The inner tests' conftest: the fixture's captures return a saved report instead (fast tier).
FAKE_CAPTURE = f"""
import pytest, tritoninspect
from tritoninspect.model.report import read_report

@pytest.fixture(autouse=True)
def saved_reports(monkeypatch):
    def fake(module, *input_sets, **options):
        return read_report({str(SAVED)!r} + "/" + module + ".json")
    monkeypatch.setattr(tritoninspect, "inspect_module", fake)
    def fake_target(spec, **options):
        SPECS.append(spec)
        return fake(spec.split(":")[0].rsplit("/", 1)[-1][:-3])
    monkeypatch.setattr(tritoninspect, "inspect_target", fake_target)

SPECS = []
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", *LOAD, *args)


def test_the_entry_point_is_declared() -> None:
    from tritoninspect.source.project import tomllib  # tomli on Python 3.10

    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["entry-points"]["pytest11"] == {"tritoninspect": "tritoninspect.pytest_plugin"}


def test_the_plugin_imports_nothing_heavy() -> None:
    # pytest imports every installed pytest11 plugin in every run, of every project.
    code = ("import sys, tritoninspect.pytest_plugin; "
            "print(sorted(m for m in ('torch', 'triton', 'rich', 'typer') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"


def test_options_and_marker_are_listed(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--help")
    result.stdout.fnmatch_lines(["*--tritoninspect-html=DIR*", "*--tritoninspect-compile-only*"])
    run(pytester, "--markers").stdout.fnmatch_lines(["@pytest.mark.tritoninspect(**conditions):*"])


def test_the_assertion_helper_fails_with_the_one_screen_view(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(FAKE_CAPTURE)
    pytester.makepyfile(test_k="""
        def test_ok(tritoninspect):
            report = tritoninspect.inspect("triton_op")
            tritoninspect.check(report, no_breaks=True, entries={"add_kernel": "triton_op"})

        def test_bad(tritoninspect):
            report = tritoninspect.inspect("graph_break")
            tritoninspect.check(report, no_breaks=True, max_graphs=1)
    """)
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*tritoninspect: 2 condition(s) failed for samples/graph_break.py:Net:",
        "*  --no-breaks: 2 graph breaks: *", "*  --max-graphs 1: 3 Dynamo graphs (0/0, 1/0, 2/0)",
        "*tritoninspect 0.1.0  samples/graph_break.py:Net", "*Kernels (2)", "*Findings, by impact (2)",
    ])


def test_the_marker_checks_every_report_and_the_html_folder(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(FAKE_CAPTURE)
    pytester.makepyfile(test_k="""
        import pytest

        @pytest.mark.tritoninspect(no_breaks=True, entries={"add_kernel": "triton_op"})
        def test_ok(tritoninspect):
            tritoninspect.target("model/triton_op.py:Net")

        def test_a_relative_target_is_taken_from_the_test_folder(tritoninspect):
            from pathlib import Path
            from conftest import SPECS
            tritoninspect.target("../up/triton_op.py:Net")
            assert SPECS[-1] == f"{Path(__file__).parent.parent}/up/triton_op.py:Net"

        @pytest.mark.tritoninspect(entries={"add_kernel": "hop"})
        def test_wrong_entry(tritoninspect):
            tritoninspect.inspect("triton_op")

        @pytest.mark.tritoninspect(no_breaks=True)
        def test_no_fixture():
            pass

        @pytest.mark.tritoninspect(no_break=True)
        def test_typo(tritoninspect):
            pass

        @pytest.mark.tritoninspect(no_breaks=True)
        def test_no_report(tritoninspect):
            pass
    """)
    result = run(pytester, "--tritoninspect-html", "pages", "-rf")
    # A misused marker is an error in the test's setup (or, without a report, its teardown).
    result.assert_outcomes(passed=3, failed=1, errors=3)
    result.stdout.fnmatch_lines_random([
        "*--entry add_kernel=hop: add_kernel entered as triton_op",
        "*@pytest.mark.tritoninspect: the test does not use the `tritoninspect` fixture*",
        "*tritoninspect: unknown condition 'no_break'; conditions: no_breaks, *",
        "*@pytest.mark.tritoninspect: the test made no report to check*",
        "tritoninspect: 3 HTML report(s) in pages",
    ])
    pages = sorted(p.name for p in (pytester.path / "pages").iterdir())
    assert pages == ["test_k.py_test_a_relative_target_is_taken_from_the_test_folder.html", "test_k.py_test_ok.html",
                     "test_k.py_test_wrong_entry.html"]
    assert "<!DOCTYPE html>" in (pytester.path / "pages" / pages[0]).read_text()


def test_error_findings_fail_the_marker_and_the_helper_unless_allowed(pytester: pytest.Pytester) -> None:
    """As `tritoninspect check`: an error finding fails every check, marker or helper; `allow` accepts its
    rule; a warning never fails; an unknown rule is refused. Saved GPU reports of the hazard samples."""
    pytester.makeconftest(FAKE_CAPTURE)
    pytester.makepyfile(test_k="""
        import pytest

        VIEW = "../gpu-hazards/hazard_view_clone_Net"

        @pytest.mark.tritoninspect()
        def test_marker(tritoninspect):
            tritoninspect.inspect(VIEW)

        @pytest.mark.tritoninspect(allow="view_clone_overread")
        def test_marker_allowed(tritoninspect):
            tritoninspect.inspect(VIEW)

        def test_helper(tritoninspect):
            tritoninspect.check(tritoninspect.inspect("../gpu-hazards/hazard_aliasing_Net"), no_breaks=True)

        def test_helper_allowed(tritoninspect):
            report = tritoninspect.inspect("../gpu-hazards/hazard_aliasing_Net")
            tritoninspect.check(report, allow=["aliased_args_split"])

        @pytest.mark.tritoninspect(no_breaks=True)
        def test_a_warning_passes(tritoninspect):
            tritoninspect.inspect("../gpu-hazards/hazard_clone_cost_Net")

        @pytest.mark.tritoninspect(allow=["no_such_rule"])
        def test_unknown_rule(tritoninspect):
            pass
    """)
    result = run(pytester, "-rfE")
    result.assert_outcomes(passed=3, failed=2, errors=1)
    result.stdout.fnmatch_lines_random([
        "*  finding view_clone_overread*(accept it with --allow view_clone_overread)",
        "*  finding aliased_args_split*(accept it with --allow aliased_args_split)",
        "*tritoninspect: allow: 'no_such_rule': no such finding rule; rules: *",
    ])


# --- real captures, in a fresh pytest process -----------------------------------------------------

#: The inner test module imports its kernels at the top, as a kernel library's tests do.
REAL_TESTS = """
import pytest
import torch
from add_raw import Net as RawNet


@pytest.mark.tritoninspect(no_breaks=True, entries={"add_kernel": "triton_op"})
def test_target(tritoninspect):
    report = tritoninspect.target("triton_op.py:Net")
    assert report.meta.mode == "compile-only"


@pytest.mark.tritoninspect(entries={"add_kernel": "hop"}, max_graphs=1)
def test_module(tritoninspect):
    tritoninspect.inspect(RawNet(), (torch.randn(64), torch.randn(64)))


def test_fails_with_the_view(tritoninspect):
    report = tritoninspect.inspect(RawNet(), (torch.randn(64), torch.randn(64)))
    tritoninspect.check(report, entries={"add_kernel": "custom_op"})


def test_a_plain_torch_compile_of_the_users_own():
    # A library's own test compiling its kernel: Inductor failed ("0 compatible backends for target (cpu)").
    x, y = torch.randn(64), torch.randn(64)
    torch._dynamo.reset()
    torch.testing.assert_close(torch.compile(RawNet())(x, y), RawNet()(x, y))
"""


def real_project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("triton_op", "add_raw"):
        shutil.copy(REPO / "samples" / f"{name}.py", pytester.path / f"{name}.py")
    pytester.makepyfile(test_kernels=REAL_TESTS)
    # The fresh process imports this checkout's tritoninspect (and, where it runs, xdist from the same path).
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))


@pytest.mark.slow
def test_compile_only_session_with_real_captures(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    real_project(pytester, monkeypatch)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *LOAD, "--tritoninspect-compile-only",
                                           "--tritoninspect-html", "html", timeout=600)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines_random([
        "tritoninspect: compile-only mode held for the session*",
        "*tritoninspect: 1 condition(s) failed for *Net:",
        "*--entry add_kernel=custom_op: add_kernel entered as hop",
        "tritoninspect: 3 HTML report(s) in html",
    ])
    assert len(list((pytester.path / "html").glob("*.html"))) == 3


@pytest.mark.slow
def test_under_pytest_xdist(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    if importlib.util.find_spec("xdist") is None:
        pytest.skip("pytest-xdist is not installed (the `test` extra has it)")
    real_project(pytester, monkeypatch)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *LOAD, "-n", "2",
                                           "--tritoninspect-compile-only", "--tritoninspect-html", "html",
                                           timeout=600)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines_random(["tritoninspect: compile-only mode held in each pytest-xdist worker*",
                                        "*--entry add_kernel=custom_op: add_kernel entered as hop",
                                        "tritoninspect: 3 HTML report(s) in html"])
