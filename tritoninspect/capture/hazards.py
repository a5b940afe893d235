"""Gathering the hazard evidence while the compile is alive (issue 24): plain records into
`Capture.hazards` for the analyses of `analyse/hazards/`.

Owned by the `Recorder`, which calls it from its own hooks (graph nodes, launches, kernel
registration) and installs its patches for the duration of a capture. Private torch access goes
through `capture/compat/` (autotune, layouts, lowering, mutation). Every callback here runs inside
torch's compile or a launch: none may raise into it.
"""

from __future__ import annotations

import ast
import inspect
import logging
import textwrap
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch

from tritoninspect.capture import compat
from tritoninspect.capture.compat import autotune, layouts, lowering, mutation
from tritoninspect.model.hazard_records import (
    AnalysisTime,
    ArgLayout,
    CloneCause,
    CloneSource,
    HazardRecords,
    KernelSource,
    SideTableKernel,
    StorageOverread,
)
from tritoninspect.model.records import Capture, NodeRecord

log = logging.getLogger(__name__)

#: Runtime layouts kept per (compile id, output-code kernel): enough for every launch of one call.
RUNTIME_LAUNCHES = 32
#: Stages whose graphs hold the user's own tensors (before Inductor's copies).
EAGER_STAGES = ("dynamo", "aot_forward", "aot_backward", "aot_inference")


