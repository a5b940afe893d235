"""`tritoninspect check`: conditions on a report (or a target's capture) as an exit code, for CI."""

from __future__ import annotations

from typing import Annotated, Any, Optional

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
    TargetArg,
    TimeoutOpt,
)
from tritoninspect.model.errors import ExitCode, usage_errors


def check(
    target: TargetArg,
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
    json_out: JsonOpt = False,
    timeout: TimeoutOpt = None,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Exit 1 when a condition fails (one line each), 0 when all hold: for CI.

    Every check also fails on an error finding (the compiled result can differ from eager) unless
    `--allow RULE` accepts its rule.
    """
    from tritoninspect.run.pipeline import CaptureOptions
    from tritoninspect.source.parse import parse_source

    with edge(json_out=json_out, debug=debug) as err:
        conditions = _conditions(no_breaks, max_graphs, entry or [], no_clones or [], no_fallback, allow or [])
        # The findings read Inductor's code and its launches, so the default stage is Inductor's.
        options = CaptureOptions(inputs=inputs, device=device.value, dynamic=dynamic, backward=backward,
                                 stage=stage.value if stage else "inductor")
        report = report_for(parse_source(target), options,
                            given=given_options(options, stage=stage is not None, timeout=timeout),
                            err=err, timeout=timeout, progress=not (quiet or json_out), json_out=json_out,
                            debug=debug)
        from tritoninspect.analyse.checks import run_checks
        from tritoninspect.render.emit import emit

        result = run_checks(report, conditions, target=target)
        emit(result, "json" if json_out else "check")
        if not result.ok:
            raise typer.Exit(ExitCode.FINDINGS)


def _conditions(no_breaks: bool, max_graphs: int | None, entries: list[str], no_clones: list[str],
                no_fallback: bool, allow: list[str]) -> dict[str, Any]:
    """The conditions as `check_report` keywords, keyed for display; refuses bad ones. The findings
    condition is always there."""
    from tritoninspect.analyse.checks import parse_allow, parse_entry

    with usage_errors():
        parsed = dict(parse_entry(e) for e in entries)
        allowed = [parse_allow(rule) for rule in dict.fromkeys(allow)]
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
    label = "no error finding" + (f" (--allow {', '.join(allowed)})" if allowed else "")
    conditions[label] = {"findings": True, "allow": allowed}
    return conditions
