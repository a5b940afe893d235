"""Spec -> mode -> target -> capture -> analyse -> report: the one route every entry point takes.

The CLI (`tritoninspect/commands/`), diff's child process (`tritoninspect/children/side_child.py`)
and the Python API (`tritoninspect.inspect_target`, `tritoninspect.inspect_module`) all
go through here. Importing this module is light (no torch): each step imports what it
needs when it runs, so a mistyped target fails before the heavy imports.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import os
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tritoninspect.model.errors import CaptureError, TritonInspectError, UsageError, UserCodeError

if TYPE_CHECKING:
    from tritoninspect.model.records import Capture
    from tritoninspect.capture.session import Environment, ModeInfo
    from tritoninspect.capture.warmup import Warmup
    from tritoninspect.model.report import Report
    from tritoninspect.source.spec import TargetSpec
    from tritoninspect.source.target import LoadedTarget

#: This tool's package directory (tritoninspect/, above run/).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@dataclass(frozen=True)
class CaptureOptions:
    """How to capture a target: the CLI's capture options as one value."""

    #: Example inputs as typed (`"4x128:float16,4x128"`); None: the target's own.
    inputs: str | None = None
    device: str = "auto"
    dynamic: bool = False
    #: Run backward; None: as `auto_backward` says.
    backward: bool | None = None
    #: With `backward` None and inputs or parameters requiring grad: run the backward too (True:
    #: `graph`), or only the forward, with autograd recording as a training step's forward does
    #: (False: `breaks`, whose graph breaks are all the forward's; Dynamo traces an
    #: autograd.Function differently under no_grad, so the forward still runs with grad on).
    auto_backward: bool = True
    stage: str = "inductor"
    #: Compile each kernel per autotune config and record what it uses.
    resources: bool = False
    #: Compile-only mode's GPU architecture (`"sm_80"`); None: sm_90.
    arch: str | None = None
    #: Record each compiled frame's transformed code (needs depyf)...
    decompile: bool = False
    #: ...and write depyf's own dump into this directory.
    depyf_dump: str | None = None
    #: Write the run's structured trace (TORCH_TRACE, what tlparse reads) into this directory.
    trace_dir: str | None = None
    #: Let torch's own log lines (what TORCH_LOGS asks for) reach stderr: `--debug`.
    torch_logs: bool = False
    #: Compile as `mode="reduce-overhead"` does (Inductor's CUDA graphs) and record what they did.
    cudagraphs: bool = False


# --- the route ------------------------------------------------------------------------------


def run(spec: TargetSpec, options: CaptureOptions = CaptureOptions()) -> Report:
    """The whole route for a parsed target: what the CLI and diff's child call."""
    return analyse(capture_target(spec, options))


def capture_target(spec: TargetSpec, options: CaptureOptions = CaptureOptions()) -> Capture:
    """Enter the mode, load `spec` in it and capture its calls."""
    # Compile-only mode is entered before the user's module is imported:
    # kernel libraries probe has_triton() / the driver at import time.
    # The directory the target is loaded from is the user's (tritoninspect/textformats/origin.py).
    from tritoninspect.capture.progress import first_stage, stage

    stage(first_stage())
    with enter_mode(options, user_dir=spec.sys_path_entry) as mode:
        stage(f"importing {spec.display_name} and building its inputs")
        loaded = load(spec, options, device=mode.info.torch_device)
        stage("Dynamo: tracing the first call")
        return _capture(mode, loaded.module, loaded.input_sets, options, name=loaded.spec.name,
                        requires_grad=loaded.requires_grad)


def capture_module(module: Any, input_sets: Sequence[Sequence[Any] | Mapping[str, Any]], options: CaptureOptions, *, name: str) -> Capture:
    """Enter the mode and capture a live module's calls (one per input set: a tuple of positional inputs, or
    a dict of keyword inputs)."""
    from tritoninspect.capture.calls import Call, every_input

    sets = [Call((), s) if isinstance(s, Mapping) else s if isinstance(s, Call) else tuple(s) for s in input_sets]
    with enter_mode(options, user_dir=_defining_dir(module)) as mode:
        wants_grad = any(getattr(t, "requires_grad", False) for s in sets for t in every_input(s))
        return _capture(mode, module, sets, options, name=name, requires_grad=wants_grad)


