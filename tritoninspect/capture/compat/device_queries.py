"""Compile-only mode's answers to the CUDA device queries kernel libraries make.

On a CPU build of torch, `torch.cuda.get_device_name()` and friends raise
("Torch not compiled with CUDA enabled"), so a library that asks which GPU it
runs on at import or call time (fla's `fla/utils/hardware.py`, Liger's
per-device launch settings) fails there. While compile-only mode is active,
the queries below answer for a GPU of the `--target` architecture; every
answer given is reported to a callback, so the report can say so.

What is left alone on purpose:
- `torch.cuda.is_available()` stays False: patching it breaks Dynamo (it asks
  for CUDA RNG state) and would send libraries to real CUDA allocations;
- nothing allocates: no CUDA tensors, fake or real;
- calls from torch, Triton or tritoninspect itself get the real (CPU) answer,
  except where Dynamo or FX evaluates a call the user's code made while
  tracing it (constant folding, fake values, a graph that calls it): those are
  the user's queries. torch's own use (e.g. `init_device_reg` counting CUDA
  devices) must not see a GPU that is not there.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

import torch

from tritoninspect.capture.compat import dynamo, versions


@dataclass(frozen=True)
class EmulatedDeviceProperties:
    """What `torch.cuda.get_device_properties()` answers in compile-only mode: the
    fields of torch's `_CudaDeviceProperties` (torch 2.11-2.14) that libraries read,
    without `uuid` (there is no device to identify)."""

    name: str
    major: int
    minor: int
    multi_processor_count: int
    total_memory: int
    warp_size: int
    regs_per_multiprocessor: int
    max_threads_per_multi_processor: int
    max_threads_per_block: int
    shared_memory_per_block: int
    shared_memory_per_block_optin: int
    shared_memory_per_multiprocessor: int
    L2_cache_size: int  # noqa: N815 - torch's name
    clock_rate: int
    memory_clock_rate: int
    memory_bus_width: int
    is_integrated: int = 0
    is_multi_gpu_board: int = 0
    pci_bus_id: int = 0
    pci_device_id: int = 0
    pci_domain_id: int = 0

    @property
    def gcnArchName(self) -> str:  # noqa: N802 - torch's name; on CUDA it repeats the name
        return self.name


@dataclass(frozen=True)
class EmulatedGpu:
    """The GPU compile-only mode answers for: `like` names the model its values are from."""

    arch: int
    like: str
    properties: EmulatedDeviceProperties

    def triton_properties(self) -> dict[str, int]:
        """`triton.runtime.driver.active.utils.get_device_properties()` as the NVIDIA
        driver builds it (triton/backends/nvidia/driver.c `getDeviceProperties`, 3.6-3.8)."""
        p = self.properties
        return {
            "max_shared_mem": p.shared_memory_per_block_optin, "max_num_regs": p.regs_per_multiprocessor,
            "multiprocessor_count": p.multi_processor_count, "warpSize": p.warp_size,
            "sm_clock_rate": p.clock_rate, "mem_clock_rate": p.memory_clock_rate, "mem_bus_width": p.memory_bus_width,
        }


#: Published values of one model per architecture (NVIDIA's data sheets and what
#: `torch.cuda.get_device_properties` prints on those GPUs; total memory as CUDA
#: reports it, a little under the nominal 80 GB). Clock rates in kHz.
KNOWN_GPUS: dict[int, tuple[str, EmulatedDeviceProperties]] = {
    80: ("A100", EmulatedDeviceProperties(
        name="NVIDIA A100-SXM4-80GB", major=8, minor=0, multi_processor_count=108, total_memory=85_097_971_712,
        warp_size=32, regs_per_multiprocessor=65_536, max_threads_per_multi_processor=2_048,
        max_threads_per_block=1_024, shared_memory_per_block=49_152, shared_memory_per_block_optin=166_912,
        shared_memory_per_multiprocessor=167_936, L2_cache_size=41_943_040, clock_rate=1_410_000,
        memory_clock_rate=1_593_000, memory_bus_width=5_120,
    )),
    90: ("H100", EmulatedDeviceProperties(
        name="NVIDIA H100 80GB HBM3", major=9, minor=0, multi_processor_count=132, total_memory=85_045_477_376,
        warp_size=32, regs_per_multiprocessor=65_536, max_threads_per_multi_processor=2_048,
        max_threads_per_block=1_024, shared_memory_per_block=49_152, shared_memory_per_block_optin=232_448,
        shared_memory_per_multiprocessor=233_472, L2_cache_size=52_428_800, clock_rate=1_980_000,
        memory_clock_rate=2_619_000, memory_bus_width=5_120,
    )),
}


def emulated_gpu(arch: int) -> EmulatedGpu:
    """The GPU answered for `sm_<arch>`: a known model, else the nearest known one at or
    below it (the oldest above it for older archs), renamed and given `arch`'s capability."""
    if arch in KNOWN_GPUS:
        like, props = KNOWN_GPUS[arch]
        return EmulatedGpu(arch, like, props)
    below = [a for a in KNOWN_GPUS if a <= arch]
    base = max(below) if below else min(KNOWN_GPUS)
    like, props = KNOWN_GPUS[base]
    major, minor = divmod(arch, 10)
    renamed = dataclasses.replace(props, name=f"NVIDIA GPU sm_{arch} (compile-only, {like} values)",
                                  major=major, minor=minor)
    return EmulatedGpu(arch, like, renamed)


