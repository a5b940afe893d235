"""Why an eager launch ran outside every compiled graph when no graph break says so: the
`torch.compiler.disable` it ran inside, or, for a launch from an autograd.Function's backward, the
disable its forward ran inside (the autograd engine runs that backward eagerly when the forward ran
outside the graph: fla-core's `chunk_gla`, disabled in fla/ops/gla/chunk.py)."""

from __future__ import annotations

from typing import Any

from tritoninspect.analyse.libraries import library_name
from tritoninspect.model.records import Capture, LaunchRecord
from tritoninspect.textformats.breaks import frame_location


def eager_cause(capture: Capture, launch: LaunchRecord) -> dict[str, Any]:
    """The Occurrence fields `disabled_by`, `disabled_library` and `backward_of` of an eager launch;
    {} for a launch from a compiled graph."""
    if launch.in_graph:
        return {}
    disabled = forward_disable(capture, launch) if launch.backward_of else deciding_disable(capture, launch.disabled)
    file = frame_location(disabled)[0] if disabled else None
    broken = forward_break(capture, launch) if launch.backward_of and not disabled else None
    return {"disabled_by": disabled, "disabled_library": library_name(capture, file),
            "backward_of": launch.backward_of, "forward_break": broken}


def deciding_disable(capture: Capture, disabled: tuple[str, ...]) -> str | None:
    """Of the disables a launch ran inside (outermost first), the one that keeps it out of the graph
    whatever the user's code does: the outermost in an installed library's code, else the outermost.
    A user's `@torch.compiler.disable def attend(...): chunk_gla(...)` wraps fla-core's own disable of
    chunk_gla: dropping the user's leaves the kernels eager (hostile, stop 39)."""
    owned = (d for d in disabled if library_name(capture, frame_location(d)[0]) is not None)
    return next(owned, None) or next(iter(disabled), None)


def forward_break(capture: Capture, launch: LaunchRecord) -> str | None:
    """The compile id of the first graph break Dynamo met while tracing this backward's Function (a frame
    of the break's stack within the forward's lines, or the backward's, which Dynamo traces with the
    forward): Dynamo then runs the Function's forward eagerly, and the autograd engine its backward
    (Liger's LigerSiLUMulFunction, whose forward asks the device and imports transformers; mamba-ssm's
    MambaChunkScanCombinedFn, whose backward reads an autotuner's `best_config`). None when no break's
    stack runs through either."""
    file = frame_location(launch.backward_of or "")[0]
    spans = [span for span in (launch.forward_lines, launch.backward_lines) if span]
    for b in capture.breaks:
        for frame in b.user_stack:
            where, line = frame_location(frame)
            if where == file and line is not None and any(first <= line <= last for first, last in spans):
                return b.compile_id
    return None


def forward_disable(capture: Capture, launch: LaunchRecord) -> str | None:
    """The outermost disable that the eager launches of this backward's forward ran inside (a launch
    whose site runs through the forward's lines); None when no such launch ran inside one."""
    file = frame_location(launch.backward_of or "")[0]
    first, last = launch.forward_lines or (0, -1)
    for other in capture.launches:
        if other.in_graph or other.backward_of or not other.disabled:
            continue
        for frame in other.site:
            where, line = frame_location(frame)
            if where == file and line is not None and first <= line <= last:
                return other.disabled[0]
    return None
