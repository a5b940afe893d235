"""Spec -> mode -> target -> export capture -> analysis -> report: `tritoninspect export`'s route.

The same mode and target loading as `pipeline.run` (compile-only mode entered before the
user's module is imported), then `capture/export.py` instead of torch.compile.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    from tritoninspect.model.export_records import ExportCapture
    from tritoninspect.model.report import Report
    from tritoninspect.source.spec import TargetSpec

#: A target module may define this function: it returns `dynamic_shapes` for torch.export
#: (used with --dynamic instead of Dim.AUTO on every dimension).
DYNAMIC_SHAPES_HOOK = "export_dynamic_shapes"


@dataclass(frozen=True)
class ExportOptions:
    """How to export a target: the `export` command's options as one value."""

    inputs: str | None = None
    device: str = "auto"
    #: None: torch.export's own default.
    strict: bool | None = None
    #: "export" (stop after torch.export) or "aoti".
    stage: str = "aoti"
    dynamic: bool = False
    arch: str | None = None
    #: Build, load and run the AOTInductor package in a child process (run/aoti.py), so that
    #: a native crash there becomes a failure in the report. False in that child itself.
    isolate_aoti: bool = True
    #: Let torch's own log lines (what TORCH_LOGS asks for) reach stderr: `--debug`.
    torch_logs: bool = False


def run_export(spec: TargetSpec, options: ExportOptions = ExportOptions()) -> Report:
    """The whole export route for a parsed target."""
    from tritoninspect.analyse.export import build_export_report
    from tritoninspect.capture.progress import stage

    capture = export_capture(spec, options)
    stage("analysing the capture")
    return build_export_report(capture)


def export_capture(spec: TargetSpec, options: ExportOptions) -> ExportCapture:
    """The target loaded in its mode and exported: the capture, before analysis."""
    from tritoninspect.capture.export import capture_export
    from tritoninspect.run.pipeline import CaptureOptions, enter_mode, load, user_or_tool_errors
    from tritoninspect.source.target import describe_inputs

    from tritoninspect.capture.progress import first_stage, stage

    # Inductor compiles in this process only where the AOTInductor package is built here (in the child, or
    # without one): only then is the first compile's warm-up (capture/warmup.py) of use to it.
    compiles_here = options.stage == "aoti" and not options.isolate_aoti
    mode_options = CaptureOptions(inputs=options.inputs, device=options.device, arch=options.arch,
                                  stage="inductor" if compiles_here else options.stage)
    stage(first_stage())
    with enter_mode(mode_options, user_dir=spec.sys_path_entry) as mode:
        stage(f"importing {spec.display_name} and building its inputs")
        loaded = load(spec, mode_options, device=mode.info.torch_device)
        dynamic, shapes = _dynamic(options.dynamic, loaded, spec)
        mode.ready()
        with user_or_tool_errors():
            capture = capture_export(
                loaded.module, loaded.input_sets[0], info=mode.info, strict=options.strict, stage=options.stage,
                dynamic=dynamic, dynamic_shapes=shapes, target=loaded.spec.name,  # `model.py` alone: its class found
                inputs=describe_inputs(loaded.input_sets[:1]), aoti_runner=_runner(loaded.spec, options, mode.info),
                torch_logs=options.torch_logs,
            )
    return capture


def _runner(spec: TargetSpec, options: ExportOptions, info: Any) -> Any:
    """AOTInductor in a child process (unless told otherwise), where a crash cannot take the report."""
    if not options.isolate_aoti or options.stage == "export":
        return None
    from tritoninspect.run.aoti import run_aoti_child

    device = info.device if info.mode == "gpu" else "cpu (compile-only mode)"  # as capture/export.py's _aoti
    return lambda: run_aoti_child(spec, options, device=device)


def _dynamic(asked: bool, loaded: Any, spec: TargetSpec) -> tuple[str, Any]:
    """("none" | "auto" | "target", dynamic_shapes): with --dynamic, the target module's
    `export_dynamic_shapes()` when it defines one, else Dim.AUTO on every dimension."""
    if not asked:
        return "none", None
    import sys

    module = sys.modules.get(spec.module)
    hook = getattr(module, DYNAMIC_SHAPES_HOOK, None)
    if hook is None:
        return "auto", None
    try:
        return "target", hook()
    except Exception as exc:  # noqa: BLE001 - the user's own code raised: exit 4 with their traceback,
        # as example_inputs() raising does (target.py)
        from tritoninspect.source.target import user_code_error

        raise user_code_error(f"error in {spec.display_name}:{DYNAMIC_SHAPES_HOOK}()", exc) from exc
