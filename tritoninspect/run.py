"""Target -> capture -> report: the pipeline the CLI and the Python API share.

`inspect_target` starts from a spec ("model.py:Net"); `inspect_module` from a
live module and inputs (for tests of a kernel library). Both return a Report.
"""

from __future__ import annotations

import inspect
import os
import traceback
from collections.abc import Sequence
from typing import Any

from tritoninspect.errors import CaptureError, TritonInspectError, UserCodeError
from tritoninspect.origin import user_tree
from tritoninspect.report import Report

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def capture_target(
    spec: Any,
    *,
    inputs: str | None = None,
    device: str = "auto",
    dynamic: bool = False,
    backward: bool | None = None,
    stage: str = "inductor",
    decompile: bool = False,
    depyf_dump: str | None = None,
    resources: bool = False,
    target: str | None = None,
) -> Report:
    """Load `spec` (a parsed TargetSpec) in the chosen mode and capture it.

    `decompile`: record each compiled frame's transformed code (needs depyf);
    `depyf_dump`: a directory for depyf's own dump as well; `resources`:
    compile each kernel per autotune config and record what it uses;
    `target`: compile-only mode's architecture (e.g. "sm_80"; default sm_90).
    """
    from tritoninspect.analyse import build_report
    from tritoninspect.capture.session import capture_run, choose_mode, mode_environment
    from tritoninspect.target import describe_inputs, load_target

    info = choose_mode(device, target)
    extras = _extras(decompile, depyf_dump)
    # Compile-only mode is entered before the user's module is imported:
    # kernel libraries probe has_triton() / the driver at import time.
    # The directory the target is loaded from is the user's (tritoninspect/origin.py).
    with mode_environment(info) as env, user_tree(spec.sys_path_entry):
        loaded = load_target(spec, inputs=inputs, device=info.torch_device)
        run_backward = loaded.requires_grad if backward is None else backward
        capture = _run_model(
            capture_run, loaded.module, loaded.input_sets, info=info, stage=stage,
            dynamic=True if dynamic else None, backward=run_backward,
            target=f"{spec.display_name}:{spec.attr}", inputs=describe_inputs(loaded.input_sets), env=env,
            extras=extras, resources=resources,
        )
    return build_report(capture)


def inspect_module(
    module: Any,
    *input_sets: Sequence[Any],
    device: str = "auto",
    dynamic: bool = False,
    backward: bool | None = None,
    stage: str = "inductor",
    name: str = "",
    decompile: bool = False,
    resources: bool = False,
    target: str | None = None,
) -> Report:
    """Capture a live module (or callable) called once per input tuple.

    The public Python API (`from tritoninspect import inspect_module`), e.g. in
    a kernel library's tests::

        report = inspect_module(Net(), (x, y), stage="dynamo")
        assert check_report(report, no_breaks=True, entries={"add_kernel": "hop"}) == []

    Inputs are used as given (put them on the GPU yourself in gpu mode).
    Without CUDA, compile-only mode is entered only now, after the caller
    imported its kernels: plain `@triton.jit` / `@triton.autotune` kernels are
    fine, but a kernel library that probes Triton or the GPU at import time
    may already have chosen another path: prefer the CLI for that case.
    """
    from tritoninspect.analyse import build_report
    from tritoninspect.capture.session import capture_run, choose_mode, mode_environment
    from tritoninspect.target import describe_inputs

    info = choose_mode(device, target)
    sets = [tuple(s) for s in input_sets]
    with mode_environment(info) as env, user_tree(_defining_dir(module)):
        wants_grad = any(getattr(t, "requires_grad", False) for s in sets for t in s)
        capture = _run_model(
            capture_run, module, sets, info=info, stage=stage, dynamic=True if dynamic else None,
            backward=wants_grad if backward is None else backward,
            target=name or _name_of(module), inputs=describe_inputs(sets), env=env,
            extras=_extras(decompile, None), resources=resources,
        )
    return build_report(capture)


def _name_of(module: Any) -> str:
    """The class name of a module, the qualified name of a function."""
    return str(getattr(module, "__qualname__", None) or type(module).__name__)


def _defining_dir(module: Any) -> str | None:
    """The directory of the file that defines `module`'s forward (or the function
    itself); None when that is torch's or another part of the machinery."""
    from tritoninspect.origin import Origin, classify

    function = module if inspect.isfunction(module) else getattr(type(module), "forward", None)
    code = getattr(function, "__code__", None)
    if code is None or classify(code.co_filename) is Origin.MACHINERY:
        return None
    return os.path.dirname(os.path.abspath(code.co_filename))


def _extras(decompile: bool, depyf_dump: str | None) -> list[Any]:
    """Context managers entered around the model calls (see capture_run)."""
    if not decompile:
        return []
    from tritoninspect.capture.decompile import Decompiler

    return [Decompiler(depyf_dump).recording]


def _run_model(capture_run: Any, *args: Any, **kwargs: Any) -> Any:
    """Run the capture; tell the user's failures apart from tritoninspect's."""
    try:
        return capture_run(*args, **kwargs)
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
    from tritoninspect.capture.compat import is_user_file

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if is_user_file(f.filename)]
    lines = ["Traceback (most recent call last, your frames only):\n", *traceback.format_list(frames)]
    lines.extend(traceback.format_exception_only(type(exc), exc)[-1:])
    return "".join(lines)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""
