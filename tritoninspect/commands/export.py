"""`tritoninspect export`: torch.export and AOTInductor, per kernel."""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import TYPE_CHECKING, Annotated

import typer

from tritoninspect.commands._edge import (
    check_outputs,
    edge,
    exit_if_failed,
    one_process,
    ready_to_capture,
    refuse_capture_options,
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
    QuietOpt,
    TargetArchOpt,
    TargetArg,
    TimeoutOpt,
)

if TYPE_CHECKING:
    from rich.console import Console

    from tritoninspect.pipeline_export import ExportOptions
    from tritoninspect.model.report import Report


class ExportStage(str, Enum):
    export = "export"
    aoti = "aoti"


def export(
    target: TargetArg,
    inputs: InputsOpt = None,
    device: DeviceOpt = Device.auto,
    # Two flags, not "--strict/--non-strict": with that, both given would silently mean the last one.
    strict: Annotated[
        bool, typer.Option("--strict", help="Export strictly (Dynamo). Default: torch.export's own (the report says which).")
    ] = False,
    non_strict: Annotated[bool, typer.Option("--non-strict", help="Export non-strictly.")] = False,
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
    target_arch: TargetArchOpt = None,
    force: ForceOpt = False,
    timeout: TimeoutOpt = None,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Export a model (torch.export, then AOTInductor) and report what happened to each Triton kernel."""
    from tritoninspect.pipeline_export import ExportOptions

    with edge(json_out=json_out, debug=debug) as err:
        strictness = _strictness(strict, non_strict)
        check_outputs(output=output, dump=dump, targets=[target], force=force)
        options = ExportOptions(inputs=inputs, device=device.value, strict=strictness, stage=stage.value,
                                dynamic=dynamic, arch=target_arch)
        given = {"inputs": inputs, "device": device is not Device.auto, "strict": strictness is not None,
                 "dynamic": dynamic, "stage": stage is not ExportStage.aoti, "target": target_arch,
                 "timeout": timeout}
        report = _report(target, options, given, err, timeout, progress=not (quiet or json_out), debug=debug)
        from tritoninspect.render.emit import emit
        from tritoninspect.render.export import export_failure_line

        emit(report, "json" if json_out else None if output else "text", output, dump=dump)
        # A short line: torch's export errors run to hundreds of characters.
        exit_if_failed(report, err, line=export_failure_line)


def _strictness(strict: bool, non_strict: bool) -> bool | None:
    """True, False, or None (torch's default); both flags at once is a usage error."""
    if strict and non_strict:
        from tritoninspect.model.errors import UsageError

        raise UsageError("--strict and --non-strict contradict each other: give one (or neither, for torch's default)")
    return True if strict else False if non_strict else None


def _report(target: str, options: ExportOptions, given: dict[str, object], err: Console,
            timeout: float | None, *, progress: bool, debug: bool) -> Report:
    """A saved report as it is, or the target exported (its progress on stderr, as `graph`'s)."""
    from tritoninspect.spec import is_saved_report, parse_spec

    if is_saved_report(target):
        refuse_capture_options(given)
        from tritoninspect.model.report import read_report

        return read_report(target)
    from tritoninspect.traces import refuse_trace

    refuse_trace(target, "export")
    spec = parse_spec(target)
    from tritoninspect.pipeline_export import run_export
    from tritoninspect.progress import ProgressDisplay
    from tritoninspect.stdout_guard import stdout_to_stderr

    # The stage and elapsed time: a live status on a terminal; piped, a line per stage unless `progress` is off.
    display = ProgressDisplay(err, f"Exporting {spec.name}", lines=progress, debug=debug)
    # The time limit outside the stdout guard: its watchdog keeps the real stdout for the JSON envelope;
    # after the guard, fd 1 stays on stderr (threads the user's code left running print there).
    with one_process(), display:
        ready_to_capture()  # its first stage: importing torch and Triton takes seconds
        with time_limit(timeout), stdout_to_stderr(for_good=True):
            return run_export(spec, dataclasses.replace(options, torch_logs=debug))  # --debug: torch's logs too