class HazardRecorder:
    """The hazard part of a capture: called by the Recorder, writes `capture.hazards`."""

    def __init__(self, capture: Capture, kernel_id: Callable[[Any], str | None]) -> None:
        self.capture = capture
        self.records: HazardRecords = capture.hazards
        self._kernel_id = kernel_id
        self._side_table_seen: set[tuple[str, Any]] = set()
        self._runtime: Counter[tuple[str | None, str]] = Counter()
        self._runtime_seen: set[tuple[Any, ...]] = set()
        #: Fallback records already matched to an analysis run.
        self._counted: set[Any] = set()

    # --- patches ---------------------------------------------------------------------------

    def attribute_patches(self) -> list[tuple[Any, str, Any]]:
        """(object, attribute, value) triples the Recorder sets for the capture (timing the analysis)."""
        return mutation.timing_patches(self._on_analysis)

    def item_patches(self) -> list[tuple[Any, Any, Any]]:
        """(mapping, key, value) items the Recorder sets for an Inductor capture (the as_strided check)."""
        return lowering.overread_patches(self._on_overread)

    # --- kernels and graph nodes ---------------------------------------------------------------------

    def on_kernel(self, kid: str, jf: Any, user_object: Any) -> None:
        """A user kernel was registered: note its source and its own `@triton.autotune`, if any."""
        try:
            layer = _autotune_layer(user_object)
            found = autotune.settings(layer) if layer is not None else None
            if found is not None:
                self.records.user_autotune.setdefault(kid, found)
            source = kernel_source(jf)
            if source is not None:
                self.records.kernel_sources.setdefault(kid, source)
        except Exception as exc:  # noqa: BLE001 - evidence is best effort; registering the kernel goes on
            self._problem(f"{kid}: {type(exc).__name__}: {exc}")

    def on_hop(self, node: torch.fx.Node, fields: dict[str, Any], record: NodeRecord) -> None:
        """A HOP node was recorded: the side-table kernel, its arguments' layouts, clone facts."""
        try:
            self._on_hop(node, fields, record)
        except Exception as exc:  # noqa: BLE001 - evidence is best effort; the capture goes on
            self._problem(f"[{record.compile_id}] {record.node}: {type(exc).__name__}: {exc}")

    def _on_hop(self, node: torch.fx.Node, fields: dict[str, Any], record: NodeRecord) -> None:
        if record.kernel_id is None:
            return
        self._side_table(fields, record)
        if record.stage in EAGER_STAGES:
            consts = compat.hops.side_table_constants(fields["constant_args_idx"])
            scalars = {k: v for k, v in {**fields["kwargs"], **consts}.items()
                       if isinstance(v, (bool, int, float))}
            self.records.layouts.append(ArgLayout(
                record.compile_id, record.part, record.stage, record.kernel_id, record.node,
                layouts.tensor_args(fields["kwargs"].items()), layouts.eager_scalar_types(scalars)))
        if record.stage == "post_grad" and record.form == "functional":
            self.records.clone_causes += clone_causes(node, fields, record)
        if record.stage == "post_grad_final":
            for param, value in fields["kwargs"].items():
                found = lowering.clone_source(value)
                if found is not None:
                    self.records.clone_sources.append(CloneSource(
                        record.compile_id, record.part, record.node, record.kernel_id, param, **found))

    def _side_table(self, fields: dict[str, Any], record: NodeRecord) -> None:
        key = (record.compile_id, fields["kernel_idx"])
        if key in self._side_table_seen:
            return
        self._side_table_seen.add(key)
        kernel = compat.hops.side_table_kernel(fields["kernel_idx"])
        jf = compat.kernels.innermost_jit(kernel)
        user = compat.kernels.user_kernel_object(jf, kernel) if jf is not None else None
        users = _layers_of(user)
        own = any(kernel is layer for layer in users)
        folded = () if own else tuple(n for n in autotune.layers(user) if n not in autotune.layers(kernel))
        self.records.side_table.append(SideTableKernel(
            record.compile_id, record.kernel_id, record.node, own, autotune.settings(kernel), folded))

    # --- launches and lowering -----------------------------------------------------------------------

    def on_inductor_launch(self, autotuner: Any, args: tuple[Any, ...], compile_id: str | None) -> None:
        """Inductor launched a user kernel: what its tensor arguments are, the first launches of each."""
        try:
            name = compat.inductor.kernel_name(autotuner) or "?"
            index = self._runtime[(compile_id, name)]
            self._runtime[(compile_id, name)] += 1
            if index >= RUNTIME_LAUNCHES:
                return
            jf = compat.inductor.user_kernel_of_launcher(autotuner)
            kid = self._kernel_id(jf) if jf is not None else None
            if kid is None:
                return
            names = compat.interpreter.launcher_arg_names(autotuner.fn, autotuner.triton_meta, autotuner.inductor_meta)
            args_now = layouts.tensor_args(zip(names, args))
            seen = (compile_id, name, args_now)
            if seen in self._runtime_seen:
                return
            self._runtime_seen.add(seen)
            self.records.layouts.append(ArgLayout(compile_id or "?", "", "runtime", kid, f"{name}#{index}", args_now))
        except Exception as exc:  # noqa: BLE001 - inside a launch: never break the run
            self._problem(f"a launch's arguments could not be read ({type(exc).__name__}: {exc})")

    def _on_overread(self, node: str, buffer: str, allocated: int | None, needed: int | None) -> None:
        cid = compat.dynamo.current_compile_id() or "?"
        part = compat.inductor.output_code_part()
        self.records.overreads.append(StorageOverread(cid, part, node, buffer, allocated, needed))

    def _on_analysis(self, kernel: Any, seconds: float) -> None:
        try:
            kid = self._kernel_id(kernel)
            cid = compat.dynamo.current_compile_id() or "?"
            # The fallback warning is logged (and recorded) inside the run just timed.
            fell_back = any(f.compile_id == cid and f.kernel_id == kid and f not in self._counted
                            for f in self.capture.fallbacks)
            self._counted.update(f for f in self.capture.fallbacks)
            self.records.analysis_times.append(AnalysisTime(cid, kid, seconds, fell_back))
        except Exception as exc:  # noqa: BLE001 - inside torch's analysis
            self._problem(f"mutation analysis could not be timed ({type(exc).__name__}: {exc})")

    def _problem(self, message: str) -> None:
        source = "hazard evidence"
        if not any(s == source for s, _ in self.capture.problems):
            self.capture.problems.append((source, message))


