"""The pytest plugin (entry point `pytest11: tritoninspect`): tritoninspect in a kernel library's tests.

- the `tritoninspect` fixture: `.inspect(module, *input_sets)` and `.target("model.py:Net")` capture in
  the test's process and return the `Report`; `.check(report, no_breaks=True, ...)` fails the test
  with the failed conditions and the report's one-screen view;
- the marker `@pytest.mark.tritoninspect(no_breaks=True, entries={...})`: conditions every report the
  test makes must meet (the conditions of `tritoninspect check`, as `check_report` names them). As with
  `check`, a report with an `error` finding (`Report.findings`) fails too, marker or `.check()`, unless
  its rule is in `allow=[...]` (`check --allow RULE`);
- `--tritoninspect-html DIR`: each report's HTML page into DIR, named after the test;
- `--tritoninspect-compile-only`: compile-only mode held for the whole session, entered before
  conftest.py files and test modules are imported, so that kernel libraries import in it, as the
  CLI imports a target (pytest-cov starts coverage at the same hook for the same reason). With
  pytest-xdist each worker holds it; the controller imports no test and holds nothing.

pytest imports every installed pytest11 plugin in every run of every project in the environment,
so this module imports only pytest and the standard library: torch, Triton and the rest of
tritoninspect load when a test first uses the fixture, or at start-up with the flag.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tritoninspect.model.report import Report

#: The marker's keywords: `check_report`'s conditions, and `allow` (finding rules whose errors are accepted).
CONDITIONS = ("no_breaks", "max_graphs", "entries", "no_clones", "no_fallback", "allow")
#: The fixture's name and the marker's.
NAME = "tritoninspect"
_HELD = pytest.StashKey[contextlib.ExitStack]()
_STARTED = pytest.StashKey[float]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup(NAME, "tritoninspect: what torch.compile did with Triton kernels")
    group.addoption("--tritoninspect-html", metavar="DIR", default=None,
                    help="write the HTML page of every report a test makes into DIR (named after the test)")
    group.addoption("--tritoninspect-compile-only", action="store_true", default=False,
                    help="hold compile-only mode (no GPU: Triton compiles for sm_90, kernels run in its "
                         "interpreter) for the whole session, entered before conftest.py and test modules "
                         "import kernel libraries")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Enter compile-only mode before any conftest.py is imported (the earliest hook a plugin gets)."""
    options = early_config.known_args_namespace
    if not getattr(options, "tritoninspect_compile_only", False):
        return
    if getattr(options, "numprocesses", None) and "PYTEST_XDIST_WORKER" not in os.environ:
        return  # pytest-xdist's controller: the workers import the tests, and each holds the mode
    from tritoninspect.run.pipeline import holding_mode

    stack = contextlib.ExitStack()
    stack.enter_context(holding_mode("cpu"))
    early_config.stash[_HELD] = stack


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{NAME}(**conditions): conditions every report the test's `tritoninspect` fixture makes must "
        f"meet: {', '.join(CONDITIONS)} (as `tritoninspect check`; an error finding fails unless its rule is in "
        "allow)")
    config.stash[_STARTED] = time.time()


def pytest_unconfigure(config: pytest.Config) -> None:
    stack = config.stash.get(_HELD, None)
    if stack is not None:
        del config.stash[_HELD]
        stack.close()


def pytest_report_header(config: pytest.Config) -> str | None:
    if not config.getoption("tritoninspect_compile_only"):
        return None
    where = "in each pytest-xdist worker" if getattr(config.option, "numprocesses", None) else "for the session"
    return f"tritoninspect: compile-only mode held {where} (Triton target sm_90, kernels run in its interpreter)"


def pytest_runtest_setup(item: pytest.Item) -> None:
    marker = item.get_closest_marker(NAME)
    if marker is not None and NAME not in getattr(item, "fixturenames", ()):
        pytest.fail(f"@pytest.mark.{NAME}: the test does not use the `{NAME}` fixture, so it makes no report "
                    "to check", pytrace=False)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    directory = config.getoption("tritoninspect_html")
    if directory is None or hasattr(config, "workerinput"):
        return
    since = config.stash.get(_STARTED, 0.0)
    pages = [p for p in Path(directory).glob("*.html") if p.stat().st_mtime >= since - 1]
    if pages:
        terminalreporter.write_line(f"tritoninspect: {len(pages)} HTML report(s) in {directory}")


@pytest.fixture
def tritoninspect(request: pytest.FixtureRequest) -> Any:
    """Capture modules or targets in this test and check their reports (see `Inspector`)."""
    inspector = Inspector(request)
    yield inspector
    inspector.finish()


