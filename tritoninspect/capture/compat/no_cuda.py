"""Compile-only mode has no CUDA device: code that asks for a CUDA tensor gets one Python error
naming its line, not a process abort.

On a CPU build of torch, Dynamo traces `torch.empty(..., device="cuda:0")` in a library's
`autograd.Function` into a fake CUDA tensor (fake tensors need no device), and then
`autograd.Function.apply` wraps it: torch's C++ `InputMetadata` asks for the CUDA device guard,
which throws `c10::Error` ("PyTorch is not linked with support for cuda devices") where nothing
catches it, and the process aborts (SIGABRT, "terminate called after throwing an instance of
'c10::Error'"; checked on torch 2.13 with plain `torch.compile(backend="eager")` as soon as
Dynamo traces such a Function: tritoninspect's has_triton lets it trace triformer's, where
plain torch breaks the graph first and fails eagerly). Run eagerly, the same allocation raises
torch's AssertionError "Torch not compiled with CUDA enabled" from `torch.cuda._lazy_init`.

While compile-only mode is active on a machine where `torch.cuda.is_available()` is False, both
places raise `NoCudaDevice` instead, naming the line of the user's or library's code that asked
(torch's, Triton's and tritoninspect's own requests are let through: torch handles them).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch

from tritoninspect.capture.compat import versions
from tritoninspect.textformats.breaks import original_function

#: How the error's message begins (a report's failure is recognised by it).
NO_CUDA = "compile-only mode cannot create CUDA tensors"


class NoCudaDevice(AssertionError, RuntimeError):
    """The user's or a library's code asked for a CUDA tensor in compile-only mode. Both of the
    classes torch raises there without CUDA (AssertionError from `_lazy_init`, RuntimeError from
    C++), so code that catches torch's error to take another path still does."""

    def __init__(self, where: str, what: str, emulated: tuple[str, ...] = ()) -> None:
        #: "file:line in function" of the code that asked.
        self.where = where
        # The emulated device queries its file was answered first (gemlite 0.6's modules allocate a tensor on
        # each of `range(torch.cuda.device_count())` devices at import: one emulated GPU, one CUDA tensor).
        before = (f"; compile-only mode's emulated GPU answered {', '.join(emulated)} in that file first, which "
                  "may be why it asks (without tritoninspect a CPU-only machine answers no GPU there)" if emulated
                  else "")
        super().__init__(
            f"{NO_CUDA}: {_short(where)} {what}{before}; run it on a machine with a GPU (gpu mode), or allocate on "
            "the inputs' device (device=x.device) so compile-only mode can follow it")


def _short(where: str) -> str:
    """An installed library's file from its package on (`triformer/rms_norm.py:91 in forward`)."""
    for site in (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}"):
        if site in where:
            return where.rsplit(site, 1)[1]
    return where


#: "file:line in function" of the code that asked -> the emulated device queries answered in its file.
Emulated = Callable[[str], tuple[str, ...]]


def patches(on_refused: Callable[[str], None] | None = None,
            emulated: Emulated | None = None) -> list[tuple[Any, str, Any]]:
    """(object, name, value) to set while compile-only mode is active, [] where CUDA is available
    (forced compile-only mode on a GPU machine allocates for real). `emulated`: what the refusal adds
    about the emulated device queries answered in the asking code's file."""
    if torch.cuda.is_available():
        return []
    return [_fake_tensor_patch(on_refused, emulated), _lazy_init_patch(on_refused, emulated), *_device_none_patch()]


def _device_none_patch() -> list[tuple[Any, str, Any]]:
    """`torch.cuda.device(None)` as torch documents it, a no-op, on a build without CUDA.

    Libraries enter `torch.cuda.device(x.device.index)` around a launch (FlagGems 5.0's generated
    pointwise wrappers, unconditionally): a CUDA tensor's index is 0, a CPU tensor's (compile-only
    mode's) None. `device.__enter__` passes None to `torch.cuda._exchange_device`, whose fallback on a
    build without `torch._C._cuda_exchangeDevice` compares `device < 0` and raises TypeError
    ("'<' not supported between instances of 'NoneType' and 'int'"; torch/cuda/__init__.py, torch
    2.11-2.14; PR not found). Given None, it now answers -1 (no device was current), as for a negative index.

    Dynamo traces the context itself (mamba-ssm 2.3's kernels launch inside it in traced code): its
    `CUDADeviceVariable` keeps its own reference to `torch.cuda._exchange_device`, taken when Dynamo was
    imported, calls it while tracing and puts it in the graph (torch/_dynamo/variables/ctx_manager.py,
    `_exchange_fn`, torch 2.11-2.14; PR not found), so that reference is replaced too."""
    if hasattr(torch._C, "_cuda_exchangeDevice"):
        return []
    original = torch.cuda._exchange_device

    def _exchange_device(device: Any) -> int:
        return -1 if device is None else original(device)

    _exchange_device.__name__ = _exchange_device.__qualname__ = "_exchange_device"
    traced = getattr(_ctx_manager(), "CUDADeviceVariable", None)
    in_dynamo = [(traced, "_exchange_fn", staticmethod(_exchange_device))] if "_exchange_fn" in getattr(
        traced, "__dict__", {}) else []
    return [(torch.cuda, "_exchange_device", _exchange_device), *in_dynamo]


