"""`tritoninspect diff A B [C ...]`: variants of a model (or saved reports), each against the first.

Each target is captured in its own fresh process (`tritoninspect/children/`), several at a
time (`--jobs`), so the compiles share no state; `--bench` times each side there too.
"""

import contextlib
import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.console import Console

from tritoninspect.commands._capture import given_options, refuse_capture_options
from tritoninspect.commands._edge import edge, say_error
from tritoninspect.commands._outputs import check_output_file
from tritoninspect.commands._options import (
    BackwardOpt,
    Device,
    DeviceOpt,
    DynamicOpt,
    ForceOpt,
    JsonOpt,
    QuietOpt,
    Stage,
    StageOpt,
    TimeoutOpt,
    folder,
    output_file,
)
from tritoninspect.model.errors import ExitCode, UsageError, usage_errors

if TYPE_CHECKING:
    from tritoninspect.run.pipeline import CaptureOptions
    from tritoninspect.children.side import SideResult
    from tritoninspect.source.parse import Source


def diff(
    targets: Annotated[list[str], typer.Argument(
        metavar="A B [C ...]", show_default=False,
        help="Two or more variants, each model.py:Net, package.module:Net, a saved report.json or a TORCH_TRACE "
             "log; "
             "B, C, ... are each compared with A.")],
    inputs: Annotated[
        Optional[str], typer.Option("--inputs", "-i", metavar="SPEC",
                                    help="Example inputs for every side (for B: unless --inputs-b).")
    ] = None,
    inputs_b: Annotated[Optional[str], typer.Option("--inputs-b", metavar="SPEC", help="Example inputs for B.")] = None,
    device: DeviceOpt = Device.auto,
    dynamic: DynamicOpt = False,
    backward: BackwardOpt = None,
    stage: StageOpt = Stage.inductor,
    bench: Annotated[
        bool, typer.Option("--bench", help="Time each side eager and compiled on the GPU (compile times only on CPU).")
    ] = False,
    jobs: Annotated[
        Optional[int], typer.Option("--jobs", "-j", min=1, metavar="N",
                                    help="Captures run at once (default: one per CPU core, at most one per side; 1 with --bench).")
    ] = None,
    json_out: JsonOpt = False,
    quiet: QuietOpt = False,
    output: Annotated[
        Optional[Path], typer.Option("--output", "-o", metavar="FILE", parser=output_file,
                                     help="Also write the diff to a file (.json, .html or text; - is stdout, "
                                          "which prints the diff anyway).")
    ] = None,
    save: Annotated[
        Optional[Path], typer.Option("--save", metavar="DIR", parser=folder,
                                     help="Write each side's report to DIR/A.json, DIR/B.json, ...")
    ] = None,
    context: Annotated[int, typer.Option("--context", min=0, metavar="LINES", help="Lines of context in graph diffs.")] = 3,
    force: ForceOpt = False,
    timeout: TimeoutOpt = None,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show full tracebacks and the capture processes' output.")
    ] = False,
) -> None:
    """Compare variants of a model (or saved reports) with the first: kernels, graphs, copies, compile and run time.

    Each target is compiled in its own fresh process, so the compiles share no state; the
    diff opens with one summary line per variant.
    """
    from tritoninspect.run.pipeline import CaptureOptions

    with edge(json_out=json_out, debug=debug) as err:
        if len(targets) < 2:
            raise UsageError("diff needs two or more targets: A B [C ...]")
        options = CaptureOptions(inputs=inputs, device=device.value, dynamic=dynamic, backward=backward,
                                 stage=stage.value, torch_logs=debug)
        sources = _sources(targets)
        _check_options(sources, options, inputs_b=inputs_b, bench=bench, stage_given=stage is not Stage.inductor)
        check_output_file(output, sources, force=force)
        _check_save_and_output(save, output, len(targets))
        results = _sides(sources, options, inputs_b=inputs_b, bench=bench, save=save, debug=debug, err=err,
                         timeout=timeout, jobs=jobs, lines=not (quiet or json_out))
        from tritoninspect.render.emit import emit
        from tritoninspect.children.side import build_diff, side_labels

        # The diff is printed even with -o; .json and .html get those formats, any other suffix the text (docs/commands/diff.md).
        suffix = output.suffix.lower() if output is not None else ""
        file_fmt = None if output is None else {".json": "json", ".html": "html", ".htm": "html"}.get(suffix, "diff")
        built = build_diff(*results, context=context)
        if file_fmt == "html":
            from tritoninspect.render.html_diff import DiffPage

            # The page draws each side's pictures from its report, not only from the diff.
            emit(DiffPage(built, tuple(side.report for side in results)), None, output, file_fmt="html")
            output = None
        emit(built, "json" if json_out else "diff", output, file_fmt=file_fmt)
        failed = [(label, s) for label, s in zip(side_labels(len(results)), results) if s.report.failure is not None]
        if failed:
            from tritoninspect.render._failure import failure_line

            for label, s in failed:
                say_error(f"{label}: {failure_line(s.report.failure)}", err=err)
            raise typer.Exit(int(ExitCode.USER_CODE))


