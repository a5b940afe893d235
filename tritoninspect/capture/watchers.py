"""What happens to a user kernel after Inductor takes it: its CUDA graphs (`--cudagraphs`) and the
epilogues Inductor considers fusing into it, watched for one capture and written into it.

Owned by the `Recorder`: it calls `around_compile` for each inner compile and `installed` for the
capture; the watchers themselves are `capture/cudagraphs.py` and `capture/epilogues.py`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from tritoninspect.capture import compat
from tritoninspect.capture.cudagraphs import CudagraphRecorder
from tritoninspect.capture.epilogues import EpilogueRecorder
from tritoninspect.capture.patching import Patcher
from tritoninspect.model.cudagraph_records import CudagraphRecords
from tritoninspect.model.records import Capture


class Watchers:
    """The CUDA-graph and epilogue watchers of one capture."""

    def __init__(self, capture: Capture, *, kernel_id: Callable[[Any], str | None], compile_only: bool,
                 cudagraphs: bool) -> None:
        self.capture = capture
        self.cudagraphs: CudagraphRecorder | None = None
        if cudagraphs:
            capture.cudagraphs = CudagraphRecords()
            self.cudagraphs = CudagraphRecorder(capture.cudagraphs, predicted=compile_only, kernel_id=kernel_id,
                                                problem=self._problem)
        self.epilogues = EpilogueRecorder(capture.epilogues, kernel_id=kernel_id, where=_where,
                                          problem=lambda m: self._problem(m, "epilogues"))

    @contextlib.contextmanager
    def installed(self, patcher: Patcher) -> Iterator[None]:
        """Inductor's hooks (through `patcher`, which the caller restores) and reduce-overhead's config for
        the block; the records are written when it ends."""
        scopes = contextlib.ExitStack()
        try:
            for obj, name, value in self.epilogues.patches():
                patcher.set(obj, name, value)
            if self.cudagraphs is not None:
                scopes.enter_context(self.cudagraphs.mode())
                for obj, name, value in self.cudagraphs.patches():
                    patcher.set(obj, name, value)
            yield
        finally:
            scopes.close()

    def finish(self) -> None:
        self.epilogues.finish()
        if self.cudagraphs is not None:
            self.cudagraphs.finish()

    @contextlib.contextmanager
    def around_compile(self, gm: Any, example_inputs: Any, kwargs: dict[str, Any], cid: str,
                       part: str) -> Iterator[list[Any]]:
        """Around one inner compile; the caller puts the compiled graph in the yielded list."""
        compiled: list[Any] = []
        if self.cudagraphs is not None:
            self.cudagraphs.before_compile(gm, cid, part)
        try:
            yield compiled
        finally:
            if self.cudagraphs is not None:
                self.cudagraphs.after_compile(gm, example_inputs, kwargs, compiled[0] if compiled else None)

    def _problem(self, message: str, source: str = "cudagraphs") -> None:
        if (source, message) not in self.capture.problems:
            self.capture.problems.append((source, message))


def _where() -> tuple[str, str]:
    """(compile id, part) of the graph Inductor is compiling now."""
    return compat.dynamo.current_compile_id() or "?", compat.inductor.output_code_part()