def _ctx_manager() -> Any:
    """Dynamo's context-manager variables (torch/_dynamo/variables/ctx_manager.py, torch 2.11-2.14)."""
    import torch._dynamo.variables.ctx_manager as ctx_manager

    return ctx_manager


def _fake_tensor_patch(on_refused: Callable[[str], None] | None, emulated: Emulated | None) -> tuple[Any, str, Any]:
    """FakeTensor.__new__ (torch/_subclasses/fake_tensor.py; its `fake_device`, torch 2.11-2.14;
    PR not found), refusing a fake CUDA tensor the user's or a library's code asked for."""
    from torch._subclasses.fake_tensor import FakeTensor

    original = FakeTensor.__dict__["__new__"]
    new = original.__func__ if isinstance(original, staticmethod) else original

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:  # noqa: N807 - the slot's name
        tensor = new(cls, *args, **kwargs)
        device = getattr(tensor, "fake_device", None)
        refused = _refusal(f"asks for a tensor on {str(device)!r}", on_refused, emulated) if (
            device is not None and device.type == "cuda") else None
        if refused is not None:
            raise refused
        return tensor

    return FakeTensor, "__new__", staticmethod(__new__)


def _lazy_init_patch(on_refused: Callable[[str], None] | None, emulated: Emulated | None) -> tuple[Any, str, Any]:
    """torch.cuda._lazy_init, which torch calls (from C++ too) before it first uses CUDA
    (torch/cuda/__init__.py, torch 2.11-2.14; PR not found)."""
    original = torch.cuda._lazy_init

    def _lazy_init() -> None:
        try:
            original()
            return
        except (AssertionError, RuntimeError, AttributeError):
            refused = _refusal("asks for CUDA (a tensor on a cuda device, or a torch.cuda call that needs one)",
                               on_refused, emulated)
            if refused is None:
                raise
        # Outside the except block: torch's AssertionError must not become its context (a failure
        # record names the innermost exception of the chain).
        raise refused

    _lazy_init.__name__ = _lazy_init.__qualname__ = "_lazy_init"
    return torch.cuda, "_lazy_init", _lazy_init


def _refusal(what: str, on_refused: Callable[[str], None] | None,
             emulated: Emulated | None = None) -> NoCudaDevice | None:
    """The NoCudaDevice error naming the code that asked; None when torch itself asked."""
    where = _asking_code(sys._getframe(2))
    if where is None:
        return None
    if on_refused is not None:
        on_refused(where)
    return NoCudaDevice(where, what, emulated(where) if emulated is not None else ())


def _asking_code(frame: FrameType | None) -> str | None:
    """`file:line in function` of the user's or library's code that asked: while torch traces
    (Dynamo on fake tensors), the instruction it traces (`TracingContext.extract_stack()`,
    torch/_guards.py, 2.11-2.14); else the innermost Python frame outside torch and Triton,
    unless tritoninspect's own frame comes first (then torch asked for itself)."""
    from torch._guards import TracingContext

    context = TracingContext.try_get()
    if context is not None:
        stack = context.extract_stack()
        top = stack[-1] if stack else None
        if top is None or top.filename.startswith("<") or versions.is_torch_or_triton_file(top.filename):
            return None
        return f"{top.filename}:{top.lineno} in {original_function(top.name)}"  # not Dynamo's resume function
    while frame is not None:
        file = frame.f_code.co_filename
        if file.startswith(_PACKAGE_DIR):
            return None
        if not file.startswith("<") and not versions.is_torch_or_triton_file(file):
            return f"{file}:{frame.f_lineno} in {original_function(frame.f_code.co_name)}"
        frame = frame.f_back
    return None


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
