"""Where `torch.cuda.is_available()` told the user's code there is no GPU, in compile-only mode.

Compile-only mode keeps `is_available()` honest (False on a CPU-only machine: Dynamo and
torch rely on it, and a True would send libraries to CUDA allocations). A library that
asks it takes its CPU path there, where a run on the GPU compile-only mode stands in for
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

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

import torch

from tritoninspect.capture.compat import dynamo, versions


#: What a probe asked: `torch.cuda.is_available()`, or a tensor's device.
IS_AVAILABLE = "torch.cuda.is_available()"
IS_CUDA = "x.is_cuda"
DEVICE_TYPE = "x.device.type"


@dataclass(frozen=True)
class Probe:
    """One answer to a device probe that differs from what a GPU run answers: `is_available()`
    False, or a tensor on the CPU where a GPU run has it on CUDA."""

    #: "file:line" of the call (the traced instruction when Dynamo evaluated it).
    place: str
    #: The function that asked (`infer_device`), `<module>` at import.
    function: str
    #: Asked while Dynamo traced the call (it folds the answer into the graph), not run eagerly.
    traced: bool
    #: The compile it was traced in, e.g. "0/0" (traced only).
    compile_id: str | None = None
    #: What was asked (IS_AVAILABLE, IS_CUDA, DEVICE_TYPE).
    asked: str = IS_AVAILABLE


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
    dynamo.never_compiled(_is_compiled)  # asked eagerly from a frame Dynamo skipped: not a frame of the user's
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


def _traced_probe(asked: str = IS_AVAILABLE) -> Probe | None:
    """The traced instruction, innermost inlined frame included: `TracingContext.extract_stack()`
    (torch/_guards.py, torch 2.11-2.14; PR not found). `InstructionTranslator.current_tx()`
    would give only the root frame Dynamo compiles, not the library function inlined into it."""
    from torch._guards import TracingContext

    from tritoninspect.capture.compat.dynamo import current_compile_id

    context = TracingContext.try_get()
    stack = context.extract_stack() if context is not None else []
    top = _asking_frame(stack, asked) if asked in _ATTRIBUTES else (stack[-1] if stack else None)
    if top is None or _theirs(top.filename):
        return None
    return Probe(f"{top.filename}:{top.lineno}", top.name, traced=True, compile_id=current_compile_id(), asked=asked)


#: The tensor attribute each tensor probe reads.
_ATTRIBUTES = {IS_CUDA: "is_cuda", DEVICE_TYPE: "device"}


def _asking_frame(stack: list[Any], asked: str) -> Any:
    """The innermost traced frame that read the tensor's attribute itself. A subclass's `x.is_cuda`
    is dispatched to its `__torch_function__` (and from there, with super(), to torch's
    `Tensor.__torch_function__`), which Dynamo inlines: those frames only call the getter they are
    handed (`func(*args)`), and the frame that called them asked. A `__torch_function__` whose own
    line reads the attribute asked it."""
    attribute = f".{_ATTRIBUTES[asked]}"
    for frame in reversed(stack):
        if frame.name != "__torch_function__" or attribute in (frame.line or ""):
            return frame
    return None


def tensor_device_watch(on_probe: OnProbe) -> list[tuple[Any, str, Any]]:
    """Patches that report each place where the user's or a library's code asked a tensor whether
    it is on CUDA (`x.is_cuda`, or its device compared with "cuda": torchnorm's RMSNorm takes its
    PyTorch path on `x.is_cuda`) and heard "no": in compile-only mode every tensor is a CPU tensor,
    where a GPU run has it on CUDA. Eager reads go through `torch.Tensor.is_cuda` / `.device`
    (getset descriptors of `torch._C.TensorBase`, torch 2.11-2.14, shadowed on `torch.Tensor` by an
    `_EagerWatch` around each); traced ones through Dynamo's `TensorVariable.method_attr_is_cuda` /
    `method_attr_device` (torch/_dynamo/variables/tensor.py, 2.13 and 2.14; absent ones are not
    watched), which fold the answer into a constant before any Python descriptor runs. A device
    read counts only on a line that compares it with "cuda" (`textformats.device_checks`):
    `device=x.device` is no probe."""
    patches = _traced_tensor_watch(on_probe)
    base = torch._C.TensorBase.__dict__
    # Every eager `x.is_cuda` runs the watch: where Dynamo's frame callback is on (the rest of a frame it
    # skipped, e.g. after an assert failed while tracing) it compiled it as a frame of the user's, and its
    # graph breaks (at the original's `__get__`, then in `_theirs`' realpath) were reported as the model's.
    dynamo.never_compiled(_EagerWatch.__get__)
    for name, asked in (("is_cuda", IS_CUDA), ("device", DEVICE_TYPE)):
        getter = base.get(name)
        if getter is not None and hasattr(getter, "__get__") and name not in torch.Tensor.__dict__:
            patches.append((torch.Tensor, name, _EagerWatch(getter, asked, on_probe)))
    return patches


def _traced_tensor_watch(on_probe: OnProbe) -> list[tuple[Any, str, Any]]:
    try:
        from torch._dynamo.variables.tensor import TensorVariable
    except ImportError:
        return []
    patches = []
    for method, asked in (("method_attr_is_cuda", IS_CUDA), ("method_attr_device", DEVICE_TYPE)):
        original = TensorVariable.__dict__.get(method)
        if original is not None:
            patches.append((TensorVariable, method, _traced_watch(original, asked, on_probe)))
    return patches


def _traced_watch(original: Callable[..., Any], asked: str, on_probe: OnProbe) -> Callable[..., Any]:
    def method_attr(self: Any, tx: Any) -> Any:
        result = original(self, tx)
        device = getattr(self, "device", None)
        if device is not None and device.type != "cuda":
            probe = _traced_probe(asked)
            if probe is not None and (asked != DEVICE_TYPE or _compares_at(probe.place)):
                on_probe(probe)
        return result

    method_attr.__name__ = method_attr.__qualname__ = original.__name__
    return method_attr


class _EagerWatch:
    """`torch.Tensor.is_cuda` / `.device` while compile-only mode is on: a tensor's read runs `__get__`,
    which answers as the original getset_descriptor does and reports a CPU answer to the user's or a
    library's code; the class's own read (`torch.Tensor.is_cuda`) is that original descriptor, and the
    watch compares equal to it.

    Not a `property`: Dynamo looks the attribute up on the class when it traces a read on a tensor
    subclass with `__torch_function__` (`TensorWithTFOverrideVariable.var_getattr`,
    torch/_dynamo/variables/torch_function.py, torch 2.11-2.14; PR not found). It wraps
    `getattr(torch.Tensor, name).__get__` as a sourceless value, which for a property is a method-wrapper
    over `builtins.property` it cannot wrap ("Unexpected type in sourceless builder"): it skipped the
    user's whole frame, a graph break a run without tritoninspect does not have. Before that,
    `_is_attr_overridden` compares `inspect.getattr_static(type(x), name)`, which finds the watch itself
    in `torch.Tensor.__dict__`, with `getattr(torch.Tensor, name)`: unequal, the attribute would count
    as the subclass's own, another break. Eagerly, too, torch's C getter hands the subclass's
    `__torch_function__` `torch.Tensor.<name>.__get__` (the property's, with a property): now the same
    function as without the watch.
    """

    def __init__(self, original: Any, asked: str, on_probe: OnProbe) -> None:
        self._original = original
        self._asked = asked
        self._on_probe = on_probe
        self._theirs: dict[str, bool] = {}

    def __get__(self, tensor: Any, owner: Any = None) -> Any:
        if tensor is None:
            return self._original
        value = self._original.__get__(tensor, type(tensor))
        asked = self._asked
        if (value if asked == IS_CUDA else value.type == "cuda"):
            return value
        frame = sys._getframe(1)
        file = frame.f_code.co_filename
        theirs = self._theirs.get(file)
        if theirs is None:
            theirs = self._theirs[file] = _theirs(file)
        if not theirs and (asked != DEVICE_TYPE or _compares_at(f"{file}:{frame.f_lineno}")):
            self._on_probe(Probe(f"{file}:{frame.f_lineno}", frame.f_code.co_name, traced=False, asked=asked))
        return value

    def __set__(self, tensor: Any, value: Any) -> None:
        self._original.__set__(tensor, value)  # the original's error: neither attribute is writable

    def __delete__(self, tensor: Any) -> None:
        self._original.__delete__(tensor)

    def __eq__(self, other: object) -> bool:
        return True if other is self._original else NotImplemented

    def __hash__(self) -> int:
        return hash(self._original)


@functools.lru_cache(maxsize=4096)
def _compares_at(place: str) -> bool:
    import linecache

    from tritoninspect.textformats.device_checks import compares_device_with_cuda

    file, _, line = place.rpartition(":")
    return compares_device_with_cuda(linecache.getline(file, int(line)))


def _theirs(file: str) -> bool:
    """torch's, Triton's, tritoninspect's or generated code's (`<eval_with_key>`, `<frozen ...>`)."""
    return file.startswith("<") or file.startswith(_PACKAGE_DIR) or versions.is_torch_or_triton_file(file)


#: Dynamo's variable trackers, where a traced `torch.cuda.is_available()` is constant-folded.
_TRACE_SITE = os.sep + os.path.join("torch", "_dynamo", "variables") + os.sep
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
