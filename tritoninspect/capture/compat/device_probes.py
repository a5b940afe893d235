"""Where `torch.cuda.is_available()` told the user's code there is no GPU, in compile-only mode.

Compile-only mode keeps `is_available()` honest (False on a CPU-only machine: Dynamo and
torch rely on it, and a True would send libraries to CUDA allocations). A library that
asks it takes its CPU path there, where a run on the GPU compile-only mode stands for
takes its CUDA path: Liger-Kernel's `infer_device()` then goes on to import
`transformers` inside the traced forward, a graph break a GPU run does not have. This
module only watches: each time `is_available()` answers False to the user's or a
library's code, eagerly or while Dynamo traces it, the place is reported, so the report
can say which graph breaks follow such an answer.

The watch sits in `torch.cuda._is_compiled`, which `is_available()` calls first
(torch/cuda/__init__.py, torch 2.11-2.14; PR not found): `is_available` itself stays the
same function object, so Dynamo folds and guards it as before.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

import torch

from tritoninspect.capture.compat import versions


@dataclass(frozen=True)
class Probe:
    """One answer of `torch.cuda.is_available()` that differs from the emulated GPU's."""

    #: "file:line" of the call (the traced instruction when Dynamo evaluated it).
    place: str
    #: The function that asked (`infer_device`), `<module>` at import.
    function: str
    #: Asked while Dynamo traced the call (it folds the answer into the graph), not run eagerly.
    traced: bool
    #: The compile it was traced in, e.g. "0/0" (traced only).
    compile_id: str | None = None


OnProbe = Callable[[Probe], None]


def availability_watch(on_probe: OnProbe) -> list[tuple[Any, str, Any]]:
    """(torch.cuda, "_is_compiled", watcher) to set while compile-only mode is active: the
    watcher answers as `_is_compiled` does, and reports each False `is_available()` answer
    to user or library code (torch's, Triton's and tritoninspect's own questions are theirs).
    [] when this torch's `is_available()` does not ask `_is_compiled` (nothing to watch)."""
    original = getattr(torch.cuda, "_is_compiled", None)
    asking = torch.cuda.is_available.__code__
    if original is None or "_is_compiled" not in asking.co_names:
        return []
    busy: list[bool] = []

    def _is_compiled() -> bool:
        answer = original()
        frame = sys._getframe(1)
        if frame.f_code is not asking or busy:
            return answer
        available = answer and _available(busy)
        if not available and frame.f_back is not None:
            probe = _probe(frame.f_back)
            if probe is not None:
                on_probe(probe)
        return answer

    _is_compiled.__name__ = _is_compiled.__qualname__ = "_is_compiled"
    return [(torch.cuda, "_is_compiled", _is_compiled)]


def _available(busy: list[bool]) -> bool:
    """`is_available()`'s own answer on a CUDA build (no GPU, or one): asked again, unwatched."""
    busy.append(True)
    try:
        return torch.cuda.is_available()
    finally:
        busy.pop()


def _probe(frame: FrameType) -> Probe | None:
    """Who asked: the user's or a library's frame, or the instruction Dynamo was tracing
    when its constant folding called `is_available()` (variables/torch.py, torch 2.11-2.14;
    PR not found); None for torch's, Triton's, tritoninspect's and guard code's own asking."""
    file = frame.f_code.co_filename
    if file.startswith(_PACKAGE_DIR) or file.startswith("<"):
        return None
    if not versions.is_torch_or_triton_file(file):
        return Probe(f"{file}:{frame.f_lineno}", frame.f_code.co_name, traced=False)
    if _TRACE_SITE not in file:
        return None
    return _traced_probe()


def _traced_probe() -> Probe | None:
    """The traced instruction, innermost inlined frame included: `TracingContext.extract_stack()`
    (torch/_guards.py, torch 2.11-2.14; PR not found). `InstructionTranslator.current_tx()`
    would give only the root frame Dynamo compiles, not the library function inlined into it."""
    from torch._guards import TracingContext

    from tritoninspect.capture.compat.dynamo import current_compile_id

    context = TracingContext.try_get()
    stack = context.extract_stack() if context is not None else []
    if not stack or versions.is_torch_or_triton_file(stack[-1].filename):
        return None
    top = stack[-1]
    return Probe(f"{top.filename}:{top.lineno}", top.name, traced=True, compile_id=current_compile_id())


#: Dynamo's variable trackers, where a traced `torch.cuda.is_available()` is constant-folded.
_TRACE_SITE = os.sep + os.path.join("torch", "_dynamo", "variables") + os.sep
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