#: The torch.cuda queries answered (torch 2.11-2.14 names). Dynamo treats each as a torch
#: function (trace_rules: `torch.cuda.*` in torch_non_c_binding_in_graph_functions;
#: `current_device` and `get_device_properties` are also constant-folded, torch/_dynamo/variables/torch.py).
TORCH_CUDA_QUERIES = ("get_device_capability", "get_device_name", "get_device_properties", "current_device",
                      "device_count")

#: Called as on_query(name, "file:line") for every emulated answer the traced or running
#: code asked for (a guard re-checking one is not counted).
OnQuery = Callable[[str, str], None]


def patches(gpu: EmulatedGpu, on_query: OnQuery) -> list[tuple[Any, str, Any]]:
    """(torch.cuda, name, stand-in) to set while compile-only mode is active.

    `torch.version.cuda` is left as it is (None on a CPU build, the CUDA version of a CUDA build on a
    machine without a GPU, as torch 2.14.1+cu130 was checked): torch's own code reads it (Inductor's C++ build
    and cache keys, torch/_inductor/codecache.py, cpp_extension.py) and a plain
    attribute cannot tell its readers apart; the libraries checked (fla-core 0.6.0,
    Liger-Kernel 0.8.5) do not read it in their kernel paths.
    """
    answers = _answers(gpu)
    return [(torch.cuda, name, _query(name, getattr(torch.cuda, name), answers[name], on_query))
            for name in TORCH_CUDA_QUERIES]


def triton_utils(gpu: EmulatedGpu, on_query: OnQuery) -> Any:
    """The `utils` of the stub Triton driver: `get_device_properties(device)` as the
    NVIDIA driver answers it (fla reads `multiprocessor_count` and `max_shared_mem`).
    Anything else it is asked is not there (AttributeError), as before."""
    props = gpu.triton_properties()

    class Utils:
        @staticmethod
        def get_device_properties(device: int = 0) -> dict[str, int]:
            frame = sys._getframe(1)
            on_query("triton.runtime.driver.active.utils.get_device_properties", _asker(frame) or _caller(frame))
            return dict(props)

    dynamo.never_compiled(Utils.get_device_properties)
    return Utils()


def _answers(gpu: EmulatedGpu) -> dict[str, Callable[..., Any]]:
    props = gpu.properties
    return {
        "get_device_capability": lambda device=None: (_index(device), (props.major, props.minor))[1],
        "get_device_name": lambda device=None: (_index(device), props.name)[1],
        "get_device_properties": lambda device=None: (_index(device), props)[1],
        "current_device": lambda: 0,
        "device_count": lambda: 1,
    }


def _index(device: Any) -> int:
    """The device index as torch.cuda's `_get_device_index(device, optional=True)` reads it,
    with one device: 0 for None, 0, "cuda", "cuda:0" or torch.device("cuda", 0).

    A CPU device is the emulated GPU's too: it is what a tensor's `x.device` is in compile-only mode,
    where a GPU run's is cuda (mamba-ssm 2.3's layer-norm backward asks
    `torch.cuda.get_device_properties(x.device).multi_processor_count`; torch raises "Expected a cuda
    device" for a CPU device, which failed the run where a GPU run has none)."""
    if device is None:
        return 0
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type == "cpu":
            return 0
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        device = device.index or 0
    if not isinstance(device, int) or device != 0:
        raise AssertionError(f"Invalid device id {device}: compile-only mode emulates one CUDA device (0)")
    return device


def _query(name: str, original: Callable[..., Any], answer: Callable[..., Any], on_query: OnQuery) -> Any:
    """A stand-in for torch.cuda.<name>: the user's and libraries' calls get `answer`,
    torch's and our own the original."""

    @functools.wraps(original)
    def query(*args: Any, **kwargs: Any) -> Any:
        asker = _asker(sys._getframe(1))
        if asker is None:
            return original(*args, **kwargs)
        if asker:
            on_query(name, asker)
        return answer(*args, **kwargs)

    del query.__wrapped__  # keep inspect.unwrap and Dynamo from seeing the original behind it
    dynamo.never_compiled(query)
    return query


