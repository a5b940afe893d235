"""The `tritoninspect` command line: the only place that prints errors and picks exit codes.

Heavy imports (torch, triton, the capture layer) happen inside commands, so
`tritoninspect --help` starts fast.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, NoReturn, Optional

import typer
from rich.console import Console
from rich.markup import escape

from tritoninspect import __version__
from tritoninspect.errors import ExitCode, TritonInspectError, UserCodeError

EXIT_CODES = (
    "Exit codes: 0 ok · 1 findings (--strict, check) · 2 usage · 3 target or inputs · "
    "4 your code raised · 5 environment (no GPU, no Triton) · 6 internal error · 7 unreadable saved report."
)

app = typer.Typer(
    name="tritoninspect",
    help="See what torch.compile did with your user-defined Triton kernels.",
    epilog=EXIT_CODES,
    rich_markup_mode="rich",
    no_args_is_help=True,
    # No shell-completion options: detecting the shell costs start-up time on every call.
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Device(str, Enum):
    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"


class Stage(str, Enum):
    dynamo = "dynamo"
    aot = "aot"
    inductor = "inductor"


class Show(str, Enum):
    dynamo = "dynamo"
    aot = "aot"
    post_grad = "post-grad"
    code = "code"
    fusion = "fusion"


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tritoninspect {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        Optional[bool], typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = None,
) -> None:
    """See what torch.compile did with your user-defined Triton kernels."""


@app.command()
def graph(
    target: Annotated[str, typer.Argument(help="model.py:Net, package.module:Net, or a saved report.json.")],
    inputs: Annotated[
        Optional[str], typer.Option("--inputs", "-i", help='Example inputs, e.g. "4x128:float16,4x128".')
    ] = None,
    device: Annotated[Device, typer.Option(help="auto: CUDA when available, else compile-only CPU mode.")] = Device.auto,
    dynamic: Annotated[bool, typer.Option("--dynamic", help="Compile with dynamic shapes from the start.")] = False,
    backward: Annotated[
        Optional[bool],
        typer.Option("--backward/--no-backward", help="Run backward so backward graphs compile (default: when inputs or parameters require grad)."),
    ] = None,
    stage: Annotated[Stage, typer.Option(help="Stop after this stage (faster).")] = Stage.inductor,
    show: Annotated[Optional[Show], typer.Option(help="Print one stage's graphs or code, kernel lines marked.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON on stdout (nothing else).")] = False,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to a file (.json or text).")] = None,
    dump: Annotated[Optional[Path], typer.Option("--dump", help="Write every artifact to DIR, named by compile id and stage.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when the report has warnings or errors (notes do not count).")] = False,
    resources: Annotated[
        bool, typer.Option("--resources", help="Compile each kernel per autotune config: registers, shared memory, spills.")
    ] = False,
    target_arch: Annotated[
        Optional[str], typer.Option("--target", help="Compile-only mode's GPU architecture (default sm_90).")
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks.")] = False,
) -> None:
    """Compile a model and report where each Triton kernel went."""
    err = Console(stderr=True, highlight=False)
    try:
        if dump is not None:
            _check_dump_dir(dump)  # before a long compile, not after it
        report = _load_or_capture(target, inputs, device.value, dynamic, backward, stage.value, err,
                                  resources=resources, target_arch=target_arch)
        _emit(report, show=show.value if show else None, json_out=json_out, output=output, dump=dump, err=err)
    except TritonInspectError as exc:
        _fail(exc, err, json_out=json_out, debug=debug)
    except Exception as exc:  # noqa: BLE001 - a bug of ours: one line, exit 6, traceback with --debug
        _fail(_internal(exc), err, json_out=json_out, debug=debug)
    problems = [d for d in report.diagnostics if d.severity != "note"]
    if strict and problems:
        err.print(f"[yellow]--strict: {len(problems)} diagnostic(s)[/]")
        raise typer.Exit(ExitCode.FINDINGS)


def _load_or_capture(
    target: str, inputs: str | None, device: str, dynamic: bool, backward: bool | None, stage: str, err: Console,
    *, resources: bool = False, target_arch: str | None = None,
) -> Any:
    if target.endswith(".json"):
        _check_no_capture_options(inputs=inputs, device=device != "auto", dynamic=dynamic,
                                  backward=backward is not None, stage=stage != "inductor",
                                  resources=resources, target=target_arch is not None)
        return _load_report(Path(target))
    from tritoninspect.spec import parse_spec

    spec = parse_spec(target)
    _ready_to_capture()
    from tritoninspect.run import capture_target

    with _spinner(err, f"Compiling {spec.display_name}:{spec.attr}"):
        return capture_target(spec, inputs=inputs, device=device, dynamic=dynamic, backward=backward, stage=stage,
                              resources=resources, target=target_arch)


def _internal(exc: Exception) -> TritonInspectError:
    from tritoninspect.errors import CaptureError

    return CaptureError(
        f"internal error: {type(exc).__name__}: {exc}", hint="rerun with --debug and report it with the traceback"
    )


def _check_dump_dir(dump: Path) -> None:
    from tritoninspect.errors import UsageError
    from tritoninspect.render.dump import check_dump_dir

    try:
        check_dump_dir(dump)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _check_no_capture_options(**given: Any) -> None:
    """A saved report is re-rendered as it is: options that change a capture
    would be silently ignored, so refuse them."""
    from tritoninspect.errors import UsageError

    used = [f"--{name}" for name, value in given.items() if value]
    if used:
        raise UsageError(f"{', '.join(used)}: meant for compiling a target, not for re-rendering a saved report")


def _load_report(path: Path) -> Any:
    from tritoninspect.report import read_report

    return read_report(path)


def _ready_to_capture() -> None:
    """Import what a capture needs (torch, triton, the capture layer), then take it out of
    the garbage collector's sight.

    The CLI captures once and exits, so everything alive now (torch, triton, typer: about
    300,000 objects) lives until then. `gc.freeze()` keeps each full collection during the
    imports and the compile that follow from scanning all of it again: `breaks` against
    `torch._dynamo.explain` went from 1.12 to 0.90 on a 2-core CPU (benchmarks/bench_breaks.py).
    Not done by the Python API, whose caller's process goes on.
    """
    import gc

    _check_dependencies()
    import tritoninspect.analyse  # noqa: F401
    import tritoninspect.capture.session  # noqa: F401

    gc.freeze()


def _check_dependencies() -> None:
    from tritoninspect.errors import EnvironmentProblem

    for name in ("torch", "triton"):
        try:
            __import__(name)
        except ImportError as exc:
            raise EnvironmentProblem(
                f"{name} is not importable ({exc})", hint=f"pip install '{name}' (see the README for versions)"
            ) from exc


def _emit(report: Any, *, show: str | None, json_out: bool, output: Path | None, dump: Path | None, err: Console) -> None:
    from tritoninspect.errors import UsageError

    try:
        _write_outputs(report, show=show, json_out=json_out, output=output, dump=dump, err=err)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from exc


def _write_outputs(report: Any, *, show: str | None, json_out: bool, output: Path | None, dump: Path | None, err: Console) -> None:
    from tritoninspect import render

    if dump is not None:
        written = render.dump_artifacts(report, dump)
        err.print(f"wrote {len(written)} files to {dump}")
    if output is not None:
        fmt = render.guess_format_from_path(output)
        output.write_text(render.render(report, fmt, color=False))
        err.print(f"wrote {output}")
    if json_out:
        sys.stdout.write(render.render(report, "json") + "\n")
    elif show is not None:
        sys.stdout.write(render.render(report, "text", show=show) + "\n")
    elif output is None:
        sys.stdout.write(render.render(report, "text") + "\n")


def _spinner(err: Console, message: str) -> Any:
    import contextlib

    if not err.is_terminal:
        return contextlib.nullcontext()
    return err.status(message, spinner="dots")


def _fail(exc: TritonInspectError, err: Console, *, json_out: bool, debug: bool) -> NoReturn:
    if debug:
        err.print_exception(show_locals=False)
    if isinstance(exc, UserCodeError) and exc.user_traceback:
        err.rule("[bold]traceback from your code[/]", style="red")
        err.print(exc.user_traceback.rstrip(), markup=False, highlight=False, soft_wrap=True)
        err.rule(style="red")
    err.print(f"[bold red]error:[/] {escape(exc.message)}", highlight=False, soft_wrap=True)
    if exc.hint:
        err.print(f"[dim]hint:[/] {escape(exc.hint)}", highlight=False, soft_wrap=True)
    if json_out:
        import json

        payload = {"error": {"type": type(exc).__name__, "message": exc.message, "exit_code": int(exc.exit_code)}}
        sys.stdout.write(json.dumps(payload) + "\n")
    raise typer.Exit(int(exc.exit_code))


@app.command()
def diff(
    a: Annotated[str, typer.Argument(help="A: model.py:Net, package.module:Net, or a saved report.json.")],
    b: Annotated[str, typer.Argument(help="B: the same forms as A, e.g. model.py:OpNet.")],
    inputs: Annotated[
        Optional[str], typer.Option("--inputs", "-i", help="Example inputs for A, and for B unless --inputs-b.")
    ] = None,
    inputs_b: Annotated[Optional[str], typer.Option("--inputs-b", help="Example inputs for B.")] = None,
    device: Annotated[Device, typer.Option(help="auto: CUDA when available, else compile-only CPU mode.")] = Device.auto,
    dynamic: Annotated[bool, typer.Option("--dynamic", help="Compile with dynamic shapes from the start.")] = False,
    backward: Annotated[
        Optional[bool], typer.Option("--backward/--no-backward", help="Run backward so backward graphs compile.")
    ] = None,
    stage: Annotated[Stage, typer.Option(help="Stop after this stage (faster).")] = Stage.inductor,
    bench: Annotated[
        bool, typer.Option("--bench", help="Time each side eager and compiled on the GPU (compile times only on CPU).")
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the diff as JSON on stdout (nothing else).")] = False,
    output: Annotated[
        Optional[Path], typer.Option("--output", "-o", help="Also write the diff to a file (.json or text).")
    ] = None,
    save: Annotated[
        Optional[Path], typer.Option("--save", help="Write each side's report to DIR/A.json and DIR/B.json.")
    ] = None,
    context: Annotated[int, typer.Option("--context", min=0, help="Lines of context in graph diffs.")] = 3,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show full tracebacks and the capture processes' output.")
    ] = False,
) -> None:
    """Compare two variants of a model (or two saved reports): graphs, kernels, copies, compile and run time.

    Each target is compiled in its own fresh process, so the two compiles share no state.
    """
    from tritoninspect.side import CaptureOptions

    err = Console(stderr=True, highlight=False)
    options = CaptureOptions(device=device.value, dynamic=dynamic, backward=backward, stage=stage.value, bench=bench)
    try:
        result = _diff(a, b, inputs=inputs, inputs_b=inputs_b, options=options, save=save, context=context,
                       debug=debug, err=err)
        _emit_diff(result, json_out=json_out, output=output, err=err)
    except TritonInspectError as exc:
        _fail(exc, err, json_out=json_out, debug=debug)
    except Exception as exc:  # noqa: BLE001 - a bug of ours: one line, exit 6, traceback with --debug
        _fail(_internal(exc), err, json_out=json_out, debug=debug)


def _diff(a: str, b: str, *, inputs: str | None, inputs_b: str | None, options: Any, save: Path | None,
          context: int, debug: bool, err: Console) -> Any:
    from tritoninspect import side
    from tritoninspect.errors import UsageError

    _check_diff_options(a, b, inputs=inputs, inputs_b=inputs_b, options=options)
    try:
        if save is not None:
            side.check_save_dir(save)  # before two long compiles, not after them
        results = []
        for label, source, side_inputs in (("A", a, inputs), ("B", b, inputs if inputs_b is None else inputs_b)):
            with _spinner(err, f"{label}: compiling {source} in a fresh process"):
                results.append(side.get_side(label, source, inputs=side_inputs, options=options, debug=debug))
        if save is not None:
            side.save_reports(save, results[0], results[1])
            err.print(f"wrote {save / 'A.json'} and {save / 'B.json'}")
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from exc
    return side.build_diff(results[0], results[1], context=context)


def _check_diff_options(a: str, b: str, *, inputs: str | None, inputs_b: str | None, options: Any) -> None:
    from tritoninspect.errors import UsageError
    from tritoninspect.side import is_saved_report

    saved_a, saved_b = is_saved_report(a), is_saved_report(b)
    if saved_a and saved_b:
        _check_no_capture_options(
            inputs=inputs, inputs_b=inputs_b, device=options.device != "auto", dynamic=options.dynamic,
            backward=options.backward is not None, stage=options.stage != "inductor", bench=options.bench,
        )
    if options.bench and (saved_a or saved_b):
        raise UsageError("--bench times targets in fresh processes: give two targets, not a saved report")
    if inputs_b is not None and saved_b:
        raise UsageError("--inputs-b: B is a saved report, nothing is compiled for it")


def _emit_diff(result: Any, *, json_out: bool, output: Path | None, err: Console) -> None:
    from tritoninspect.errors import UsageError
    from tritoninspect.render.diff import DiffRenderer

    if output is not None:
        as_json = output.suffix.lower() == ".json"
        try:
            output.write_text((result.to_json() if as_json else DiffRenderer(color=False).render(result)) + "\n")
        except OSError as exc:
            raise UsageError(f"cannot write {output}: {exc.strerror}") from exc
        err.print(f"wrote {output}")
    if json_out:
        sys.stdout.write(result.to_json() + "\n")
    else:
        sys.stdout.write(DiffRenderer().render(result) + "\n")


def main() -> None:
    """Console-script entry point."""
    from tritoninspect.capture.scratch import scratch_inductor_cache

    # Before torch is imported: what Inductor writes goes to a directory removed at exit.
    with scratch_inductor_cache():
        app()


# Commands defined in their own modules register on `app` when imported.
from tritoninspect.commands import breaks as _breaks_commands  # noqa: E402,F401  (breaks, check)
