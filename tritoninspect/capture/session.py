"""Run a capture: choose the mode, enter it, compile and run the target.

`compile_only()` must be entered before the user's module is imported:
libraries probe `has_triton()` or the driver at import time.
"""

from __future__ import annotations

import contextlib
import linecache
import logging
import platform
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager as ContextManager
from dataclasses import dataclass, field
from typing import Any

import torch

from tritoninspect import __version__, textformats
from tritoninspect.capture import compat
from tritoninspect.capture.calls import call_with
from tritoninspect.capture.crash import fatal_signal_stacks
from tritoninspect.capture.cudagraphs import CALLS_PER_INPUT_SET
from tritoninspect.capture.failure import Progress, failure_record, raised_in_tool
from tritoninspect.capture.libraries import record_libraries
from tritoninspect.capture.patching import Patcher
from tritoninspect.capture.recorder import Recorder
from tritoninspect.model.records import Capture, DeviceProbeRecord, DeviceQueryRecord, EmulationRecord
from tritoninspect.capture.resources import measure
from tritoninspect.model.errors import CaptureError, EnvironmentProblem, TritonInspectError, UsageError, ends_the_run

#: The GPU architecture compile-only mode compiles for (sm_90: Hopper).
DEFAULT_ARCH = 90


@dataclass(frozen=True)
class ModeInfo:
    """Which mode a capture runs in, and the device it names in the report."""

    mode: str  # "gpu" | "compile-only"
    device: str
    torch_device: str  # where the module and inputs go
    #: Compile-only mode: the CUDA architecture Triton compiles for (--target).
    arch: int = DEFAULT_ARCH


def parse_target(target: str) -> int:
    """`sm_90` (or `sm_90a`, `90`) -> 90: the CUDA architecture compile-only mode targets."""
    match = re.fullmatch(r"(?:sm_?)?(\d{2,3})a?", target.strip().lower())
    if match is None:
        raise UsageError(f"--target {target!r}: give a CUDA architecture such as sm_90 or sm_80")
    return int(match[1])


