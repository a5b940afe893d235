"""`check`'s CI outputs: a project's checks run (no TARGET), and what any check says to CI.

- `find_and_load()`: the nearest pyproject.toml with `[tool.tritoninspect]`, validated;
- `run(project, jobs, ...)`: every entry captured in its own process (children/project.py),
  its progress on stderr as `diff` shows its sides';
- `say(suite, ...)` / `say_one(result, ...)`: the text (or `--json`) on stdout, the JUnit XML
  file, and, in GitHub Actions, an `::error` annotation per failed entry.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from tritoninspect.model.errors import TritonInspectError, UsageError

if TYPE_CHECKING:
    from tritoninspect.analyse.check_suite import SuiteResult
    from tritoninspect.analyse.checks import CheckResult
    from tritoninspect.children.project import Job
    from tritoninspect.source.parse import Source
    from tritoninspect.source.project import Project


def find_and_load() -> Project:
    from tritoninspect.source.project import find_project, load_project

    return load_project(find_project(Path.cwd()))


def run(project: Project, jobs: list[Job], *, parallel: int | None, err: Console, timeout: float | None,
        lines: bool, debug: bool) -> SuiteResult:
    """Every job, `parallel` at a time (default: one per CPU core, at most one per job); progress on
    `err`: a status on a terminal, else a line per entry per stage unless `lines` is off."""
    from tritoninspect.children.project import check_all
    from tritoninspect.commands._progress import SidesDisplay

    parallel = parallel or max(1, min(len(jobs), os.cpu_count() or 1))
    what = f"checking {len(jobs)} entries of {shown(project.path)}, {parallel} at a time, each in a fresh process"
    # With --debug the children's own output goes to stderr as it comes: no second stream of stages.
    display = SidesDisplay(err, what, [job.name for job in jobs], lines=lines) if not debug else None
    with display or contextlib.nullcontext():
        return check_all(jobs, pyproject=shown(project.path), cwd=project.root, parallel=parallel, timeout=timeout,
                         debug=debug, progress=display)


def say(suite: SuiteResult, *, json_out: bool, junit_xml: Path | None) -> bool:
    """The suite on stdout (text or JSON), in `junit_xml`, and as annotations; whether all passed."""
    from tritoninspect.render.emit import emit

    emit(suite, "json" if json_out else "check", junit_xml, file_fmt="junit")
    if in_github_actions() and not json_out and not suite.ok:
        emit(suite, "github")
    return suite.ok


def say_one(result: CheckResult, source: Source, *, json_out: bool, junit_xml: Path | None,
            seconds: float | None = None) -> bool:
    """One target's result as `check` always printed it; JUnit and annotations as for a suite of one."""
    from tritoninspect.analyse.check_suite import EntryResult, SuiteResult
    from tritoninspect.render.emit import emit

    emit(result, "json" if json_out else "check")
    file = repo_path(source.files[0]) if source.files else result.target
    entry = EntryResult(result.target, result.target, file, 0, result, seconds=seconds)
    suite = SuiteResult(result.target, (entry,), seconds=seconds)
    if junit_xml is not None:
        emit(suite, None, junit_xml, file_fmt="junit")
    if in_github_actions() and not json_out and not suite.ok:
        emit(suite, "github")
    return result.ok


def junit_for_error(exc: TritonInspectError, target: str, source: Source, junit_xml: Path | None,
                    seconds: float | None = None) -> None:
    """A target that could not be checked still gets its JUnit file, with the error as the test case's
    `error`: a pass written by an earlier run must not stay behind for CI to read (a hostile user's find)."""
    if junit_xml is None:
        return
    from tritoninspect.analyse.check_suite import EntryResult, SuiteResult
    from tritoninspect.render.emit import emit

    file = repo_path(source.files[0]) if source.files else target
    entry = EntryResult(target, target, file, 0, None, error=str(exc), error_kind=type(exc).__name__, seconds=seconds)
    emit(SuiteResult(target, (entry,), seconds=seconds), None, junit_xml, file_fmt="junit")


def in_github_actions() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def repo_path(path: Path) -> str:
    """`path` as annotations name it: relative to the repository (GitHub's workspace), else to the
    current directory; absolute when it is under neither."""
    base = os.environ.get("GITHUB_WORKSPACE") if in_github_actions() else None
    return shown(path, Path(base) if base else Path.cwd())


def shown(path: Path, base: Path | None = None) -> str:
    resolved, base = path.resolve(), (base or Path.cwd()).resolve()
    return resolved.relative_to(base).as_posix() if resolved.is_relative_to(base) else str(resolved)


def check_junit_path(path: Path | None, *reads: Path) -> None:
    """Refuse a `--junit-xml` path now, before any compile (UsageError, exit 2): its folder must
    exist and be writable, it must not be a folder or a file this run reads (the pyproject.toml,
    the model). An existing file is replaced when tritoninspect wrote it (CI writes it every run), never
    a file of the user's."""
    if path is None:
        return
    if path.is_dir():
        raise UsageError(f"--junit-xml {path}: is a directory; give a file name such as junit.xml")
    parent = path.parent
    if not parent.is_dir():
        raise UsageError(f"--junit-xml {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--junit-xml {path}: the directory {parent} is not writable")
    for read in reads:
        with contextlib.suppress(OSError):
            if path.exists() and os.path.samefile(path, read):
                raise UsageError(f"--junit-xml {path}: this run reads that file; write the XML elsewhere")
    from tritoninspect.render.emit import written_by_tritoninspect

    # Replaced only when it is ours (a JUnit file or report an earlier run wrote): never a user's file.
    if path.exists() and not written_by_tritoninspect(path):
        raise UsageError(f"--junit-xml {path}: the file exists and tritoninspect did not write it",
                         hint="choose another name, or remove the file first")
