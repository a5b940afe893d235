"""`tritoninspect export`: torch.export and AOTInductor, per kernel."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from tritoninspect.commands._edge import (
    check_outputs,
    edge,
    exit_if_failed,
    ready_to_capture,
    refuse_capture_options,
    spinner,
    time_limit,
)
from tritoninspect.commands._options import (
    DebugOpt,
    Device,
    DeviceOpt,
    DumpOpt,
    ForceOpt,
    InputsOpt,
    JsonOpt,
    OutputOpt,
    TargetArg,
    TimeoutOpt,
)

if TYPE_CHECKING:
    from rich.console import Console

    from tritoninspect.pipeline_export import ExportOptions
    from tritoninspect.report import Report


class ExportStage(str, Enum):
    export = "export"
    aoti = "aoti"


def export(
    target: TargetArg,
    inputs: InputsOpt = None,
    device: DeviceOpt = Device.auto,
    strict: Annotated[
        Optional[bool],
        typer.Option("--strict/--non-strict",
                     help="Export strictly (Dynamo) or not (default: torch.export's own default; the report says which)."),
    ] = None,
    dynamic: Annotated[
        bool,
        typer.Option("--dynamic",
                     help="Dynamic shapes: the target's export_dynamic_shapes() if it has one, else Dim.AUTO on every dimension."),
    ] = False,
    stage: Annotated[
        ExportStage, typer.Option(help="Stop after torch.export, or build the AOTInductor package (aoti).")
    ] = ExportStage.aoti,
    json_out: JsonOpt = False,
    output: OutputOpt = None,
    dump: DumpOpt = None,
    target_arch: Annotated[
        Optional[str], typer.Option("--target", help="Compile-only mode's GPU architecture (default sm_90).")
    ] = None,
    force: ForceOpt = False,
    timeout: TimeoutOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Export a model (torch.export, then AOTInductor) and report what happened to each Triton kernel."""
    from tritoninspect.pipeline_export import ExportOptions

    with edge(json_out=json_out, debug=debug) as err:
        check_outputs(output=output, dump=dump, targets=[target], force=force)
        options = ExportOptions(inputs=inputs, device=device.value, strict=strict, stage=stage.value,
                                dynamic=dynamic, arch=target_arch)
        given = {"inputs": inputs, "device": device is not Device.auto, "strict": strict is not None,
                 "dynamic": dynamic, "stage": stage is not ExportStage.aoti, "target": target_arch,
                 "timeout": timeout}
        report = _report(target, options, given, err, timeout)
        from tritoninspect.render.emit import emit

        emit(report, "json" if json_out else None if output else "text", output, dump=dump)
        exit_if_failed(report, err)


def _report(target: str, options: ExportOptions, given: dict[str, object], err: Console,
            timeout: float | None) -> Report:
    """A saved report as it is, or the target exported (the spinner on stderr)."""
    from tritoninspect.spec import is_saved_report, parse_spec

    if is_saved_report(target):
        refuse_capture_options(given)
        from tritoninspect.report import read_report

        return read_report(target)
    from tritoninspect.traces import refuse_trace

    refuse_trace(target, "export")
    spec = parse_spec(target)
    ready_to_capture()
    from tritoninspect.pipeline_export import run_export
    from tritoninspect.stdout_guard import stdout_to_stderr

    with spinner(err, f"Exporting {spec.display_name}:{spec.attr}"), stdout_to_stderr(), time_limit(timeout):
        return run_export(spec, options)