class Inspector:
    """The `tritoninspect` fixture: each report it makes is checked against the test's marker and,
    with `--tritoninspect-html DIR`, written to DIR."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self.request = request
        self.reports: list[Report] = []
        marker = request.node.get_closest_marker(NAME)
        self.expected: dict[str, Any] | None = None if marker is None else _validated(marker.kwargs, marker.args)

    def inspect(self, module: Any, *input_sets: Any, stage: str | None = None, **options: Any) -> Report:
        """`inspect_module(module, *input_sets, ...)`: one call per input tuple, in this process."""
        __tracebackhide__ = True
        from tritoninspect import inspect_module

        return self._made(inspect_module(module, *input_sets, stage=stage or self._stage(), **options))

    def target(self, spec: str, *, stage: str | None = None, **options: Any) -> Report:
        """`inspect_target("model.py:Net", ...)`, a relative path taken from the test file's folder."""
        __tracebackhide__ = True
        from tritoninspect import inspect_target

        return self._made(inspect_target(self._rooted(spec), stage=stage or self._stage(), **options))

    def check(self, report: Report, **conditions: Any) -> None:
        """Fail the test when a condition fails, or the report has an error finding whose rule is not in
        `allow` (as `tritoninspect check`): each failure, then the report's one-screen view."""
        __tracebackhide__ = True
        from tritoninspect import check_report

        failures = check_report(report, findings=True, **_validated(conditions))
        if failures:
            pytest.fail(_failure_text(report, failures))

    def finish(self) -> None:
        if self.expected is not None and not self.reports:
            pytest.fail(f"@pytest.mark.{NAME}: the test made no report to check (call tritoninspect.inspect or "
                        ".target)", pytrace=False)

    def _made(self, report: Report) -> Report:
        __tracebackhide__ = True
        self.reports.append(report)
        directory = self.request.config.getoption("tritoninspect_html")
        if directory is not None:
            self._write_html(report, Path(directory))
        if self.expected:
            self.check(report, **self.expected)
        return report

    def _stage(self) -> str:
        """The whole compile: the findings every check holds need Inductor's code and its launches, as
        `check`'s default stage (a test that passes `stage=` checks only the findings that stage shows)."""
        return "inductor"

    def _rooted(self, spec: str) -> str:
        from tritoninspect.source.spec import looks_like_path

        module, colon, attr = spec.rpartition(":")
        if not colon:
            module = spec
        if not looks_like_path(module) or Path(module).is_absolute():
            return spec
        return f"{os.path.normpath(self.request.path.parent / module)}{colon}{attr}"

    def _write_html(self, report: Report, directory: Path) -> None:
        from tritoninspect.render import render_as

        directory.mkdir(parents=True, exist_ok=True)
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.request.node.nodeid).strip("_")[:150]
        count = len(self.reports)
        path = directory / (f"{stem}.html" if count == 1 else f"{stem}-{count}.html")
        path.write_text(render_as(report, "html") + "\n", encoding="utf-8")


def _validated(conditions: Mapping[str, Any], args: tuple[Any, ...] = ()) -> dict[str, Any]:
    """The conditions, refused (failing the test, naming the key) when one is unknown or malformed."""
    __tracebackhide__ = True
    from tritoninspect.analyse.checks import ENTRY_KINDS

    if args:
        pytest.fail(f"{NAME}: conditions are keywords ({', '.join(CONDITIONS)}), not {args!r}", pytrace=False)
    unknown = [key for key in conditions if key not in CONDITIONS]
    if unknown:
        pytest.fail(f"{NAME}: unknown condition {unknown[0]!r}; conditions: {', '.join(CONDITIONS)}", pytrace=False)
    for kernel, kind in dict(conditions.get("entries") or {}).items():
        if kind not in ENTRY_KINDS:
            pytest.fail(f"{NAME}: entries[{kernel!r}] = {kind!r}: choose one of {', '.join(ENTRY_KINDS)}",
                        pytrace=False)
    for key in ("no_clones", "allow"):
        if isinstance(conditions.get(key), str):
            conditions = {**conditions, key: [conditions[key]]}
    return {**conditions, "allow": _allowed(conditions.get("allow") or ())}


def _allowed(rules: Any) -> list[str]:
    """The `allow` rules, each a finding rule (`parse_allow`); an unknown one fails the test, naming the rules."""
    __tracebackhide__ = True
    from tritoninspect.analyse.checks import parse_allow

    try:
        return [parse_allow(rule) for rule in dict.fromkeys(rules)]
    except ValueError as exc:
        pytest.fail(f"{NAME}: {str(exc).replace('--allow ', 'allow: ', 1)}", pytrace=False)


def _failure_text(report: Report, failures: list[str]) -> str:
    from tritoninspect.render import render_as

    head = f"tritoninspect: {len(failures)} condition(s) failed for {report.meta.target}:"
    view = render_as(report, "text", color=False, width=100)
    return "\n".join([head, *(f"  {line}" for line in failures), "", view])