def choose_mode(device: str, target: str | None = None) -> ModeInfo:
    """`auto`: CUDA when available, else compile-only CPU mode (for `target`, default sm_90)."""
    if device not in ("auto", "cpu", "cuda"):
        raise EnvironmentProblem(f"unknown device {device!r}: use auto, cpu or cuda")
    if device == "cuda" or (device == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise EnvironmentProblem(
                "--device cuda: no CUDA GPU is available here",
                hint="use --device cpu (compile-only mode) or run on a machine with a GPU",
            )
        if target is not None:
            raise UsageError(
                f"--target {target}: gpu mode compiles for this machine's GPU",
                hint="--target picks compile-only mode's architecture: add --device cpu",
            )
        return ModeInfo("gpu", torch.cuda.get_device_name(), "cuda")
    arch = DEFAULT_ARCH if target is None else parse_target(target)
    return ModeInfo("compile-only", f"cpu (Triton target cuda:sm_{arch}, kernels interpreted)", "cpu", arch)


#: What the first bf16 launch's warning says of the interpreter (a later one refers to it).
_BF16_SAID = "which Triton's interpreter holds as their uint16 bits"


@dataclass
class Environment:
    """What a mode's environment noticed while it was active."""

    problems: list[tuple[str, str]] = field(default_factory=list)
    #: Compile-only mode: the GPU its device queries answer for (compat.device_queries.EmulatedGpu).
    gpu: Any = None
    #: Query -> [calls, first caller], in the order first asked.
    queries: dict[str, list[Any]] = field(default_factory=dict)
    #: (place, function, traced, asked) -> [calls, compile ids] of a device probe answering for the CPU.
    probes: dict[tuple[str, str, bool, str], list[Any]] = field(default_factory=dict)
    #: kernel -> its bool parameters passed to Triton's interpreter as int1.
    bools: dict[str, list[str]] = field(default_factory=dict)

    def queried(self, function: str, caller: str) -> None:
        """An emulated answer was given to `caller` ("file:line")."""
        count = self.queries.setdefault(function, [0, caller])
        count[0] += 1
        if count[1].startswith("<") and not caller.startswith("<"):
            count[1] = caller  # a graph line repeating the call says less than the call itself

    def queried_in(self, where: str) -> tuple[str, ...]:
        """The emulated queries first answered in the file of `where` ("file:line in function"), as
        "device_count() at line 18"."""
        file = where.rsplit(" in ", 1)[0].rpartition(":")[0]
        return tuple(f"{function}() at line {caller.rpartition(':')[2]}" for function, (_, caller) in self.queries.items()
                     if caller.rpartition(":")[0] == file)

    def probed(self, probe: Any) -> None:
        """A device probe answered for the CPU to `probe.place` (a compat.device_probes.Probe)."""
        # Dynamo's resume function (`torch_dynamo_resume_in_forward_at_14`) is the user's `forward`, as a
        # break's stack names it: the analysis finds the probe's function on that stack by its name.
        function = textformats.breaks.original_function(probe.function)
        count = self.probes.setdefault((probe.place, function, probe.traced, probe.asked), [0, []])
        count[0] += 1
        if probe.compile_id and probe.compile_id not in count[1]:
            count[1].append(probe.compile_id)

    @contextlib.contextmanager
    def capture_scope(self) -> Iterator[Environment]:
        """This environment for one capture of a mode held across captures (a test session): what is
        noticed in the block is that capture's, on top of what was noticed outside every capture (at
        import time, which is when libraries ask the device most); the outside's records come back after.
        Yields itself: the patches the mode installed call its methods."""
        outside = self.problems, self.queries, self.probes
        self.problems = list(outside[0])
        self.queries = {name: list(count) for name, count in outside[1].items()}
        self.probes = {key: [count[0], list(count[1])] for key, count in outside[2].items()}
        try:
            yield self
        finally:
            self.problems, self.queries, self.probes = outside

    def emulation(self) -> EmulationRecord | None:
        """The emulated device and what was asked of it, for the capture."""
        if self.gpu is None:
            return None
        queries = tuple(DeviceQueryRecord(name, calls, caller or None) for name, (calls, caller) in self.queries.items())
        probes = tuple(_probe_record(*key, *count) for key, count in self.probes.items())
        bools = tuple(f"{kernel}({', '.join(names)})" for kernel, names in self.bools.items())
        return EmulationRecord(f"sm_{self.gpu.arch}", self.gpu.like, self.gpu.properties.name, queries, probes,
                               cuda_available=torch.cuda.is_available(), bool_arguments=bools)

    def passed_bools(self, kernel: str, names: list[str]) -> None:
        """The launch's Python bools (`names`) went to Triton's interpreter as int1."""
        known = self.bools.setdefault(kernel, [])
        known.extend(n for n in names if n not in known)

    def skipped_launch(self, kernel: str, exc: BaseException) -> None:
        """Triton compiled the kernel for the target, then its interpreter could not run it."""
        target = f"sm_{self.gpu.arch}" if self.gpu is not None else "the target"
        message = (
            f"{kernel} compiled for {target}, but Triton's interpreter could not run it "
            f"({type(exc).__name__}: {str(exc).strip()[:200]}): a limit of compile-only mode, not of "
            "torch.compile; its launch was skipped, so values computed after it are not meaningful "
            "(graphs and code are)"
        )
        if ("interpreter", message) not in self.problems:
            self.problems.append(("interpreter", message))

    def bf16_launch(self, kernel: str, ops: list[str]) -> None:
        """The launch computed on bfloat16 values, which Triton's interpreter holds as their bits."""
        said = any(source == "interpreter" and _BF16_SAID in text for source, text in self.problems)
        message = (  # said in full once; each further kernel in one line (three long lines for one model)
            f"{kernel} computed on bfloat16 values ({', '.join(ops)}) too: its values are not meaningful either"
            if said else
            f"{kernel} computed on bfloat16 values ({', '.join(ops)}), {_BF16_SAID} and converts only in a cast to "
            "or from float32: its arithmetic, tl.dot and reductions ran on the bits. A limit of compile-only mode, "
            "not of torch.compile: the values it wrote, and those computed after it, are not meaningful (graphs and "
            "code are)"
        )
        if ("interpreter", message) not in self.problems:
            self.problems.append(("interpreter", message))

    def uncompiled_launch(self, kernel: str, exc: BaseException) -> None:
        """The launch's real compile could not be tried (not Triton's verdict on the kernel)."""
        target = f"sm_{self.gpu.arch}" if self.gpu is not None else "the target"
        message = (f"{kernel} could not be compiled for {target} at its launch ({type(exc).__name__}: "
                   f"{str(exc).strip()}); it ran in Triton's interpreter only, so whether Triton compiles it is unknown")
        if ("compile", message) not in self.problems:
            self.problems.append(("compile", message))


def _probe_record(place: str, function: str, traced: bool, asked: str, calls: int, ids: list[str]) -> DeviceProbeRecord:
    # A traced probe marks the breaks after it (analyse/emulation.py) if its answer can lead there.
    uses = _answer_uses(place, asked) if traced else None
    return DeviceProbeRecord(place, function, traced, calls, tuple(ids), asked, uses)


def _answer_uses(place: str, asked: str) -> dict[str, int] | None:
    """What the function that asked the probe `asked` at `place` ("file:line") does with the answer,
    read from its source now, while the file is at hand (`textformats.value_use.probe_uses`)."""
    file, _, line = place.rpartition(":")
    source = "".join(linecache.getlines(file))
    return textformats.value_use.probe_uses(source, int(line), asked) if source and line.isdigit() else None


@contextlib.contextmanager
def compile_only(arch: int = DEFAULT_ARCH) -> Iterator[Environment]:
    """Compile-only mode: a stub GPU target for Triton, the CUDA device queries
    libraries make answered for it (counted in the Environment), and each user-kernel
    launch compiled for that target (a kernel that cannot compile raises Triton's
    CompilationError there, as on a GPU) and then run in Triton's interpreter.

    Every patch is undone on exit, the driver and `has_triton()` included.
    """
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    driver = compat.compile_only.triton_driver_config()
    patcher = Patcher()
    gpu = compat.device_queries.emulated_gpu(arch)
    env = Environment(gpu=gpu)
    registration = None
    compiler = compat.triton_compile.LaunchCompiler(env.uncompiled_launch)
    scopes = contextlib.ExitStack()
    try:
        # Every Triton compile for the stub target (launches, --resources) goes to a folder a
        # real GPU run never reads (compat/caches.py says why).
        scopes.enter_context(compat.caches.compile_only_triton_cache())
        utils = compat.device_queries.triton_utils(gpu, env.queried)
        patcher.set(driver, "_active", compat.compile_only.stub_driver(arch, utils=utils))
        compat.compile_only.prime_has_triton()
        for obj, name, value in compat.compile_only.tma_patches() + compat.compile_only.backend_option_patches():
            patcher.set(obj, name, value)
        compat.compile_only.clear_tma_caches()
        # After priming has_triton: torch's own device registry must not count an emulated GPU.
        queries = compat.device_queries.patches(gpu, env.queried)
        registration = compat.device_queries.register_with_dynamo(dict(compat.device_queries.originals(queries)))
        watch = compat.device_probes.availability_watch(env.probed)
        if not watch:
            env.problems.append(("compile-only", "this torch's torch.cuda.is_available() cannot be watched: where it "
                                 "answered False to your code (a device probe) is not reported"))
        tensors = compat.device_probes.tensor_device_watch(env.probed)
        for obj, name, value in queries + watch + tensors + compat.no_cuda.patches(emulated=env.queried_in):
            patcher.set(obj, name, value)
        # Disabled for Dynamo so a break inside a launch never traces the interpreter.
        # Warmups still compile (for the stub's target): that is how --resources measures.
        run = compat.interpreter.make_jit_run(env.skipped_launch, original=JITFunction.run,
                                              compile_launch=compiler.compile, on_note=env.passed_bools,
                                              on_bf16=env.bf16_launch)
        patcher.set(JITFunction, "run", torch.compiler.disable(run, recursive=True))
        patcher.set(JITFunction, "__call__", compat.interpreter.jit_call_interpreted)
        first_config = compat.interpreter.autotuner_run_first_config
        patcher.set(Autotuner, "run", torch.compiler.disable(first_config, recursive=True))
        autotuner = compat.inductor.caching_autotuner_class()
        inductor_run = compat.interpreter.inductor_run_interpreted(autotuner.run, env.skipped_launch, compiler.compile,
                                                                   on_note=env.passed_bools, on_bf16=env.bf16_launch)
        patcher.set(autotuner, "run", inductor_run)
        patcher.set(*compat.inductor.interpreting_inductor_wrapper())
        yield env
    finally:
        patcher.restore()
        compiler.close()
        if registration is not None:
            registration.undo()
        compat.compile_only.reset_has_triton()
        compat.compile_only.clear_tma_caches()
        scopes.close()


@contextlib.contextmanager
def mode_environment(info: ModeInfo) -> Iterator[Environment]:
    """Enter the environment a mode needs (nothing to patch in GPU mode). A CaptureError raised inside it,
    on a torch or Triton outside the tested releases, says so in its hint: that is the likely cause."""
    try:
        if info.mode == "compile-only":
            with compile_only(info.arch) as env:
                yield env
        else:
            yield Environment()
    except CaptureError as exc:
        outside = compat.versions.untested()
        if outside is None or exc.hint:
            raise
        raise CaptureError(exc.message, hint=f"{outside}: install a tested release, or report this") from exc


def capture_run(
    module: Any,
    input_sets: Sequence[tuple[Any, ...]],
    *,
    info: ModeInfo,
    stage: str = "inductor",
    dynamic: bool | None = None,
    backward: bool = False,
    grad: bool | None = None,
    target: str = "",
    inputs: tuple[str, ...] = (),
    env: Environment | None = None,
    extras: Sequence[Callable[[Capture], ContextManager[Any]]] = (),
    resources: bool = False,
    torch_logs: bool = False,
    cudagraphs: bool = False,
) -> Capture:
    """Compile `module` with the recording backend and run it on each input set.

    torch's own log records (e.g. the fake-tensor error dump before a failed
    trace) are kept off stderr unless `torch_logs`: the report says what failed.

    Each of `extras` is called with the capture and entered around the calls
    (inside the recorder's hooks, before Dynamo's caches are reset), e.g. to
    record decompiled frames. An exception from the model or torch.compile
    ends the run early and becomes `capture.failure`; the capture keeps
    everything recorded before it.

    `cudagraphs` compiles as `mode="reduce-overhead"` does and calls the model
    `CALLS_PER_INPUT_SET` times per input set (warm-up, recording, replay).

    `grad` (default: `backward`): the forward records autograd; without `backward` that is the
    forward of a training step, whose backward is not run.
    """
    grad = backward if grad is None else grad or backward
    recorder = Recorder(stage, compile_only=info.mode == "compile-only", resources=resources, cudagraphs=cudagraphs)
    repeat = CALLS_PER_INPUT_SET if cudagraphs else 1
    torch._dynamo.reset()
    caught: list[warnings.WarningMessage] = []  # the time limit can fire before the `with` binds it
    try:
        # Inductor's and Triton's kernel caches are torch's defaults, shared with the user's runs.
        # Python warnings raised meanwhile (torch repeats its graph-break warnings) are recorded,
        # then counted on stderr (their text with --debug), not printed as they come.
        with recorder.installed(), warnings.catch_warnings(record=True) as caught, contextlib.ExitStack() as stack:
            # Dynamo also warns for each untraceable builtin it breaks on (time.time inside Triton's
            # autotuner, ...): every one is a graph break in the report, with the same text.
            warnings.filterwarnings("ignore", message="Dynamo does not know how to trace", category=UserWarning)
            for extra in extras:
                stack.enter_context(extra(recorder.capture))
            if not torch_logs:
                stack.enter_context(quiet_torch_logs())
            # An abort inside Triton's interpreter then names the kernel and the launching line.
            stack.enter_context(fatal_signal_stacks())
            _compile_and_call(recorder, module, [s for s in input_sets for _ in range(repeat)], dynamic=dynamic,
                              backward=backward, grad=grad)
    finally:
        torch._dynamo.reset()
        from tritoninspect.capture.progress import warnings_seen

        warnings_seen([(w.category.__name__, str(w.message), f"{w.filename}:{w.lineno}") for w in caught])
    recorder.capture.meta = {**capture_meta(info, stage, dynamic, backward, target, inputs), "grad": grad,
                             "calls": len(input_sets) * repeat}
    if cudagraphs:
        recorder.capture.meta["cudagraphs"] = True
    if backward and recorder.capture.failure is None:
        recorder.capture.meta.update(_backward_facts(module, recorder.progress))
    if outside := compat.versions.untested():
        recorder.capture.problems.append(("versions", f"{outside}: facts read from torch's internals may be "
                                          "missing or wrong"))
    if env is not None:
        recorder.capture.problems.extend(env.problems)
        recorder.capture.emulation = env.emulation()
    try:
        record_libraries(recorder.capture)
    except Exception as exc:  # noqa: BLE001 - a missing fact, not a failed capture
        recorder.capture.problems.append(("libraries", f"whose code the kernels are could not be told ({exc!r})"))
    if recorder.launch_templates is not None and recorder.capture.failure is None:
        # After the run, hooks gone: each kernel compiles once per config for the mode's target.
        from tritoninspect.capture.progress import stage

        stage("--resources: compiling each kernel per autotune config")
        records, problems = measure(recorder.launch_templates, gpu=info.mode == "gpu")
        recorder.capture.resources.update(records)
        recorder.capture.problems.extend(problems)
    return recorder.capture


@contextlib.contextmanager
def quiet_torch_logs() -> Iterator[None]:
    """Drop what torch's loggers would print (their handlers, installed by
    torch._logging per registered log) for the duration of the block.

    The structured trace (`torch.__trace`) is left alone: it writes only where
    the user set TORCH_TRACE, and the recorder reads it through its own handler.
    """
    silence = _DropAll()
    handlers = set(_torch_log_handlers())
    for handler in handlers:
        handler.addFilter(silence)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(silence)


class _DropAll(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return False


def _torch_log_handlers() -> list[logging.Handler]:
    names = [n for n in logging.Logger.manager.loggerDict if n == "torch" or n.startswith("torch.")]
    loggers = [logging.getLogger(n) for n in names if n != compat.dynamo.TRACE_LOGGER]
    return [h for lg in loggers for h in lg.handlers]


def _compile_and_call(recorder: Recorder, module: Any, input_sets: Sequence[tuple[Any, ...]], *,
                      dynamic: bool | None, backward: bool, grad: bool) -> None:
    """Compile and call; an exception from the model, torch.compile or the compiled
    module becomes the capture's failure record, so what came before it is kept.
    tritoninspect's own errors propagate."""
    try:
        compiled = torch.compile(module, backend=recorder.backend, dynamic=dynamic)
        # A torch.compile'd submodule or function the model calls compiles with the recorder too.
        with compat.shapes.every_compile_to(recorder.backend):
            for args in input_sets:
                call_once(compiled, args, backward, progress=recorder.progress, grad=grad)
    except TritonInspectError:
        raise
    except BaseException as exc:  # noqa: BLE001 - recorded (sys.exit() in forward too): the report shows it
        if ends_the_run(exc):
            raise
        recorder.capture.failure = failure_record(exc, recorder.progress)
        if raised_in_tool(exc):
            raise


def call_once(fn: Any, args: tuple[Any, ...], backward: bool, progress: Progress | None = None,
              grad: bool | None = None) -> Any:
    """One call as a capture makes it: forward under no_grad, or forward then backward
    through the sum of every output that requires grad, or (`grad` without `backward`)
    the forward alone with autograd recording. Returns the output.
    `progress` is told which of the two is running."""
    progress = progress or Progress()
    progress.call = "run"
    if not backward:
        with torch.enable_grad() if grad else torch.no_grad():
            return call_with(fn, args)
    out = call_with(fn, args)
    losses = [t.sum() for t in _tensors(out) if t.requires_grad]
    if losses:
        progress.call = "backward"
        torch.stack(losses).sum().backward()
    else:
        progress.backward_skipped += 1
    return out


def _backward_facts(module: Any, progress: Progress) -> dict[str, Any]:
    """What backward reached: calls it was skipped for (no output required grad) and the
    parameters that require grad but got none."""
    params = module.named_parameters() if isinstance(module, torch.nn.Module) else ()
    missing = [name for name, p in params if p.requires_grad and p.grad is None]
    return {"backward_skipped_calls": progress.backward_skipped, "params_without_grad": missing}


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def capture_meta(info: ModeInfo, stage: str, dynamic: bool | None, backward: bool, target: str, inputs: tuple[str, ...]) -> dict[str, Any]:
    """A capture's `meta`: the tool, the mode and device, torch's and Triton's versions, what was asked."""
    return {
        "tool": "tritoninspect",
        "tool_version": __version__,
        "mode": info.mode,
        "device": info.device,
        "torch": compat.versions.torch_version(),
        "triton": compat.versions.triton_version(),
        "target": target,
        "python": f"{platform.python_version()} ({sys.platform})",
        "stage": stage,
        "dynamic": dynamic,
        "backward": backward,
        "inputs": list(inputs),
    }
