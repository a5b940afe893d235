"""`tritoninspect graph`: compile a model and report where each Triton kernel went."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from tritoninspect.commands._capture import given_options, refuse_capture_options, report_for
from tritoninspect.commands._edge import edge, exit_if_failed
from tritoninspect.commands._outputs import check_outputs, logs_in, say_trace_written
from tritoninspect.commands._options import (
    BackwardOpt,
    DebugOpt,
    Device,
    DeviceOpt,
    DumpOpt,
    DynamicOpt,
    ForceOpt,
    GraphQuietOpt,
    InputsOpt,
    JsonOpt,
    TargetArchOpt,
    OutputOpt,
    Show,
    Stage,
    StageOpt,
    TargetArg,
    TimeoutOpt,
    folder,
)
from tritoninspect.commands._traces import emit_ranks
from tritoninspect.model.errors import ExitCode, UsageError


def graph(
    target: TargetArg,
    inputs: InputsOpt = None,
    device: DeviceOpt = Device.auto,
    dynamic: DynamicOpt = False,
    backward: BackwardOpt = None,
    stage: StageOpt = Stage.inductor,
    show: Annotated[Optional[Show], typer.Option(help="Print one stage's graphs or code, kernel lines marked.")] = None,
    json_out: JsonOpt = False,
    output: OutputOpt = None,
    dump: DumpOpt = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 when the report has warnings or errors (notes do not count).")
    ] = False,
    resources: Annotated[
        bool, typer.Option("--resources", help="Compile each kernel per autotune config: registers, shared memory, spills.")
    ] = False,
    cudagraphs: Annotated[
        bool, typer.Option("--cudagraphs", help='Compile as mode="reduce-overhead" does (CUDA graphs), call 3 times per input '
                                                'set, and say per graph whether the CUDA graphs took it, or why not.')
    ] = False,
    target_arch: TargetArchOpt = None,
    detail: Annotated[
        bool, typer.Option("--detail", help="Every stage's tables for every kernel, instead of the one-screen summary.")
    ] = False,
    kernel: Annotated[
        Optional[str], typer.Option("--kernel", metavar="NAME", help="The stage-by-stage tables of this kernel only.")
    ] = None,
    trace: Annotated[
        Optional[Path], typer.Option("--trace", metavar="DIR", parser=folder,
                                     help="Also write the run's TORCH_TRACE log into DIR (tlparse opens it).")
    ] = None,
    force: ForceOpt = False,
    timeout: TimeoutOpt = None,
    quiet: GraphQuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Compile a model and report where each Triton kernel went, what it costs, and what to change."""
    from tritoninspect.run.pipeline import CaptureOptions
    from tritoninspect.source.parse import TraceLogs, parse_source

    with edge(json_out=json_out, debug=debug) as err:
        if cudagraphs and stage is not Stage.inductor:
            # The CUDA-graph and epilogue watchers hook Inductor, which an earlier stage never runs.
            raise UsageError(f"--cudagraphs needs Inductor: it cannot go with --stage {stage.value}")
        source = parse_source(target)
        check_outputs(output=output, dump=dump, sources=[source], force=force, trace=trace)
        options = CaptureOptions(inputs=inputs, device=device.value, dynamic=dynamic, backward=backward,
                                 stage=stage.value, resources=resources, arch=target_arch,
                                 trace_dir=str(trace.absolute()) if trace else None, cudagraphs=cudagraphs)
        given = given_options(options, stage=stage is not Stage.inductor, resources=resources, target=target_arch,
                              timeout=timeout, trace=trace, cudagraphs=cudagraphs)
        if isinstance(source, TraceLogs) and source.ranked:
            refuse_capture_options(given, what="reading a TORCH_TRACE folder")
            view = f"show:{show.value}" if show else "detail" if detail or kernel else "text"
            return emit_ranks(source, json_out=json_out, output=output, view=view, kernel=kernel, dump=dump,
                              strict=strict, err=err, quiet=quiet)
        written = logs_in(trace)
        report = report_for(source, options, given=given, err=err, timeout=timeout,
                            progress=not (quiet or json_out), quiet=quiet, json_out=json_out, debug=debug)
        say_trace_written(err, trace, written)
        from tritoninspect.render.emit import emit

        text = "detail" if detail or kernel else "text"
        shown = report.narrowed(kernel) if kernel is not None else report
        # With -o the report goes to the file, and the short summary to the terminal (none with
        # --quiet); --json and --show still print theirs.
        stdout = ("json" if json_out else f"show:{show.value}" if show else
                  (None if quiet else "summary") if output else text)
        # Files (-o, --dump) get the whole report; --kernel narrows what is printed only.
        emit(report, None, output, dump=dump, text=text)
        if stdout is not None:
            emit(report if json_out or show else shown, stdout)
        exit_if_failed(report, err)
        problems = [d for d in report.diagnostics if d.severity != "note"]
        if strict and problems:
            err.print(f"[yellow]--strict: {len(problems)} diagnostic(s)[/]")
            raise typer.Exit(ExitCode.FINDINGS)
