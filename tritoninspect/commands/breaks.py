"""`tritoninspect breaks` and `tritoninspect check`, registered on the shared app.

`breaks` explains graph breaks and recompiles around Triton kernels (Dynamo
only by default, so it is fast); `check` turns conditions on a report into an
exit code for CI. Errors go through `cli._fail`, the one place that maps them
to exit codes.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

from tritoninspect.cli import Device, Stage, _check_no_capture_options, _fail, _internal, _ready_to_capture
from tritoninspect.cli import _load_report, _spinner, app
from tritoninspect.errors import ExitCode, TritonInspectError, UsageError

#: Prefix of depyf's files in a `--dump` directory (the dump keeps bare names).
DEPYF_PREFIX = "depyf_"

TargetArg = Annotated[str, typer.Argument(help="model.py:Net, package.module:Net, or a saved report.json.")]
InputsOpt = Annotated[Optional[str], typer.Option("--inputs", "-i", help='Example inputs, e.g. "4x128:float16,4x128".')]
DeviceOpt = Annotated[Device, typer.Option(help="auto: CUDA when available, else compile-only CPU mode.")]
DynamicOpt = Annotated[bool, typer.Option("--dynamic", help="Compile with dynamic shapes from the start.")]
BackwardOpt = Annotated[
    Optional[bool], typer.Option("--backward/--no-backward", help="Run backward so backward graphs compile.")
]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show full tracebacks.")]


@app.command()
def breaks(
    target: TargetArg,
    inputs: InputsOpt = None,
    device: DeviceOpt = Device.auto,
    dynamic: DynamicOpt = False,
    backward: BackwardOpt = None,
    stage: Annotated[
        Optional[Stage], typer.Option(help="Stop after this stage (default: dynamo, enough for breaks).")
    ] = None,
    decompile: Annotated[
        bool, typer.Option("--decompile", help="Show each frame's transformed code (needs depyf).")
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the report as JSON on stdout (nothing else).")
    ] = False,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to a file (.json or text).")] = None,
    dump: Annotated[
        Optional[Path], typer.Option("--dump", help="Write the artifacts (and depyf's dump with --decompile) to DIR.")
    ] = None,
    debug: DebugOpt = False,
) -> None:
    """Explain graph breaks and recompiles around Triton kernels: where, which kernel, why, what to do."""
    err = Console(stderr=True, highlight=False)
    try:
        if dump is not None:
            _check_dump(dump)
        options = dict(inputs=inputs, device=device.value, dynamic=dynamic, backward=backward,
                       stage=stage.value if stage else None)
        report, extra = _breaks_report(target, options, default_stage="dynamo", decompile=decompile, dump=dump,
                                       err=err)
        _emit_breaks(report, json_out=json_out, output=output, dump=dump, extra=extra, err=err)
    except TritonInspectError as exc:
        _fail(exc, err, json_out=json_out, debug=debug)
    except Exception as exc:  # noqa: BLE001 - a bug of ours: one line, exit 6, traceback with --debug
        _fail(_internal(exc), err, json_out=json_out, debug=debug)


@app.command()
def check(
    target: TargetArg,
    no_breaks: Annotated[bool, typer.Option("--no-breaks", help="Fail on any graph break.")] = False,
    max_graphs: Annotated[
        Optional[int], typer.Option("--max-graphs", min=0, help="Fail on more than N Dynamo graphs.")
    ] = None,
    entry: Annotated[
        Optional[list[str]],
        typer.Option("--entry", help="KERNEL=hop|triton_op|custom_op: the only way KERNEL may enter (repeatable)."),
    ] = None,
    no_clones: Annotated[
        Optional[list[str]],
        typer.Option("--no-clones", help="Fail when Inductor still clones an argument of KERNEL after re-inplacing (repeatable)."),
    ] = None,
    no_fallback: Annotated[bool, typer.Option("--no-fallback", help="Fail on a mutation-analysis fallback.")] = False,
    inputs: InputsOpt = None,
    device: DeviceOpt = Device.auto,
    dynamic: DynamicOpt = False,
    backward: BackwardOpt = None,
    stage: Annotated[
        Optional[Stage], typer.Option(help="Default: dynamo; aot for --no-fallback; inductor for --no-clones.")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")] = False,
    debug: DebugOpt = False,
) -> None:
    """Exit 1 when a condition fails (one line each), 0 when all hold: for CI."""
    err = Console(stderr=True, highlight=False)
    try:
        conditions = _conditions(no_breaks, max_graphs, entry or [], no_clones or [], no_fallback)
        # The earliest stage that shows what the conditions need: clones and fallbacks appear in AOT.
        # --no-clones asks about the compiled program: what re-inplacing leaves needs Inductor.
        needed = "inductor" if no_clones else "aot" if no_fallback else "dynamo"
        options = dict(inputs=inputs, device=device.value, dynamic=dynamic, backward=backward,
                       stage=stage.value if stage else None)
        report, _ = _breaks_report(target, options, default_stage=needed, decompile=False, dump=None, err=err)
        from tritoninspect.analyse.checks import run_checks

        result = run_checks(report, conditions, target=target)
    except TritonInspectError as exc:
        _fail(exc, err, json_out=json_out, debug=debug)
    except Exception as exc:  # noqa: BLE001 - a bug of ours: one line, exit 6, traceback with --debug
        _fail(_internal(exc), err, json_out=json_out, debug=debug)
    from tritoninspect.render.check import render_check

    sys.stdout.write((result.to_json() if json_out else render_check(result)) + "\n")
    if not result.ok:
        raise typer.Exit(ExitCode.FINDINGS)


# --- helpers --------------------------------------------------------------------------


def _breaks_report(target: str, options: dict[str, Any], *, default_stage: str, decompile: bool,
                   dump: Path | None, err: Console) -> tuple[Any, dict[str, str]]:
    """The report (loaded or captured) and depyf's dump files, if any."""
    if target.endswith(".json"):
        _check_no_capture_options(
            inputs=options["inputs"], device=options["device"] != "auto", dynamic=options["dynamic"],
            backward=options["backward"] is not None, stage=options["stage"] is not None, decompile=decompile,
        )
        return _load_report(Path(target)), {}
    options = {**options, "stage": options["stage"] or default_stage}
    from tritoninspect.spec import parse_spec

    spec = parse_spec(target)
    _ready_to_capture()
    from tritoninspect import pipeline

    with tempfile.TemporaryDirectory(prefix="tritoninspect-depyf-") as depyf_dir:
        capture_options = pipeline.CaptureOptions(**options, decompile=decompile,
                                                  depyf_dump=depyf_dir if decompile and dump is not None else None)
        with _spinner(err, f"Compiling {spec.display_name}:{spec.attr}"):
            report = pipeline.run(spec, capture_options)
        return report, _read_depyf_dump(Path(depyf_dir))


