"""`tritoninspect check`: conditions on a report (or a target's capture) as an exit code, for CI."""

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from tritoninspect.commands._capture import given_options, report_for
from tritoninspect.commands._edge import edge
from tritoninspect.commands._options import (
    BackwardOpt,
    DebugOpt,
    Device,
    DeviceOpt,
    DynamicOpt,
    InputsOpt,
    JsonOpt,
    QuietOpt,
    Stage,
    TimeoutOpt,
)
from tritoninspect.model.errors import ExitCode, TritonInspectError, UsageError, usage_errors

if TYPE_CHECKING:
    from tritoninspect.children.project import Job
    from tritoninspect.run.pipeline import CaptureOptions
    from tritoninspect.source.project import CheckEntry, Project


def _junit_file(value: str) -> Path:
    """`--junit-xml` as typed: `-` would be stdout, which carries check's own results (and GitHub's
    annotations): refused, where it wrote a file named `-`; `./-` names that file."""
    if value == "-":
        raise typer.BadParameter("- would be stdout, where check prints its results; give a file name such as "
                                 "junit.xml (./- for one named -)")
    return Path(value)


def check(
    target: Annotated[
        Optional[str],
        typer.Argument(metavar="TARGET", show_default=False,
                       help="model.py:Net, package.module:Net, a saved report.json, or a TORCH_TRACE log. "
                            "Without it: every "
                            "[\\[tool.tritoninspect.check]] entry of the nearest pyproject.toml, in parallel."),
    ] = None,
    no_breaks: Annotated[bool, typer.Option("--no-breaks", help="Fail on any graph break.")] = False,
    max_graphs: Annotated[
        Optional[int], typer.Option("--max-graphs", min=0, metavar="N", help="Fail on more than N Dynamo graphs.")
    ] = None,
    entry: Annotated[
        Optional[list[str]],
        typer.Option("--entry", metavar="KERNEL=ENTRY", help="KERNEL=hop|triton_op|custom_op: the only way KERNEL may enter (repeatable)."),
    ] = None,
    no_clones: Annotated[
        Optional[list[str]],
        typer.Option("--no-clones", metavar="KERNEL", help="Fail when Inductor still clones an argument of KERNEL after re-inplacing (repeatable)."),
    ] = None,
    no_fallback: Annotated[bool, typer.Option("--no-fallback", help="Fail on a mutation-analysis fallback.")] = False,
    allow: Annotated[
        Optional[list[str]],
        typer.Option("--allow", metavar="RULE", help="Accept error findings of RULE (repeatable): every other error "
                     "finding (the compiled result can differ from eager) fails the check."),
    ] = None,
    inputs: InputsOpt = None,
    device: DeviceOpt = Device.auto,
    dynamic: DynamicOpt = False,
    backward: BackwardOpt = None,
    stage: Annotated[
        Optional[Stage], typer.Option(help="Default: inductor (the findings need Inductor's code and its launches); "
                                      "an earlier stage checks only the findings it shows.")
    ] = None,
    junit_xml: Annotated[
        Optional[Path], typer.Option("--junit-xml", metavar="PATH", parser=_junit_file,
                                     help="Also write JUnit XML: one testcase per pyproject entry (or for TARGET).")
    ] = None,
    jobs: Annotated[
        Optional[int], typer.Option("--jobs", "-j", min=1, metavar="N",
                                    help="Without TARGET: entries captured at once (default: one per CPU core).")
    ] = None,
    json_out: JsonOpt = False,
    timeout: TimeoutOpt = None,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Exit 1 when a condition fails (one line each), 0 when all hold: for CI.

    Every check also fails on an error finding (the compiled result can differ from eager) unless
    `--allow RULE` accepts its rule. Without a TARGET, every [\\[tool.tritoninspect.check]] entry of the
    nearest pyproject.toml (from the current directory upward) is checked, each in its own process: one
    line per entry.
    """
    from tritoninspect.commands import _project

    with edge(json_out=json_out, debug=debug) as err:
        if target is None:
            _refuse_for_project(no_breaks=no_breaks, max_graphs=max_graphs is not None, entry=bool(entry),
                                no_clones=bool(no_clones), no_fallback=no_fallback, allow=bool(allow),
                                inputs=inputs is not None, dynamic=dynamic, backward=backward is not None,
                                stage=stage is not None)
            project = _project.find_and_load()
            _project.check_junit_path(junit_xml, project.path)
            suite = _project.run(project, [_job(project, e, device.value) for e in project.entries], parallel=jobs,
                                 err=err, timeout=timeout, lines=not (quiet or json_out), debug=debug)
            ok = _project.say(suite, json_out=json_out, junit_xml=junit_xml)
        else:
            if jobs is not None:
                raise UsageError("--jobs: for a project's checks, without a TARGET")
            from tritoninspect.analyse.checks import run_checks
            from tritoninspect.source.parse import parse_source

            conditions = _conditions(no_breaks, max_graphs, entry or [], no_clones or [], no_fallback, allow or [])
            options = _options(conditions, inputs=inputs, device=device.value, dynamic=dynamic, backward=backward,
                               stage=stage.value if stage else None)
            source = parse_source(target)
            _project.check_junit_path(junit_xml, *source.files)
            started = time.monotonic()
            try:
                report = report_for(source, options,
                                    given=given_options(options, stage=stage is not None, timeout=timeout),
                                    err=err, timeout=timeout, progress=not (quiet or json_out), quiet=quiet,
                                    json_out=json_out, debug=debug)
            except TritonInspectError as exc:
                _project.junit_for_error(exc, target, source, junit_xml, time.monotonic() - started)
                raise
            result = run_checks(report, conditions, target=target, cwd=Path.cwd())  # files as the user names them
            ok = _project.say_one(result, source, json_out=json_out,
                                  junit_xml=junit_xml, seconds=time.monotonic() - started)
        if not ok:
            raise typer.Exit(ExitCode.FINDINGS)


def _options(conditions: dict[str, Any], *, inputs: str | None, device: str, dynamic: bool, backward: bool | None,
             stage: str | None) -> "CaptureOptions":
    """The capture the conditions need: the earliest stage that shows them unless `stage` says otherwise."""
    from tritoninspect.run.pipeline import CaptureOptions

    # Clones and fallbacks appear in AOT; --no-clones asks about the compiled program: what
    # re-inplacing leaves needs Inductor, and so do the findings (Inductor's code and its launches),
    # which every check holds (an earlier --stage checks only the findings it shows).
    keywords = [k for kw in conditions.values() for k in kw]
    needed = ("inductor" if "no_clones" in keywords or "findings" in keywords
              else "aot" if "no_fallback" in keywords else "dynamo")
    return CaptureOptions(inputs=inputs, device=device, dynamic=dynamic, backward=backward, stage=stage or needed)


def _job(project: "Project", entry: "CheckEntry", device: str) -> "Job":
    """One pyproject entry as a job: its conditions as `check`'s flags would give them."""
    from tritoninspect.children.project import Job
    from tritoninspect.commands._project import repo_path
    from tritoninspect.source.project import entry_source

    try:
        conditions = _conditions(entry.no_breaks, entry.max_graphs, [f"{k}={v}" for k, v in entry.entries.items()],
                                 list(entry.no_clones), entry.no_fallback, list(entry.allow))
    except UsageError as exc:
        raise UsageError(f"{project.path}: {entry.where}: {exc.message}") from exc
    options = _options(conditions, inputs=entry.inputs, device=device, dynamic=entry.dynamic, backward=entry.backward,
                       stage=entry.stage)
    return Job(entry.name, entry.target, entry_source(project, entry), options, conditions,
               file=repo_path(project.path), line=entry.line)


def _refuse_for_project(**given: bool) -> None:
    """Without a TARGET the conditions and capture options come from each pyproject entry."""
    used = [f"--{name.replace('_', '-')}" for name, value in given.items() if value]
    if used:
        raise UsageError(f"{', '.join(used)}: give a TARGET, or set them in the pyproject.toml's "
                         "[[tool.tritoninspect.check]] entries (without a TARGET, those are checked)")


def _conditions(no_breaks: bool, max_graphs: int | None, entries: list[str], no_clones: list[str],
                no_fallback: bool, allow: list[str]) -> dict[str, Any]:
    """The conditions as `check_report` keywords, keyed for display; refuses bad ones. The findings
    condition is always there."""
    from tritoninspect.analyse.checks import findings_condition, parse_allow, parse_entry

    with usage_errors():
        parsed = dict(parse_entry(e) for e in entries)
        allowed = list(dict.fromkeys(parse_allow(rule) for rule in allow))  # " x" and "x" are one rule
    conditions: dict[str, Any] = {}
    if no_breaks:
        conditions["--no-breaks"] = {"no_breaks": True}
    if max_graphs is not None:
        conditions[f"--max-graphs {max_graphs}"] = {"max_graphs": max_graphs}
    for kernel, kind in parsed.items():
        conditions[f"--entry {kernel}={kind}"] = {"entries": {kernel: kind}}
    for kernel in dict.fromkeys(no_clones):
        conditions[f"--no-clones {kernel}"] = {"no_clones": [kernel]}
    if no_fallback:
        conditions["--no-fallback"] = {"no_fallback": True}
    conditions[findings_condition(allowed)] = {"findings": True, "allow": allowed}
    return conditions