def _check_save_and_output(save: Path | None, output: Path | None, count: int) -> None:
    """`--save DIR` writes DIR/A.json, DIR/B.json, ...: `-o` must not be one of them."""
    from tritoninspect.children.side import side_labels

    if save is None or output is None:
        return
    for label in side_labels(count):
        side = save / f"{label}.json"
        if os.path.abspath(side) == os.path.abspath(output):
            raise UsageError(f"-o {output}: --save writes side {label}'s report there; write the diff elsewhere")


def _sources(targets: list[str]) -> list["Source"]:
    """Each target parsed; a bad one fails before any side starts compiling (they run in parallel)."""
    from tritoninspect.model.errors import TargetError
    from tritoninspect.children.side import side_labels
    from tritoninspect.source.parse import parse_source

    sources = []
    for label, target in zip(side_labels(len(targets)), targets):
        try:
            sources.append(parse_source(target))
        except TargetError as error:
            raise TargetError(f"{label} ({target}): {error}") from error
    return sources


def _check_options(sources: list["Source"], options: "CaptureOptions", *, inputs_b: str | None, bench: bool,
                   stage_given: bool) -> None:
    from tritoninspect.source.parse import TargetSpec

    saved = [not isinstance(source, TargetSpec) for source in sources]
    if all(saved):
        given = given_options(options, stage=stage_given, bench=bench)
        refuse_capture_options({"inputs": given.pop("inputs"), "inputs_b": inputs_b, **given})
    if bench and any(saved):
        raise UsageError("--bench times targets in fresh processes: give targets, not saved reports")
    if inputs_b is not None and saved[1]:
        raise UsageError("--inputs-b: B is a saved report, nothing is compiled for it")


def _sides(sources: list["Source"], options: "CaptureOptions", *, inputs_b: str | None, bench: bool, save: Path | None,
           debug: bool, err: Console, timeout: float | None, jobs: int | None, lines: bool) -> list["SideResult"]:
    """Each side, saved or captured in a fresh process (`jobs` at a time); written to `save` when asked.
    Progress: a status on a terminal; piped, a line per side per stage unless `lines` is off."""
    from tritoninspect.commands._progress import SidesDisplay
    from tritoninspect.children import side as sides
    from tritoninspect.source.parse import TargetSpec

    per_side = [dataclasses.replace(options, inputs=inputs_b if i == 1 and inputs_b is not None else options.inputs)
                for i in range(len(sources))]
    captured = [(label, source) for label, source in zip(sides.side_labels(len(sources)), sources)
                if isinstance(source, TargetSpec)]
    # --bench times each side in its own process: timings must not share the GPU or the cores.
    jobs = 1 if bench else jobs or max(1, min(len(captured), os.cpu_count() or 1))
    with usage_errors():
        if save is not None:
            sides.check_save_dir(save, len(sources))  # before long compiles, not after them
        what = f"compiling {len(captured)} targets, {jobs} at a time, each in a fresh process" if len(captured) > 1 \
            else f"compiling {captured[0][1].text if captured else ''} in a fresh process"
        labels = [label for label, _ in captured]
        # With --debug the children's own output goes to stderr as it comes: no second stream of stages.
        display = SidesDisplay(err, what, labels, lines=lines) if captured and not debug else None
        with display or contextlib.nullcontext():
            results = sides.get_sides(sources, per_side, jobs=jobs, bench=bench, debug=debug, timeout=timeout,
                                      progress=display)
        if save is not None:
            written = sides.save_reports(save, *results)
            names = [str(p) for p in written]
            from tritoninspect.render._safe import safe_text

            sys.stderr.write(safe_text(f"wrote {', '.join(names[:-1])} and {names[-1]}") + "\n")
    return results
