"""The kernel a compile failure is about, where the capture could not name it.

On a GPU, Inductor compiles user kernels in worker processes: a kernel Triton refuses reaches the capture as
the text of Triton's error (`at 172:4:`, the kernel's lines around the error, the error), without the
function it was compiling (capture/failure.py). The lines it quotes are the kernel's own source: the one
user kernel whose source holds all of them is the kernel.
"""

from __future__ import annotations

import dataclasses
import re

from tritoninspect.model.records import Capture
from tritoninspect.model.report import Failure

_AT_RE = re.compile(r"^at \d+:\d+:$")


def failure_with_kernel(capture: Capture) -> Failure | None:
    """`capture.failure`, with its kernel named when it is a compile failure that names none and exactly one
    user kernel's source holds every line the error quotes."""
    failure = capture.failure
    if failure is None or failure.stage != "kernel_compile" or failure.kernel is not None:
        return failure
    quoted = _quoted_lines(failure.message)
    if not quoted:
        return failure
    found = {capture.kernels[kid].name for kid, source in capture.hazards.kernel_sources.items()
             if kid in capture.kernels and _holds(source.source, quoted)}
    return dataclasses.replace(failure, kernel=found.pop()) if len(found) == 1 else failure


def _quoted_lines(message: str) -> list[str]:
    """The source lines Triton's error quotes: after its `at L:C:` line, up to the error itself (last line)."""
    lines = message.strip().splitlines()
    start = next((i for i, line in enumerate(lines) if _AT_RE.match(line.strip())), None)
    if start is None:
        return []
    return [line.strip() for line in lines[start + 1:-1] if line.strip() and set(line.strip()) != {"^"}]


def _holds(source: str, quoted: list[str]) -> bool:
    lines = {line.strip() for line in source.splitlines()}
    return all(q in lines for q in quoted)