def load(spec: TargetSpec, options: CaptureOptions, *, device: str) -> LoadedTarget:
    """Import `spec`, build the model and its example inputs on `device`."""
    from tritoninspect.source.target import load_target

    return load_target(spec, inputs=options.inputs, device=device)


def analyse(capture: Capture) -> Report:
    """Every analysis over a capture, assembled into the report."""
    from tritoninspect.analyse import build_report
    from tritoninspect.capture.progress import stage

    stage("analysing the capture")
    return build_report(capture)


@dataclass(frozen=True)
class _Mode:
    """The mode a capture runs in, while its environment is entered."""

    info: ModeInfo
    env: Environment
    #: Context managers entered around the model calls (see capture_run).
    extras: list[Any]
    #: The first compile's one-off jobs, running while the target is imported (capture/warmup.py).
    warmup: Warmup | None = None

    def ready(self) -> None:
        """Wait for the warm-up jobs: call before the first compile."""
        if self.warmup is not None:
            self.warmup.wait()


#: The mode held across captures by `holding_mode` (the pytest plugin's compile-only session), if any.
_HELD: contextvars.ContextVar[_Mode | None] = contextvars.ContextVar("tritoninspect_held_mode", default=None)


@contextlib.contextmanager
def enter_mode(options: CaptureOptions, *, user_dir: str | os.PathLike[str] | None) -> Iterator[_Mode]:
    """The mode's environment, with `user_dir` taken as the user's own code; the held one, if any."""
    from tritoninspect.capture.session import choose_mode, mode_environment
    from tritoninspect.textformats.origin import user_tree

    extras = _extras(options)  # without depyf, fail before importing the user's code
    held = _HELD.get()
    if held is not None:
        _fits(held.info, options)
        with held.env.capture_scope() as env, user_tree(user_dir):
            yield _Mode(held.info, env, extras)
        return
    info = choose_mode(options.device, options.arch)
    warmup = _warmup(info, options)
    try:
        with mode_environment(info) as env, user_tree(user_dir):
            yield _Mode(info, env, extras, warmup)
    finally:
        if warmup is not None:
            warmup.wait()  # not left running past the capture, even when the import failed


def _warmup(info: ModeInfo, options: CaptureOptions) -> Warmup | None:
    """Start the first compile's one-off jobs, when Inductor will compile Triton code."""
    if options.stage != "inductor":
        return None
    from tritoninspect.capture import warmup

    return warmup.start(gpu=info.mode == "gpu")


@contextlib.contextmanager
def holding_mode(device: str = "cpu", arch: str | None = None) -> Iterator[ModeInfo]:
    """Enter the mode now and hold it for the block: every capture inside (`inspect_module`,
    `inspect_target`) runs in it instead of entering its own, so what is imported inside the block
    (a kernel library, a test module) is imported in the mode, as the CLI imports a target. The
    pytest plugin holds compile-only mode for a whole test session this way (`device="cpu"`)."""
    from tritoninspect.capture.session import choose_mode, mode_environment

    if _HELD.get() is not None:
        raise UsageError("a mode is already held; hold one at a time")
    info = choose_mode(device, arch)
    with mode_environment(info) as env:
        token = _HELD.set(_Mode(info, env, []))
        try:
            yield info
        finally:
            _HELD.reset(token)