def kernel_source(jf: Any) -> KernelSource | None:
    """`JITFunction.src` (the function from its `def`, triton 3.6-3.8) and the line of that `def`."""
    src = getattr(jf, "src", None)
    if not isinstance(src, str):
        return None
    constants = global_constants(jf, src)
    try:
        lines, first = inspect.getsourcelines(jf.fn)
    except (OSError, TypeError):
        return KernelSource(None, src, constants)
    offset = next((i for i, line in enumerate(lines) if line.lstrip().startswith("def ")), 0)
    return KernelSource(first + offset, src, constants)


def global_constants(jf: Any, src: str) -> dict[str, Any] | None:
    """The module globals `src` names that hold a `tl.constexpr`, a number, a bool or a string, as
    plain values: an `if casting_mode == _CASTING_MODE_NONE:` is decided with them. None when the
    function's globals or its source cannot be read."""
    namespace = getattr(getattr(jf, "fn", None), "__globals__", None)
    try:
        tree = ast.parse(textwrap.dedent(src))
    except SyntaxError:
        return None
    if not isinstance(namespace, dict):
        return None
    found = {}
    for name in sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} & namespace.keys()):
        value = namespace[name]
        # tl.constexpr wraps the value (triton/language/core.py `constexpr.value`, triton 3.x).
        value = value.value if type(value).__name__ == "constexpr" and hasattr(value, "value") else value
        if isinstance(value, (bool, int, float, str)):
            found[name] = value
    return found


def _autotune_layer(obj: Any) -> Any:
    for layer in _layers_of(obj):
        if autotune.settings(layer) is not None:
            return layer
    return None


def _layers_of(obj: Any) -> list[Any]:
    return compat.kernels.decorator_stack(obj) if obj is not None else []


def clone_causes(node: torch.fx.Node, fields: dict[str, Any], record: NodeRecord) -> list[CloneCause]:
    """Why each argument in `tensors_to_clone` might keep its clone, from the functional graph before
    re-inplacing: what re-inplacing checks (torch/_inductor/fx_passes/reinplace.py `can_inplace`:
    a graph input needs a copy back and no later use; a view of an input is never re-inplaced; any
    other tensor, no later use of its storage)."""
    order = {n: i for i, n in enumerate(node.graph.nodes)}
    kwargs = fields["kwargs"]
    causes = []
    for param in record.tensors_to_clone or ():
        arg = kwargs.get(param)
        tensor = layouts.example_value(arg)
        if not isinstance(arg, torch.fx.Node) or tensor is None:
            continue
        key = layouts.storage_key(tensor)
        sharing = [n for n in node.graph.nodes if _same_storage(n, key)]
        later = sorted({u.name for n in sharing for u in n.users
                        if order.get(u, -1) > order[node] and not _copies_into(u, n)})
        view = _is_view(tensor)
        causes.append(CloneCause(
            record.compile_id, record.part, record.node, record.kernel_id or "", param,
            graph_input=arg.op == "placeholder",
            view_of_input=arg.op != "placeholder" and any(n.op == "placeholder" for n in sharing),
            view=bool(view), read_after=tuple(later),
            same_tensor_as=tuple(p for p, v in kwargs.items() if v is arg and p != param),
        ))
    return causes


def _is_view(tensor: torch.Tensor) -> bool:
    """An offset, or fewer elements than its storage holds; symbolic sizes are never compared (a
    comparison of a SymInt would guard on it and specialise the user's dynamic compile)."""
    offset, numel = tensor.storage_offset(), tensor.numel()
    nbytes = tensor.untyped_storage().nbytes()
    if isinstance(offset, int) and offset != 0:
        return True
    return isinstance(nbytes, int) and isinstance(numel, int) and numel * tensor.element_size() < nbytes


def _same_storage(node: torch.fx.Node, key: Any) -> bool:
    value = layouts.example_value(node)
    return key is not None and value is not None and layouts.storage_key(value) == key


def _copies_into(user: torch.fx.Node, node: torch.fx.Node) -> bool:
    """`copy_(node, ...)`: the mutated input written back, not read."""
    return user.target is torch.ops.aten.copy_.default and user.args and user.args[0] is node
