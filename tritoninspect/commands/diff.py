"""`tritoninspect diff`: two variants of a model (or two saved reports), side by side.

Each target is captured in its own fresh process (`tritoninspect/sides/`), so the two
compiles share no state; `--bench` times each side there too.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.markup import escape
from rich.console import Console

from tritoninspect.commands._edge import (
    check_output_file,
    edge,
    given_options,
    one_line,
    refuse_capture_options,
    spinner,
)
from tritoninspect.commands._options import (
    BackwardOpt,
    Device,
    DeviceOpt,
    DynamicOpt,
    ForceOpt,
    JsonOpt,
    Stage,
    StageOpt,
    TimeoutOpt,
)
from tritoninspect.errors import ExitCode, UsageError, usage_errors

if TYPE_CHECKING:
    from tritoninspect.pipeline import CaptureOptions
    from tritoninspect.sides.parent import SideResult


def diff(
    a: Annotated[str, typer.Argument(metavar="A", help="A: model.py:Net, package.module:Net, or a saved report.json.")],
    b: Annotated[str, typer.Argument(metavar="B", help="B: the same forms as A, e.g. model.py:OpNet.")],
    inputs: Annotated[
        Optional[str], typer.Option("--inputs", "-i", help="Example inputs for A, and for B unless --inputs-b.")
    ] = None,
    inputs_b: Annotated[Optional[str], typer.Option("--inputs-b", help="Example inputs for B.")] = None,
    device: DeviceOpt = Device.auto,
    dynamic: DynamicOpt = False,
    backward: BackwardOpt = None,
    stage: StageOpt = Stage.inductor,
    bench: Annotated[
        bool, typer.Option("--bench", help="Time each side eager and compiled on the GPU (compile times only on CPU).")
    ] = False,
    json_out: JsonOpt = False,
    output: Annotated[
        Optional[Path], typer.Option("--output", "-o", help="Also write the diff to a file (.json or text).")
    ] = None,
    save: Annotated[
        Optional[Path], typer.Option("--save", help="Write each side's report to DIR/A.json and DIR/B.json.")
    ] = None,
    context: Annotated[int, typer.Option("--context", min=0, help="Lines of context in graph diffs.")] = 3,
    force: ForceOpt = False,
    timeout: TimeoutOpt = None,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show full tracebacks and the capture processes' output.")
    ] = False,
) -> None:
    """Compare two variants of a model (or two saved reports): graphs, kernels, copies, compile and run time.

    Each target is compiled in its own fresh process, so the two compiles share no state.
    """
    from tritoninspect.pipeline import CaptureOptions

    with edge(json_out=json_out, debug=debug) as err:
        options = CaptureOptions(inputs=inputs, device=device.value, dynamic=dynamic, backward=backward,
                                 stage=stage.value)
        _check_options(a, b, options, inputs_b=inputs_b, bench=bench, stage_given=stage is not Stage.inductor)
        check_output_file(output, [a, b], force=force)
        side_a, side_b = _sides(a, b, options, inputs_b=inputs_b, bench=bench, save=save, debug=debug, err=err,
                                timeout=timeout)
        from tritoninspect.render.emit import emit
        from tritoninspect.sides.parent import build_diff

        # The diff is printed even with -o; any suffix but .json gets the text (README).
        file_fmt = None if output is None else "json" if output.suffix.lower() == ".json" else "diff"
        emit(build_diff(side_a, side_b, context=context), "json" if json_out else "diff", output, file_fmt=file_fmt)
        failed = [s for s in (side_a, side_b) if s.report.failure is not None]
        if failed:
            from tritoninspect.render._failure import failure_line

            for label, s in zip(("A", "B"), (side_a, side_b)):
                if s.report.failure is not None:
                    err.print(f"[bold red]error:[/] {label}: {escape(one_line(failure_line(s.report.failure)))}",
                              highlight=False, soft_wrap=True)
            raise typer.Exit(int(ExitCode.USER_CODE))


def _check_options(a: str, b: str, options: CaptureOptions, *, inputs_b: str | None, bench: bool,
                   stage_given: bool) -> None:
    from tritoninspect.spec import is_saved_report

    from tritoninspect.traces import is_trace

    saved_a, saved_b = is_saved_report(a) or is_trace(a), is_saved_report(b) or is_trace(b)
    if saved_a and saved_b:
        given = given_options(options, stage=stage_given, bench=bench)
        refuse_capture_options({"inputs": given.pop("inputs"), "inputs_b": inputs_b, **given})
    if bench and (saved_a or saved_b):
        raise UsageError("--bench times targets in fresh processes: give two targets, not a saved report")
    if inputs_b is not None and saved_b:
        raise UsageError("--inputs-b: B is a saved report, nothing is compiled for it")


def _sides(a: str, b: str, options: CaptureOptions, *, inputs_b: str | None, bench: bool, save: Path | None,
           debug: bool, err: Console, timeout: float | None) -> tuple[SideResult, SideResult]:
    """Each side, saved or captured in a fresh process; written to `save` when asked."""
    from tritoninspect.sides import parent as sides

    b_inputs = options.inputs if inputs_b is None else inputs_b
    with usage_errors():
        if save is not None:
            sides.check_save_dir(save)  # before two long compiles, not after them
        results = []
        for label, source, side_inputs in (("A", a, options.inputs), ("B", b, b_inputs)):
            with spinner(err, f"{label}: compiling {source} in a fresh process"):
                side_options = dataclasses.replace(options, inputs=side_inputs)
                results.append(sides.get_side(label, source, options=side_options, bench=bench, debug=debug,
                                              timeout=timeout))
        side_a, side_b = results
        if save is not None:
            sides.save_reports(save, side_a, side_b)
            sys.stderr.write(f"wrote {save / 'A.json'} and {save / 'B.json'}\n")
    return side_a, side_b
