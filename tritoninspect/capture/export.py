"""Run an export capture: the model eagerly, then torch.export, then AOTInductor.

The eager run (launches recorded) gives the reference output and the kernels each custom op
launches; `torch.export.export` gives the program, its signature and shape constraints;
`aoti_compile_and_package` the package, loaded and compared with eager in GPU mode. Each
failure becomes the capture's failure record with the stage it happened in; what came
before it is kept. Compile-only mode tries AOTInductor on CPU (Triton's interpreter for
the kernels) and says what could not be built or run there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import torch
from triton.runtime.jit import JITFunction

from tritoninspect.capture import compat
from tritoninspect.capture.calls import call_with, keywords
from tritoninspect.capture.compat import export as export_api
from tritoninspect.model.export_records import AotiRecord, EagerLaunch, ExportCapture, ExportNode, InputDims
from tritoninspect.capture.crash import fatal_signal_stacks
from tritoninspect.capture.failure import Progress, failure_record, raised_in_tool
from tritoninspect.model.records import Failure
from tritoninspect.capture.patching import Patcher
from tritoninspect.capture.patching import scoped_env
from tritoninspect.capture.plain import first_line, kernel_record, plain
from tritoninspect.capture.scratch import scratch_inductor_cache
from tritoninspect.capture.session import ModeInfo, capture_meta, quiet_torch_logs
from tritoninspect.model.errors import TritonInspectError, ends_the_run


#: Runs AOTInductor somewhere else (a child process: run/aoti.py) and returns its record and
#: failure: a native crash there (SIGSEGV while building, loading or running the package)
#: cannot take this process, and the export recorded here, down with it.
AotiRunner = Callable[[], "tuple[AotiRecord, Failure | None]"]

#: Set by run/aoti.py in its child: the file each stage's name is written to as it starts,
#: so that the parent can say which stage a crash killed.
STAGE_FILE_ENV = "TRITONINSPECT_STAGE_FILE"
#: Set by run/aoti.py in its child: where the package record is pickled once the package is
#: built, before it is loaded (a crash while loading or running it keeps the generated code).
BUILT_FILE_ENV = "TRITONINSPECT_BUILT_FILE"
#: Test hook: the stage at which the process kills itself with SIGSEGV (tests of the crash path).
CRASH_AT_ENV = "TRITONINSPECT_TEST_CRASH_AT"


def capture_export(module: Any, args: tuple[Any, ...], *, info: ModeInfo, strict: bool | None, stage: str,
                   dynamic: str, dynamic_shapes: Any = None, target: str = "",
                   inputs: tuple[str, ...] = (), aoti_runner: AotiRunner | None = None,
                   torch_logs: bool = False) -> ExportCapture:
    """Export `module` on `args` (strict as asked, else torch's default), then AOTInductor
    unless `stage` is "export" (here, or through `aoti_runner`). `dynamic`: "none", "auto"
    (Dim.AUTO on every dimension) or "target" (`dynamic_shapes` as the target gave them)."""
    cap = ExportCapture(strict=export_api.default_strict() if strict is None else strict,
                        strict_source="torch default" if strict is None else ("--strict" if strict else "--non-strict"),
                        dynamic=dynamic)
    if dynamic == "auto":
        dynamic_shapes = _auto_shapes(module, args)
    # A fatal signal (SIGSEGV in a native extension) at least leaves the Python stack on stderr.
    quiet = contextlib.nullcontext() if torch_logs else quiet_torch_logs()  # --debug lets them through
    with fatal_signal_stacks(), scratch_inductor_cache(), quiet, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run(cap, module, args, info=info, stage=stage, dynamic_shapes=dynamic_shapes, aoti_runner=aoti_runner)
    cap.meta = {**capture_meta(info, stage, dynamic != "none", False, target, inputs), "calls": 1}
    return cap


def _run(cap: ExportCapture, module: Any, args: tuple[Any, ...], *, info: ModeInfo, stage: str,
         dynamic_shapes: Any, aoti_runner: AotiRunner | None = None) -> None:
    _record_inputs(cap, module, args, dynamic_shapes)
    # "eager", not "run": nothing is compiled yet; this is the reference run of the model itself.
    reference = _step(cap, "eager", lambda: _eager(cap, module, args))
    if cap.failure is not None:
        return
    start = time.perf_counter()
    ep = _step(cap, "export", lambda: export_api.export(module, args, strict=cap.strict,
                                                            dynamic_shapes=dynamic_shapes, kwargs=keywords(args)))
    cap.export_time_s = time.perf_counter() - start
    if cap.failure is not None:
        return
    _record_program(cap, ep, args)
    if stage == "export":
        return
    if aoti_runner is None:
        cap.aoti = _aoti(cap, ep, args, reference, info)
    else:
        del ep, reference  # the child exports again; nothing of AOTInductor runs in this process
        cap.aoti, cap.failure = aoti_runner()


def _step(cap: ExportCapture, stage: str, fn: Any) -> Any:
    """`fn()`; an exception from the model or torch becomes the failure record at `stage`."""
    _entering(stage)
    try:
        return fn()
    except TritonInspectError:
        raise
    except BaseException as exc:  # noqa: BLE001 - recorded (sys.exit() too): the report shows it with what came before
        if ends_the_run(exc):
            raise
        progress = Progress(call=stage)
        record = failure_record(exc, progress)
        import dataclasses

        cap.failure = dataclasses.replace(record, stage=stage if record.stage in ("run", "dynamo") else record.stage)
        if raised_in_tool(exc):
            raise
        return None


#: Each step in words, for the progress display (tritoninspect/capture/progress.py; run/aoti.py too).
STAGE_PROGRESS = {
    "eager": "running the model eagerly (the reference run)",
    "export": "torch.export: tracing the program",
    "aoti": "AOTInductor: building the package (C++ and kernels: often a minute or more)",
    "aoti_load": "AOTInductor: loading the package",
    "aoti_run": "AOTInductor: running the package, comparing with eager",
}


def _entering(stage: str) -> None:
    """Say which stage starts: to the progress listener, and (in a child of run/aoti.py) to
    the stage file; the crash test hook fires here."""
    from tritoninspect.capture.progress import stage as progress

    progress(STAGE_PROGRESS.get(stage, stage))
    path = os.environ.get(STAGE_FILE_ENV)
    if path:
        with open(path, "w") as f:
            f.write(stage)
    if os.environ.get(CRASH_AT_ENV) == stage:
        os.kill(os.getpid(), signal.SIGSEGV)


# --- eager -------------------------------------------------------------------------------------


def _eager(cap: ExportCapture, module: Any, args: tuple[Any, ...]) -> Any:
    """Run the model once, no grad, recording each user-kernel launch and the op it ran in."""
    codes = compat.library.custom_op_codes()
    counts: Counter[tuple[Any, ...]] = Counter()
    patcher = Patcher()
    original = JITFunction.run

    def run(jf: JITFunction, *a: Any, **kw: Any) -> Any:
        if not kw.get("warmup"):  # compile-only mode compiles each launch through a warmup first
            counts[_launch_key(cap, jf, a, kw, codes)] += 1
        return original(jf, *a, **kw)

    try:
        patcher.set(JITFunction, "run", run)
        with torch.no_grad():
            out = call_with(module, args)
    finally:
        patcher.restore()
    for (kid, op, consts, scalars), n in counts.items():
        cap.launches.append(EagerLaunch(kid, op, dict(consts), dict(scalars), n))
    for op in sorted({key[1] for key in counts if key[1]}):
        cap.ops[op] = compat.library.is_triton_op(op)
        if export_api.has_fake(op) is False:
            cap.ops_without_fake.append(op)
    return out


def _launch_key(cap: ExportCapture, jf: JITFunction, args: tuple[Any, ...], kwargs: dict[str, Any],
                codes: dict[Any, str]) -> tuple[Any, ...]:
    kid = _kernel(cap, jf)
    bound = dict(zip(jf.arg_names, args))
    bound.update({k: v for k, v in kwargs.items() if k in jf.arg_names})
    declared = set(cap.kernels[kid].constexpr_params)
    values = {k: plain(v) for k, v in bound.items() if not isinstance(v, torch.Tensor) and hasattr(v, "__int__")}
    consts = {k: v for k, v in values.items() if k in declared}
    scalars = {k: v for k, v in values.items() if k not in declared}
    return kid, _op_on_stack(codes), tuple(sorted(consts.items())), tuple(sorted(scalars.items()))


def _op_on_stack(codes: dict[Any, str]) -> str | None:
    frame = sys._getframe(2)
    while frame is not None:
        op = codes.get(frame.f_code)
        if op is not None:
            return op
        frame = frame.f_back
    return None


def _kernel(cap: ExportCapture, obj: Any) -> str:
    jf = compat.kernels.innermost_jit(obj)
    kid = compat.kernels.kernel_id(jf)
    if kid not in cap.kernels:
        cap.kernels[kid] = kernel_record(jf, kid)
    return kid


# --- the exported program ----------------------------------------------------------------------


def _record_program(cap: ExportCapture, ep: Any, args: tuple[Any, ...]) -> None:
    cap.graph_code = export_api.graph_code(ep)
    cap.signature = export_api.signature(ep)
    values = export_api.placeholder_values(ep)
    cap.tensors = {name: info[0] for name, v in values.items() if (info := compat.hops.tensor_info(v))}
    cap.tensors.update(export_api.output_tensors(ep))
    cap.ranges = export_api.range_constraints(ep)
    user = [name for direction, kind, name, _ in cap.signature if direction == "input" and kind == "USER_INPUT"]
    tensor_names = [name for name, a in zip(user, args) if isinstance(a, torch.Tensor)]
    for i, record in enumerate(cap.inputs):
        name = tensor_names[i] if i < len(tensor_names) else record.name
        val = values.get(name)
        exported = tuple(str(d) for d in val.shape) if isinstance(val, torch.Tensor) else ()
        cap.inputs[i] = InputDims(name, record.example, exported, record.requested)
    cap.op_count = sum(1 for n in ep.graph.nodes if n.op == "call_function")
    for node in export_api.graph_nodes(ep):
        record = _node_record(cap, node)
        if record is not None:
            cap.nodes.append(record)
    for op in {n.op for n in cap.nodes if n.op}:
        cap.ops.setdefault(op, compat.library.is_triton_op(op))
    _record_decomposed(cap, ep)


def _record_decomposed(cap: ExportCapture, ep: Any) -> None:
    """The functional program's signature and each kernel's writes (its HOP's tensors_to_clone).
    A failure here is a diagnostic: the exported program itself is recorded already."""
    try:
        functional = export_api.decomposed(ep)
    except Exception as exc:  # noqa: BLE001 - AOTInductor will meet the same error and report it
        cap.problems.append(("export", f"run_decompositions() failed ({type(exc).__name__}: {first_line(exc)})"))
        return
    cap.decomposed_signature = export_api.signature(functional)
    for node in export_api.graph_nodes(functional):
        if compat.hops.hop_form(node) == "functional":
            fields = compat.hops.hop_fields(node)
            kid = _kernel(cap, compat.hops.side_table_kernel(fields["kernel_idx"]))
            cap.writes.setdefault(kid, []).extend(fields["tensors_to_clone"] or [])


def _record_inputs(cap: ExportCapture, module: Any, args: tuple[Any, ...], dynamic_shapes: Any) -> None:
    """Each tensor argument's example sizes and what was asked of each dimension, named as
    forward's parameters (export names the user inputs after them)."""
    names = _forward_params(module)
    named = [(names[i] if i < len(names) else f"arg{i}", arg) for i, arg in enumerate(args)]
    for index, (name, arg) in enumerate([*named, *keywords(args).items()]):
        if isinstance(arg, torch.Tensor):
            cap.inputs.append(InputDims(name, tuple(arg.shape), (), _requested(dynamic_shapes, index, name, arg)))


def _forward_params(module: Any) -> list[str]:
    import inspect

    try:
        return list(inspect.signature(getattr(module, "forward", module)).parameters)
    except (TypeError, ValueError):
        return []


def _node_record(cap: ExportCapture, node: torch.fx.Node) -> ExportNode | None:
    if compat.hops.hop_form(node) is not None:
        fields = compat.hops.hop_fields(node)
        kid = _kernel(cap, compat.hops.side_table_kernel(fields["kernel_idx"]))
        consts = compat.hops.side_table_constants(fields["constant_args_idx"])
        values = {k: plain(v) for k, v in {**fields["kwargs"], **consts}.items() if not _is_tensor(v)}
        declared = set(cap.kernels[kid].constexpr_params)
        return ExportNode(node.name, "hop", kid, kernel_idx=int(fields["kernel_idx"]),
                          grid=tuple(tuple(plain(g) for g in grid) for grid in fields["grid"]),
                          constexprs={k: v for k, v in values.items() if k in declared},
                          scalars={k: v for k, v in values.items() if k not in declared})
    op = compat.library.op_name(node.target) if node.op == "call_function" else None
    if op is None or not compat.library.is_custom_op(op):
        return None
    triton_op = compat.library.is_triton_op(op)
    kernels = [_kernel(cap, k) for k in compat.library.triton_op_kernels(op)] if triton_op else []
    return ExportNode(node.name, "op", kernels[0] if kernels else None, op, triton_op)


def _is_tensor(value: Any) -> bool:
    if isinstance(value, torch.fx.Node):
        return isinstance(value.meta.get("val"), torch.Tensor)
    return isinstance(value, torch.Tensor)


def _auto_shapes(module: Any, args: tuple[Any, ...]) -> tuple[Any, ...] | dict[str, Any]:
    """Dim.AUTO on every dimension of every tensor argument (None for the rest); by forward's parameter
    names where some inputs are keywords (torch.export takes a dict of them then)."""
    auto = export_api.dim_auto()

    def shape(a: Any) -> Any:
        return {i: auto for i in range(a.dim())} if isinstance(a, torch.Tensor) else None

    if not keywords(args):
        return tuple(shape(a) for a in args)
    names = _forward_params(module)
    return {**{names[i]: shape(a) for i, a in enumerate(args)}, **{k: shape(v) for k, v in keywords(args).items()}}


def _requested(dynamic_shapes: Any, index: int, name: str, example: torch.Tensor) -> tuple[str, ...]:
    spec = None
    if isinstance(dynamic_shapes, (tuple, list)) and index < len(dynamic_shapes):
        spec = dynamic_shapes[index]
    elif isinstance(dynamic_shapes, dict) and name in dynamic_shapes:
        spec = dynamic_shapes[name]
    elif isinstance(dynamic_shapes, dict) and index < len(dynamic_shapes):
        spec = list(dynamic_shapes.values())[index]
    if not isinstance(spec, dict):
        return tuple("static" for _ in example.shape)
    return tuple(_dim_name(spec.get(i)) for i in range(example.dim()))


def _dim_name(dim: Any) -> str:
    if dim is None:
        return "static"
    text = str(dim)
    if "AUTO" in text:
        return "auto"
    if "DYNAMIC" in text:
        return "dynamic"
    return str(getattr(dim, "__name__", text))


# --- AOTInductor -------------------------------------------------------------------------------


def _aoti(cap: ExportCapture, ep: Any, args: tuple[Any, ...], reference: Any, info: ModeInfo) -> AotiRecord:
    gpu = info.mode == "gpu"
    record = AotiRecord(status="failed", device=info.device if gpu else "cpu (compile-only mode)")
    with tempfile.TemporaryDirectory(prefix="tritoninspect-aoti-") as tmp:
        path = os.path.join(tmp, "model.pt2")
        start = time.perf_counter()
        with _interpreted(not gpu), _traced_code() as traced:
            built = _step(cap, "aoti", lambda: export_api.aoti_compile(ep, path))
        record.code.update(traced)
        record.build_time_s = time.perf_counter() - start
        if built is None:
            _unbuilt(cap, record, gpu)
            return record
        record.status = "built"
        record.files = export_api.package_files(built)
        record.code = export_api.package_text(built)
        _built(record)
        _load_and_compare(cap, record, built, args, reference, gpu)
    return record


def _built(record: AotiRecord) -> None:
    path = os.environ.get(BUILT_FILE_ENV)
    if path:
        import pickle

        with open(path, "wb") as f:
            pickle.dump(record, f)


#: Structured-trace artifacts that hold AOTInductor's generated code, -> the name the report
#: gives them. torch/_inductor/codegen/wrapper.py `generate_and_run_autotune_block` emits the
#: Python block that compiles (and on a GPU autotunes) each Triton kernel for the C++ wrapper
#: ("inductor_autotune_at_compile_time_code", torch 2.11-2.14; PR not found), before the C++
#: is finished: compile-only mode keeps it even when the package cannot be built.
TRACED_CODE = {"inductor_autotune_at_compile_time_code": "kernels.autotune_block.py"}


@contextlib.contextmanager
def _traced_code() -> Iterator[dict[str, str]]:
    """Collect the generated code torch writes to its structured trace during the block."""
    import logging

    from tritoninspect.capture.logs import LogHandler

    found: dict[str, str] = {}

    def on_trace(record: logging.LogRecord) -> None:
        name, artifact, _ = compat.dynamo.trace_event(record)
        label = TRACED_CODE.get(artifact or name)
        payload = getattr(record, "payload", None)
        if label and isinstance(payload, str):
            found[label] = payload

    handler = LogHandler(on_trace)
    logger = logging.getLogger(compat.dynamo.TRACE_LOGGER)
    logger.addHandler(handler)
    try:
        yield found
    finally:
        logger.removeHandler(handler)


@contextlib.contextmanager
def _interpreted(on: bool) -> Iterator[None]:
    # As in the recorder: TRITON_INTERPRET only around Inductor's compile, so it loads
    # user kernels for the interpreter instead of precompiling them for a GPU.
    if not on:
        yield
        return
    with scoped_env("TRITON_INTERPRET", "1"):
        yield


#: What AOTInductor raises when it cannot build a user Triton kernel into a CPU package in
#: compile-only mode (no Triton CPU backend; the kernel ran in the interpreter), torch 2.13:
#: cpp_wrapper_cpu.py "CpuTritonKernelCache not populated" (after the autotune block), and
#: Triton's make_backend "0 compatible backends for target (cpu)" when compiling the block
#: without the interpreter. Any other AOTInductor failure stays the run's failure.
COMPILE_ONLY_LIMITS = ("CpuTritonKernelCache", "compatible backends for target (cpu)")


def _unbuilt(cap: ExportCapture, record: AotiRecord, gpu: bool) -> None:
    """Compile-only mode cannot build a package that launches user Triton kernels: say so as a
    limit of the mode, not as the user's failure."""
    failure = cap.failure
    if gpu or failure is None or not any(text in failure.message for text in COMPILE_ONLY_LIMITS):
        return
    record.status = "unavailable"
    record.notes.append(
        "AOTInductor could not build the package on this CPU machine: it must compile each user Triton kernel "
        f"for the package's device and load it from C++ ({failure.exc_type}: {first_line(failure.message)[:300]}). "
        "No cubin was built or loaded and no package ran: run on a GPU for that"
    )
    cap.failure = None


def _load_and_compare(cap: ExportCapture, record: AotiRecord, path: str, args: tuple[Any, ...], reference: Any,
                      gpu: bool) -> None:
    # The wrapper .so needs its C++ runtime in the global symbol scope (compat/cxx_runtime.py).
    compat.cxx_runtime.promote_loaded()
    model = _step(cap, "aoti_load", lambda: export_api.aoti_load(path))
    record.loaded = model is not None
    if model is None:
        return
    out = _step(cap, "aoti_run", lambda: call_with(model, args))
    if cap.failure is not None:
        return
    diff = _max_abs_diff(out, reference)
    record.max_abs_diff = diff
    record.matches_eager = None if diff is None else diff <= _TOLERANCE
    if not gpu:
        record.notes.append("built and run for CPU in compile-only mode (user kernels in Triton's interpreter): "
                            "not a GPU package, no cubin")


#: Largest absolute difference from eager still counted as a match (float32 kernels, reordered sums).
_TOLERANCE = 1e-3


def _max_abs_diff(out: Any, reference: Any) -> float | None:
    outs, refs = _flat(out), _flat(reference)
    if not outs or len(outs) != len(refs):
        return None
    worst = 0.0
    for a, b in zip(outs, refs):
        if a.shape != b.shape:
            return float("inf")
        if a.numel():
            worst = max(worst, (a.detach().float().cpu() - b.detach().float().cpu()).abs().max().item())
    return worst


def _flat(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _flat(v)]
    return []