def _read_depyf_dump(directory: Path) -> dict[str, str]:
    files = sorted(p for p in directory.rglob("*") if p.is_file() and p.suffix == ".py")
    return {DEPYF_PREFIX + p.relative_to(directory).as_posix().replace("/", "_"): p.read_text(errors="replace")
            for p in files}


def _check_dump(dump: Path) -> None:
    from tritoninspect.render.dump import check_dump_dir

    try:
        check_dump_dir(dump)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _emit_breaks(report: Any, *, json_out: bool, output: Path | None, dump: Path | None, extra: dict[str, str],
                 err: Console) -> None:
    # The renderers are imported only when text or files are asked for: `--json` alone needs none.
    try:
        if dump is not None:
            from tritoninspect.render import dump_artifacts

            written = dump_artifacts(report, dump, extra)
            err.print(f"wrote {len(written)} files to {dump}")
        if output is not None:
            _write_output(report, output)
            err.print(f"wrote {output}")
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from exc
    if json_out:
        sys.stdout.write(report.to_json() + "\n")
    elif output is None:
        from tritoninspect.render.breaks import render_breaks

        sys.stdout.write(render_breaks(report) + "\n")


def _write_output(report: Any, output: Path) -> None:
    from tritoninspect.render import guess_format_from_path
    from tritoninspect.render.breaks import render_breaks

    json_file = guess_format_from_path(output) == "json"
    output.write_text((report.to_json() if json_file else render_breaks(report, color=False)) + "\n")


def _conditions(no_breaks: bool, max_graphs: int | None, entries: list[str], no_clones: list[str],
                no_fallback: bool) -> dict[str, Any]:
    """The conditions as `check_report` keywords, keyed for display; refuses none or bad ones."""
    from tritoninspect.analyse.checks import parse_entry

    try:
        parsed = dict(parse_entry(e) for e in entries)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
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
    if not conditions:
        raise UsageError("check: give at least one condition (--no-breaks, --max-graphs, --entry, --no-clones, "
                         "--no-fallback)")
    return conditions