def _fits(held: ModeInfo, options: CaptureOptions) -> None:
    """A capture asking for another mode than the held one is refused, not run in the wrong one."""
    if options.device == "cuda" and held.mode != "gpu" or options.device == "cpu" and held.mode == "gpu":
        raise UsageError(f"device={options.device!r}: this process holds {held.mode} mode for every capture")
    if options.arch is not None and held.mode == "compile-only" and f"sm_{held.arch}" != _arch(options.arch):
        raise UsageError(f"target {options.arch!r}: this process holds compile-only mode for sm_{held.arch}")


def _arch(text: str) -> str:
    from tritoninspect.capture.session import parse_target

    return f"sm_{parse_target(text)}"


def _defining_dir(module: Any) -> str | None:
    """The directory of the file that defines `module`'s forward (or the function
    itself); None when that is torch's or another part of the machinery."""
    from tritoninspect.textformats.origin import Origin, classify

    function = module if inspect.isfunction(module) else getattr(type(module), "forward", None)
    code = getattr(function, "__code__", None)
    if code is None or classify(code.co_filename) is Origin.MACHINERY:
        return None
    return os.path.dirname(os.path.abspath(code.co_filename))


def _capture(mode: _Mode, module: Any, input_sets: list[tuple[Any, ...]], options: CaptureOptions, *, name: str,
             requires_grad: bool) -> Capture:
    from tritoninspect.capture.session import capture_run
    from tritoninspect.source.target import describe_inputs

    mode.ready()
    with user_or_tool_errors(), _tracing(options.trace_dir):
        return capture_run(
            module, input_sets, info=mode.info, stage=options.stage, dynamic=True if options.dynamic else None,
            **_calls(options, requires_grad), target=name,
            inputs=describe_inputs(input_sets), env=mode.env, extras=mode.extras, resources=options.resources,
            torch_logs=options.torch_logs, cudagraphs=options.cudagraphs,
        )


def _calls(options: CaptureOptions, requires_grad: bool) -> dict[str, bool]:
    """How each call runs: `backward` (forward, then backward) and `grad` (the forward records
    autograd; False: under no_grad)."""
    if options.backward is not None:
        return {"backward": options.backward, "grad": options.backward}
    return {"backward": requires_grad and options.auto_backward, "grad": requires_grad}


def _tracing(directory: str | None) -> contextlib.AbstractContextManager[Any]:
    if directory is None:
        return contextlib.nullcontext()
    from pathlib import Path

    from tritoninspect.capture.compat.trace_log import writing_trace

    return writing_trace(Path(directory))


def _extras(options: CaptureOptions) -> list[Any]:
    if not options.decompile:
        return []
    from tritoninspect.capture.decompile import Decompiler

    return [Decompiler(options.depyf_dump).recording]


# --- the Python API -------------------------------------------------------------------------


def inspect_target(
    target: str | TargetSpec,
    *,
    inputs: str | None = None,
    device: str = "auto",
    dynamic: bool = False,
    backward: bool | None = None,
    stage: str = "inductor",
    decompile: bool = False,
    resources: bool = False,
    arch: str | None = None,
    cudagraphs: bool = False,
    progress: bool | None = None,
) -> Report:
    """Capture a target as the CLI does (`"model.py:Net"` or `"package.module:Net"`).

    Compile-only mode (no GPU) is entered before the target is imported, as in
    the CLI; `inputs` is the `--inputs` text; `arch` is `--target`; `cudagraphs` is `--cudagraphs`.
    `progress`: show each stage (None: in a Jupyter notebook only, as one line updated in place;
    run/progress.py).
    """
    from tritoninspect.run.progress import showing_progress
    from tritoninspect.source.spec import parse_spec

    spec = parse_spec(target) if isinstance(target, str) else target
    options = CaptureOptions(inputs=inputs, device=device, dynamic=dynamic, backward=backward, stage=stage,
                             resources=resources, arch=arch, decompile=decompile, cudagraphs=cudagraphs)
    with showing_progress(progress, f"tritoninspect: {spec.name}"):
        return run(spec, options)


