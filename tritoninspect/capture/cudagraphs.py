"""`--cudagraphs`: what Inductor's CUDA graphs did with each compiled graph, as plain records
(`Capture.cudagraphs`, `model/cudagraph_records.py`).

Owned by the `Recorder`, which calls it around each inner compile and installs its patches for the
capture. On a GPU it records Inductor's own decisions (the skip messages it logs, whether it wrapped the
graph) and the CUDA-graph tree's runs (warm-ups, recordings, replays, runs without a graph); in
compile-only mode it runs Inductor's device-independent checks on the same graph and marks the result
"predicted". Private torch access is in `capture/compat/cudagraphs.py`. Every callback runs inside torch's
compile or a model call: none may raise into it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tritoninspect.capture.compat import cudagraphs as compat
from tritoninspect.model.cudagraph_records import (
    CudagraphCompile,
    CudagraphRecords,
    CudagraphRuns,
    CudagraphSkip,
    InputWriter,
    MutatedInput,
)
from tritoninspect.textformats.cudagraphs import skip_kind

#: How many times `--cudagraphs` calls the model per input set: the tree warms a function up on its
#: first call, records it on the second and replays it from the third.
CALLS_PER_INPUT_SET = 3


@dataclass
class _Compiling:
    compile_id: str
    part: str
    writers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)


@dataclass
class _Run:
    key: tuple[str | None, str]
    events: list[str] = field(default_factory=list)


class CudagraphRecorder:
    """The CUDA-graph part of a capture: called by the Recorder, writes `capture.cudagraphs`."""

    def __init__(self, records: CudagraphRecords, *, predicted: bool, kernel_id: Callable[[Any], str | None],
                 problem: Callable[[str], None]) -> None:
        self.records = records
        self.predicted = predicted
        self._kernel_id = kernel_id
        self._problem = problem
        self._compiling: list[_Compiling] = []
        self._runs: list[_Run] = []
        #: (compile id, part) -> counts, in first-seen order.
        self._counts: dict[tuple[str | None, str], CudagraphRuns] = {}
        self._functions: dict[tuple[str | None, str], set[Any]] = {}

    # --- scope -----------------------------------------------------------------------------

    @contextlib.contextmanager
    def mode(self) -> Iterator[None]:
        """Inductor's config as `mode="reduce-overhead"` sets it, for the capture."""
        with compat.reduce_overhead():
            yield

    def patches(self) -> list[tuple[Any, str, Any]]:
        """(object, attribute, value) triples the Recorder sets for the capture."""
        patches = compat.skip_logger_patches(self._on_skip)
        manager = compat.tree_manager_class()
        if manager is None:
            self._problem("this torch has no CUDA-graph trees (torch._inductor.cudagraph_trees): runs are not counted")
            return patches
        return patches + self._tree_patches(manager)

    def finish(self) -> None:
        """After the calls: the tree's counts become records."""
        for key, runs in self._counts.items():
            functions = len(self._functions.get(key, ()))
            self.records.runs.append(CudagraphRuns(key[0], key[1], functions, runs.warmups, runs.recordings,
                                                   runs.replays, runs.eager))

    # --- around each inner compile ---------------------------------------------------------------

    def before_compile(self, gm: Any, compile_id: str, part: str) -> None:
        """The AOT graph, before Inductor's passes rewrite it: who writes each input it mutates."""
        entry = _Compiling(compile_id, part)
        try:
            entry.writers = compat.input_writers(gm, self._kernel_id)
        except Exception as exc:  # noqa: BLE001 - inside torch's compile: a missing fact, not a failure
            self._problem(f"[{compile_id}] the writers of the graph's mutated inputs could not be read "
                          f"({type(exc).__name__}: {exc})")
        self._compiling.append(entry)

    def after_compile(self, gm: Any, example_inputs: Any, kwargs: dict[str, Any], compiled: Any) -> None:
        """The compile is done (or failed: `compiled` None): its decision becomes a record."""
        entry = self._compiling.pop() if self._compiling else None
        if entry is None or compiled is None:
            return
        try:
            self.records.compiles.append(self._compile_record(entry, gm, example_inputs, kwargs, compiled))
        except Exception as exc:  # noqa: BLE001 - inside torch's compile
            self._problem(f"[{entry.compile_id}] Inductor's CUDA-graph decision for the {entry.part} graph could "
                          f"not be read ({type(exc).__name__}: {exc})")

    def _compile_record(self, entry: _Compiling, gm: Any, example_inputs: Any, kwargs: dict[str, Any],
                        compiled: Any) -> CudagraphCompile:
        found = compat.verdict(gm, compiled, kwargs)
        if self.predicted:
            skips = [CudagraphSkip(when, skip_kind(text), text) for when, text in compat.predicted_skips(
                gm, example_inputs, found)]
            wrapped = not any(s.when == "compile" for s in skips)
        else:
            skips = [CudagraphSkip("compile", skip_kind(m), m) for m in entry.messages]
            if not found.wrapped and not skips:
                # Graph partitions skip without logging: the fail reasons say why.
                texts = ([found.disabled_reason] if found.disabled_reason else []) + list(found.fail_reasons or ())
                skips = [CudagraphSkip("compile", skip_kind(t), t) for t in texts]
            wrapped = found.wrapped
        skips += [CudagraphSkip("partition", k["kind"], k["text"], k["kernel_id"], k["site"])
                  for k in compat.kept_out(gm, self._kernel_id)]
        static = set(found.static_idxs)
        inputs = tuple(
            MutatedInput(i, found.placeholders[i] if i < len(found.placeholders) else "?", i in static,
                         tuple(InputWriter(**w) for w in entry.writers.get(
                             found.placeholders[i] if i < len(found.placeholders) else "", ())))
            for i in found.mutated_idxs
        )
        return CudagraphCompile(entry.compile_id, entry.part, "predicted" if self.predicted else "measured", wrapped,
                                tuple(skips), inputs, dynamic=compat.dynamic(example_inputs),
                                partitioned=found.partition,
                                partitions=None if self.predicted else found.partitions)

    # --- hooks ------------------------------------------------------------------------------

    def _on_skip(self, message: str) -> None:
        try:
            if self._runs:
                cid, part = self._runs[-1].key
                self.records.run_skips.append((cid, part, CudagraphSkip("run", skip_kind(message), message)))
            elif self._compiling:
                self._compiling[-1].messages.append(message)
            else:
                self.records.run_skips.append((None, "?", CudagraphSkip("compile", skip_kind(message), message)))
        except Exception:  # noqa: BLE001 - inside torch's own logging call
            pass

    def _tree_patches(self, manager: Any) -> list[tuple[Any, str, Any]]:
        recorder = self
        run = manager._run

        def counted_run(tree: Any, new_inputs: Any, function_id: Any) -> Any:
            key = compat.tree_function(tree, function_id)
            recorder._functions.setdefault(key, set()).add(function_id)
            outer = not recorder._runs
            recorder._runs.append(_Run(key))
            try:
                return run(tree, new_inputs, function_id)
            finally:
                done = recorder._runs.pop()
                if outer:
                    recorder._count(done)
                elif recorder._runs:
                    recorder._runs[-1].events.extend(done.events)

        patches: list[tuple[Any, str, Any]] = [(manager, "_run", counted_run)]
        for method, event in (("record_function", "record"), ("execute_node", "replay"), ("run_eager", "warmup")):
            original = getattr(manager, method, None)
            if original is not None:
                patches.append((manager, method, self._noting(original, event)))
        return patches

    def _noting(self, original: Any, event: str) -> Any:
        recorder = self

        def noted(tree: Any, *args: Any, **kwargs: Any) -> Any:
            if recorder._runs:
                recorder._runs[-1].events.append(event)
            return original(tree, *args, **kwargs)

        return noted

    def _count(self, run: _Run) -> None:
        counts = self._counts.setdefault(run.key, CudagraphRuns(run.key[0], run.key[1]))
        event = run.events[-1] if run.events else "eager"
        name = {"record": "recordings", "replay": "replays", "warmup": "warmups", "eager": "eager"}[event]
        self._counts[run.key] = dataclasses.replace(counts, **{name: getattr(counts, name) + 1})
