"""The torch and Triton versions in use (the report's `meta` block), and whose files are theirs."""

from __future__ import annotations

import functools
import os

import torch
import triton


def torch_version() -> str:
    return torch.__version__


def triton_version() -> str:
    return triton.__version__


@functools.lru_cache(maxsize=1)
def _package_roots() -> tuple[str, ...]:
    return tuple(os.path.dirname(os.path.realpath(m.__file__)) + os.sep for m in (torch, triton) if m.__file__)


@functools.lru_cache(maxsize=4096)
def is_torch_or_triton_file(path: str) -> bool:
    """A file inside torch's or Triton's installed package (by its real location). Cached: the device-probe
    and no-CUDA watchers ask it of a frame's file on every `is_available()` and `torch.device` (743 times,
    half a second of realpath, for a compile-only `graph` of benchmarks/models/stack.py)."""
    return os.path.realpath(path).startswith(_package_roots())


def is_triton_compilation_error(exc: BaseException) -> bool:
    """Triton could not compile a kernel: `triton.compiler.errors.CompilationError` and its
    subclasses (the same class in triton 3.6-3.8)."""
    from triton.compiler.errors import CompilationError

    return isinstance(exc, CompilationError)
