"""Epilogue fusion into user kernels (issue 24 item 7): for each user-kernel launch Inductor schedules, the
nodes that read what it writes, and Inductor's verdict on fusing each into the kernel, as plain records
(`Capture.epilogues`, `model/cudagraph_records.py`).

Owned by the `Recorder` for an Inductor capture. Private torch access is in `capture/compat/epilogues.py`.
The hooks run inside Inductor's scheduler: none may raise into it, and none changes what it decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tritoninspect.capture.compat import epilogues as compat
from tritoninspect.model.cudagraph_records import EpilogueCandidate, EpilogueRecord


@dataclass
class _Launch:
    """A user-kernel launch being recorded (turned into an `EpilogueRecord` at the end)."""

    compile_id: str
    part: str
    kernel_id: str | None
    node: str
    written: set[str]
    blockers: tuple[str, ...]
    #: Candidate node name -> [ops, accepted, reason, backend that refused].
    candidates: dict[str, list[Any]] = field(default_factory=dict)


class EpilogueRecorder:
    """Watches Inductor's scheduler for user-kernel launches and the epilogues it considers for them."""

    def __init__(self, records: list[EpilogueRecord], *, kernel_id: Callable[[Any], str | None],
                 where: Callable[[], tuple[str, str]], problem: Callable[[str], None]) -> None:
        self.records = records
        self._kernel_id = kernel_id
        self._where = where
        self._problem = problem
        self._launches: list[_Launch] = []
        #: The pair `Scheduler.can_fuse` is deciding now: (launch, candidate names), and the last reason given.
        self._pair: tuple[_Launch, set[str]] | None = None
        self._reason = ""
        self._backend: str | None = None

    def patches(self) -> list[tuple[Any, str, Any]]:
        """(object, attribute, value) triples the Recorder sets for an Inductor capture."""
        scheduler = compat.scheduler_class()
        patches = [compat.wrap_method(scheduler, "fuse_nodes", self._fuse_nodes),
                   compat.wrap_method(scheduler, "can_fuse", self._can_fuse)]
        why = compat.why_class()
        if why is not None:
            patches.append(compat.wrap_method(why, "__call__", self._why))
        for cls, name in compat.backend_classes():
            patches.append(compat.wrap_method(cls, "can_fuse_vertical", self._backend_check(name)))
        return patches

    def finish(self) -> None:
        for launch in self._launches:
            candidates = tuple(EpilogueCandidate(name, tuple(ops), accepted, reason, backend)
                               for name, (ops, accepted, reason, backend) in launch.candidates.items())
            self.records.append(EpilogueRecord(launch.compile_id, launch.part, launch.kernel_id, launch.node,
                                               compat.available(), compat.enabled(), launch.blockers, candidates))
        self._launches.clear()

    # --- hooks ---------------------------------------------------------------------------------

    def _fuse_nodes(self, original: Any, scheduler: Any, nodes: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            self._note_launches(nodes)
        except Exception as exc:  # noqa: BLE001 - inside Inductor's scheduler
            self._problem(f"the user-kernel launches Inductor scheduled could not be read ({type(exc).__name__}: {exc})")
        return original(scheduler, nodes, *args, **kwargs)

    def _note_launches(self, nodes: Any) -> None:
        # Without the fusion (torch before 2.12) each launch is still recorded: the report says so.
        available = compat.available()
        cid, part = self._where()
        for snode in nodes:
            kernel = compat.user_kernel(snode)
            if kernel is None or any(lau.node == snode.get_name() and (lau.compile_id, lau.part) == (cid, part)
                                     for lau in self._launches):
                continue
            try:
                blockers = compat.blockers(kernel) if available else ()
            except Exception as exc:  # noqa: BLE001 - torch's own check raised (an assertion in 2.13)
                blockers = (f"torch's check raised {type(exc).__name__}: {exc}",)
            launch = _Launch(cid, part, self._kernel_id(compat.kernel_object(kernel)), snode.get_name(),
                             compat.written_buffers(kernel), blockers)
            for other in nodes:
                if other is not snode and launch.written & compat.reads(other):
                    launch.candidates[other.get_name()] = [compat.ops(other), None, "", None]
            self._launches.append(launch)

    def _launch_of(self, snode: Any) -> _Launch | None:
        """The launch `snode` is, in the graph being scheduled: node names restart at op0 in each graph, and a
        backward's pointwise op1 was taken for the forward's launch op1 (its fusion with op4 was listed as the
        launch's epilogue, "fused", with the fusion off)."""
        if compat.user_kernel(snode) is None:
            return None
        names, where = compat.operation_names(snode), self._where()
        return next((lau for lau in reversed(self._launches)
                     if lau.node in names and (lau.compile_id, lau.part) == where), None)

    def _can_fuse(self, original: Any, scheduler: Any, node1: Any, node2: Any, *args: Any, **kwargs: Any) -> Any:
        launch = self._launch_of(node1) if self._launches else None
        if launch is None:
            return original(scheduler, node1, node2, *args, **kwargs)
        outer = self._pair
        self._pair, self._reason, self._backend = (launch, compat.operation_names(node2)), "", None
        try:
            result = original(scheduler, node1, node2, *args, **kwargs)
            self._note_verdict(launch, node2, bool(result))
            return result
        finally:
            self._pair = outer

    def _note_verdict(self, launch: _Launch, node2: Any, accepted: bool) -> None:
        try:
            names = compat.operation_names(node2)
            for name in names & set(launch.candidates) or names:
                entry = launch.candidates.setdefault(name, [compat.ops(node2), None, "", None])
                # A pair accepted once stays accepted (the scheduler asks again as fusion goes on).
                if entry[1] is not True:
                    entry[1:] = [accepted, "" if accepted else self._reason, None if accepted else self._backend]
        except Exception as exc:  # noqa: BLE001 - inside Inductor's scheduler
            self._problem(f"an epilogue verdict could not be read ({type(exc).__name__}: {exc})")

    def _why(self, original: Any, why: Any, reason: str, *args: Any, **kwargs: Any) -> Any:
        if self._pair is not None:
            self._reason = compat.why_text(why, reason, args)
        return original(why, reason, *args, **kwargs)

    def _backend_check(self, name: str) -> Callable[..., Any]:
        def check(original: Any, backend: Any, node1: Any, node2: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(backend, node1, node2, *args, **kwargs)
            if self._pair is not None and not result and self._backend is None:
                self._backend = name
            return result

        return check