def _asker(frame: FrameType) -> str | None:
    """Who asks: "file:line" of the user's or a library's call, or of the graph line that
    repeats it; "" for a guard re-checking an answer (answered, not counted); None when
    torch, Triton or tritoninspect itself asks, for itself."""
    file = frame.f_code.co_filename
    if file.startswith(_PACKAGE_DIR):
        return None
    if file.startswith("<") and not file.startswith("<eval_with_key>"):
        return ""  # Dynamo's guard code ("<string>"): torch.cuda.current_device() == 0
    if not versions.is_torch_or_triton_file(file):
        return _caller(frame)
    if not any(site in file for site in _TRACE_SITES):
        return None
    # Dynamo evaluating a call of the code it traces: its place is the traced instruction
    # (TracingContext.extract_stack, torch/_guards.py, torch 2.11-2.14; PR not found).
    # A guard re-checking a folded answer has none.
    from torch._guards import TracingContext

    context = TracingContext.try_get()
    stack = context.extract_stack() if context is not None else []
    if "guards.py" not in file and stack and not versions.is_torch_or_triton_file(stack[-1].filename):
        return f"{stack[-1].filename}:{stack[-1].lineno}"
    return ""


def _caller(frame: FrameType | None) -> str:
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else ""


#: Where torch evaluates a call the traced code made, torch 2.11-2.14 (PR not found):
#: Dynamo's constant folding (variables/torch.py `TorchInGraphFunctionVariable.call_function`),
#: fake values (utils.py `run_node`), the guards on a folded answer (guards.py, e.g.
#: `torch.cuda.current_device() == 0`), FX running or retracing a graph that calls it. Other
#: torch frames (e.g. device_interface.py `init_device_reg` counting CUDA devices) are
#: torch's own questions and get the real answer.
_TRACE_SITES = tuple(
    os.sep + os.path.join("torch", *site.split("/"))
    for site in ("_dynamo/variables/", "_dynamo/utils.py", "_dynamo/guards.py", "fx/")
)

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


# --- Dynamo: treat each stand-in as the torch function it replaces -----------------------


@dataclass
class DynamoRegistration:
    """Registers the stand-ins with Dynamo as it knows the originals; `undo()` removes them."""

    undo_steps: list[Callable[[], None]] = dataclasses.field(default_factory=list)

    def undo(self) -> None:
        while self.undo_steps:
            self.undo_steps.pop()()


def register_with_dynamo(stand_ins: dict[Any, Any]) -> DynamoRegistration:
    """Make Dynamo trace a call to each stand-in as it traces the original torch.cuda
    function: a torch function written into the graph (`allow_in_graph`; the originals are
    `TorchInGraphFunctionVariable`s), constant-folded where the original is. So a query
    breaks the graph in compile-only mode where it does on a GPU (torch 2.11 on an H200:
    `get_device_name` and `device_count` -> "torch.* op returned non-Tensor", GB0208; the
    others fold) and no more. Private: `trace_rules._allowed_callable_ids` (what
    `torch.compiler.allow_in_graph` fills, its removal is torch's own `deregister`) and
    `variables.torch.constant_fold_functions(_need_guards)`, dicts keyed by function,
    torch 2.11-2.14; PR not found. The answer of `get_device_properties` is a constant
    to Dynamo as torch's `_CudaDeviceProperties` is (`utils.common_constant_types`, a set,
    torch 2.11-2.14; PR not found): without it, a traced call breaks the graph.
    """
    from torch._dynamo import trace_rules
    from torch._dynamo import utils as dynamo_utils
    from torch._dynamo.variables import torch as torch_variables

    registration = DynamoRegistration()
    constants = dynamo_utils.common_constant_types
    if EmulatedDeviceProperties not in constants:
        constants.add(EmulatedDeviceProperties)
        registration.undo_steps.append(functools.partial(constants.discard, EmulatedDeviceProperties))
    for original, stand_in in stand_ins.items():
        if not trace_rules.is_callable_allowed(stand_in):
            trace_rules._allowed_callable_ids.add(id(stand_in))
            registration.undo_steps.append(functools.partial(trace_rules._allowed_callable_ids.remove, id(stand_in)))
        for table_name in ("constant_fold_functions", "constant_fold_functions_need_guards"):
            table = getattr(torch_variables, table_name, None)
            if isinstance(table, dict) and original in table and stand_in not in table:
                table[stand_in] = table[original]
                registration.undo_steps.append(functools.partial(table.pop, stand_in, None))
    return registration


def originals(patch_list: list[tuple[Any, str, Any]]) -> Iterator[tuple[Any, Any]]:
    """(original, stand-in) for each torch.cuda function in `patch_list`, before it is applied."""
    for obj, name, value in patch_list:
        if obj is torch.cuda:
            yield getattr(obj, name), value
