"""`tritoninspect export`: torch.export and AOTInductor, per kernel."""

from enum import Enum
from typing import TYPE_CHECKING, Annotated

import typer

from tritoninspect.commands._capture import report_for
from tritoninspect.commands._edge import edge, exit_if_failed
from tritoninspect.commands._outputs import check_outputs
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
    ModelTargetArg,
    TimeoutOpt,
)

if TYPE_CHECKING:
    from tritoninspect.model.report import Report
    from tritoninspect.source.parse import Source


class ExportStage(str, Enum):
    export = "export"
    aoti = "aoti"


def export(
    target: ModelTargetArg,
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
    from tritoninspect.run.pipeline_export import ExportOptions
    from tritoninspect.source.parse import parse_source

    with edge(json_out=json_out, debug=debug) as err:
        strictness = _strictness(strict, non_strict)
        source = parse_source(target)
        check_outputs(output=output, dump=dump, sources=[source], force=force)
        _refuse_trace(source)
        options = ExportOptions(inputs=inputs, device=device.value, strict=strictness, stage=stage.value,
                                dynamic=dynamic, arch=target_arch)
        given = {"inputs": inputs, "device": device is not Device.auto, "strict": strictness is not None,
                 "dynamic": dynamic, "stage": stage is not ExportStage.aoti, "target": target_arch,
                 "timeout": timeout}
        report = report_for(source, options, given=given, err=err, timeout=timeout,
                            progress=not (quiet or json_out), quiet=quiet, json_out=json_out, debug=debug)
        _refuse_compile_report(source, report)
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


def _refuse_trace(source: "Source") -> None:
    """Export needs a model: a TORCH_TRACE trace holds logs of a past run, no program to export."""
    from tritoninspect.source.parse import TraceLogs

    if isinstance(source, TraceLogs):
        from tritoninspect.model.errors import TargetError

        raise TargetError(f"export needs a model target (path/to/model.py:Net), not a TORCH_TRACE trace: "
                          f"{source.text} holds logs of a past run, nothing to export")


def _refuse_compile_report(source: "Source", report: "Report") -> None:
    """A saved report re-renders as an export's only when it is one: `graph`'s report (torch.compile) has no
    `export` block, and `export` printed it as if the model had been exported."""
    from tritoninspect.source.parse import SavedReport

    if isinstance(source, SavedReport) and report.export is None:
        from tritoninspect.model.errors import TargetError

        raise TargetError(f"export needs a model target (path/to/model.py:Net) or a saved export report: "
                          f"{source.text} is a torch.compile report; show it with `tritoninspect graph {source.text}`")