def inspect_module(
    module: Any,
    *input_sets: Sequence[Any] | Mapping[str, Any],
    device: str = "auto",
    dynamic: bool = False,
    backward: bool | None = None,
    stage: str = "inductor",
    name: str = "",
    decompile: bool = False,
    resources: bool = False,
    target: str | None = None,
    cudagraphs: bool = False,
    progress: bool | None = None,
) -> Report:
    """Capture a live module (or callable) called once per input tuple (or dict of keyword inputs).

    The public Python API (`from tritoninspect import inspect_module`), e.g. in
    a kernel library's tests::

        report = inspect_module(Net(), (x, y), stage="dynamo")
        assert check_report(report, no_breaks=True, entries={"add_kernel": "hop"}) == []

    Inputs are used as given (put them on the GPU yourself in gpu mode).
    Without CUDA, compile-only mode is entered only now, after the caller
    imported its kernels: plain `@triton.jit` / `@triton.autotune` kernels are
    fine, but a kernel library that probes Triton or the GPU at import time
    may already have chosen another path: prefer the CLI for that case.
    `target` is compile-only mode's architecture (the CLI's `--target`); `cudagraphs` is `--cudagraphs`
    (each input set is then called 3 times). `progress`: show each
    stage (None: in a Jupyter notebook only, as one line updated in place; run/progress.py).
    """
    from tritoninspect.run.progress import showing_progress

    options = CaptureOptions(device=device, dynamic=dynamic, backward=backward, stage=stage, resources=resources,
                             arch=target, decompile=decompile, cudagraphs=cudagraphs)
    name = name or _name_of(module)
    with showing_progress(progress, f"tritoninspect: {name}"):
        return analyse(capture_module(module, input_sets, options, name=name))


def _name_of(module: Any) -> str:
    """The class name of a module, the qualified name of a function."""
    return str(getattr(module, "__qualname__", None) or type(module).__name__)


def __getattr__(name: str) -> Any:
    """`call_once(fn, args, backward)`: one call as a capture makes it (forward under no_grad, or
    forward then backward), for timing the same step (`children/bench.py`). Resolved on first use,
    so importing the pipeline stays free of torch, and returned as is, so timing pays no wrapper."""
    if name == "call_once":
        from tritoninspect.capture.session import call_once

        return call_once
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- whose failure: the user's or ours ------------------------------------------------------


@contextlib.contextmanager
def user_or_tool_errors() -> Iterator[None]:
    """Typed errors pass; any other exception becomes a UserCodeError when it was
    raised in the user's code or torch, a CaptureError when raised in ours."""
    try:
        yield
    except TritonInspectError:
        raise
    except Exception as exc:  # noqa: BLE001 - classified below
        raise _classify(exc) from exc


def _classify(exc: BaseException) -> TritonInspectError:
    innermost = _innermost_frame(exc)
    summary = f"{type(exc).__name__}: {_first_line(exc)}"
    if innermost is not None and innermost.startswith(_PACKAGE_DIR):
        return CaptureError(f"tritoninspect failed while capturing: {summary}", hint="rerun with --debug and report it")
    return UserCodeError(
        f"the model failed under torch.compile: {summary}",
        user_traceback=_user_traceback(exc),
        hint="rerun with --debug for torch's full traceback",
    )


def _innermost_frame(exc: BaseException) -> str | None:
    while exc.__cause__ is not None or getattr(exc, "inner_exception", None) is not None:
        exc = exc.__cause__ or exc.inner_exception  # type: ignore[attr-defined]
    frames = traceback.extract_tb(exc.__traceback__)
    return frames[-1].filename if frames else None


def _user_traceback(exc: BaseException) -> str:
    """Only the user's frames (not torch, triton or tritoninspect), then the error."""
    from tritoninspect.textformats.origin import is_user_file

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if is_user_file(f.filename)]
    lines = ["Traceback (most recent call last, your frames only):\n", *traceback.format_list(frames)]
    lines.extend(traceback.format_exception_only(type(exc), exc)[-1:])
    return "".join(lines)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""
