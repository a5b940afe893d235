"""Compile-only mode's view of a GPU on a CPU-only machine: stub Triton driver, has_triton, TMA checks."""

from __future__ import annotations

from typing import Any

import torch

from tritoninspect.model.errors import CaptureError

# Without an active driver Triton cannot generate TTIR, so Dynamo graph-breaks
# and mutation analysis fails. A stub driver that reports a GPU target makes
# TTIR generation (and so Dynamo, AOTAutograd and Inductor) work; launches go
# through Triton's interpreter so the compiled model still runs on CPU.


def stub_driver(arch: int = 90, warp_size: int = 32, utils: Any = None) -> Any:
    """A Triton driver that compiles for `cuda:sm_<arch>` and launches nothing.

    Subclasses triton.backends.driver.DriverBase (its abstract methods as in
    triton 3.6-3.8; `get_active_torch_device` is what torch's generate_ttir asks
    for). Third-party active drivers since
    https://github.com/triton-lang/triton/pull/2973; PR for the current
    DriverBase methods not found. `utils`, when given, is the driver's `utils`
    (the NVIDIA driver's `CudaUtils`, triton 3.6-3.8: libraries read
    `utils.get_device_properties(device)`); without it there is none.
    """
    from triton.backends.compiler import GPUTarget
    from triton.backends.driver import DriverBase

    class CompileOnlyDriver(DriverBase):
        @classmethod
        def is_active(cls) -> bool:
            return True

        def map_python_to_cpp_type(self, ty: str) -> str:
            return "void*"

        def get_current_target(self) -> Any:
            return GPUTarget("cuda", arch, warp_size)

        def get_active_torch_device(self) -> Any:
            return torch.device("cpu")

        def get_benchmarker(self) -> Any:
            raise NotImplementedError("compile-only mode has no benchmarker")

        def get_current_device(self) -> int:
            return 0

        def set_current_device(self, device: int) -> None:
            return None

        def get_current_stream(self, device: int | None = None) -> int:
            return 0

        def get_device_capability(self, device: int = 0) -> tuple[int, int]:
            return divmod(arch, 10)

    driver = CompileOnlyDriver()
    if utils is not None:
        driver.utils = utils
    return driver


def triton_driver_config() -> Any:
    """triton.runtime.driver (a DriverConfig with a private `_active`, triton 3.2+;
    the set-able active driver came with https://github.com/triton-lang/triton/pull/2973,
    PR for the `_active` slot not found)."""
    from triton.runtime import driver

    if not hasattr(driver, "_active"):
        raise CaptureError("unsupported triton: triton.runtime.driver has no _active slot")
    return driver


def prime_has_triton() -> None:
    """Make torch's cached `has_triton()` answer True on a CPU-only machine.

    `has_triton` is a functools.cache'd function imported by name in many
    modules, so replacing the attribute is not enough: clear the cache and
    refill it while the CPU device check passes ("cpu" in triton's backends).
    `reset_has_triton` clears it again on exit. torch/utils/_triton.py
    `has_triton` (functools.cache) and triton.backends.backends, torch 2.11-2.14 /
    triton 3.6-3.8; PR not found.
    """
    import triton.backends
    from torch.utils import _triton

    _triton.has_triton.cache_clear()
    added = "cpu" not in triton.backends.backends
    if added:
        triton.backends.backends["cpu"] = None  # type: ignore[assignment]
    try:
        if not _triton.has_triton():
            raise CaptureError("could not make torch see Triton in compile-only mode")
    finally:
        if added:
            del triton.backends.backends["cpu"]


def reset_has_triton() -> None:
    # See prime_has_triton: has_triton.cache_clear(), torch 2.11-2.14.
    from torch.utils import _triton

    _triton.has_triton.cache_clear()


def tma_patches() -> list[tuple[Any, str, Any]]:
    """Let Dynamo accept host-side TensorDescriptors on CPU. torch 2.11-2.13:
    `_device_supports_tma` (torch/utils/_triton.py ~line 58 in 2.13); torch 2.14
    renamed it `_device_supports_tensor_descriptor` (it also covers Triton's CPU
    backend there, per intel/torch-xpu-ops#5030). PR for the rename not found."""
    from torch.utils import _triton

    patches = []
    for name in ("_device_supports_tma", "_device_supports_tensor_descriptor"):
        if hasattr(_triton, name):
            patches.append((_triton, name, lambda: True))
    return patches


def backend_option_patches() -> list[tuple[Any, str, Any]]:
    """Let Inductor read a user kernel's launch kwargs for the stub GPU's Triton target. torch 2.14 only:
    `define_user_defined_triton_kernel` (torch/_inductor/codegen/wrapper.py) checks that the device of the
    kernel's tensors has a Triton backend and parses the launch kwargs (`BLOCK=64`, `num_warps=4`) with the
    backend of `GPUTarget(device type, ...)` (`try_filter_backend_options_for_target`,
    torch/_inductor/runtime/triton_helpers.py). Compile-only mode's tensors are on the CPU, which has no
    Triton backend: every launch with a keyword failed with "triton not built with the 'cpu' backend". A GPU
    run's target is the GPU's: the stub driver's stands for it (`stub_driver`), as it does for the kernels'
    compiles. PR not found; torch 2.11-2.13 have neither name, so nothing is patched there."""
    from torch._dynamo import device_interface

    patches: list[tuple[Any, str, Any]] = []
    cpu = getattr(device_interface, "CpuInterface", None)
    if cpu is not None and hasattr(cpu, "raise_if_triton_unavailable"):
        patches.append((cpu, "raise_if_triton_unavailable", staticmethod(lambda device=None: None)))
    try:
        from torch._inductor.runtime import triton_helpers
    except ImportError:  # no Triton: nothing of Inductor's Triton codegen runs
        return patches
    original = getattr(triton_helpers, "try_filter_backend_options_for_target", None)
    if original is not None:
        def for_the_stub_target(target: Any, options: Any, kernel_arg_names: Any = ()) -> Any:
            if getattr(target, "backend", None) == "cpu":
                from triton.runtime import driver

                target = driver.active.get_current_target()
            return original(target, options, kernel_arg_names)

        patches.append((triton_helpers, "try_filter_backend_options_for_target", for_the_stub_target))
    return patches


def clear_tma_caches() -> None:
    # has_triton_tensor_descriptor_host_tma (the stable TensorDescriptor API, user
    # kernels since https://github.com/pytorch/pytorch/pull/155777) and
    # has_triton_experimental_host_tma are functools.cache'd, torch 2.11-2.14.
    from torch.utils import _triton

    for name in ("has_triton_tensor_descriptor_host_tma", "has_triton_experimental_host_tma"):
        fn = getattr(_triton, name, None)
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()
