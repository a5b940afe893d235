"""The torch and Triton versions in use (the report's `meta` block), and whose files are theirs."""

from __future__ import annotations

import functools
import os
import re

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


#: The releases every shim here is tested against (tests/test_compat.py on CPU, CI, the GPU machine); the
#: dependency ranges in pyproject.toml admit the same. Outside them a private name may have moved.
TESTED_TORCH = ((2, 11), (2, 14))
TESTED_TRITON = ((3, 6), (3, 8))


def _release(version: str) -> tuple[int, int]:
    """(major, minor) of "2.15.0+cu132", "3.9.0", "2.14.0a0+git1234"; (0, 0) when the text has none."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match[1]), int(match[2])) if match else (0, 0)


def untested(torch_version: str | None = None, triton_version: str | None = None) -> str | None:
    """A sentence naming the torch or Triton in use when it is outside the tested releases, else None."""
    outside = []
    for name, version, (low, high) in (("torch", torch_version or torch.__version__, TESTED_TORCH),
                                       ("triton", triton_version or triton.__version__, TESTED_TRITON)):
        if not low <= _release(version) <= high:
            outside.append(f"{name} {version}")
    if not outside:
        return None
    return (f"{' and '.join(outside)} {'is' if len(outside) == 1 else 'are'} outside the releases tritoninspect "
            f"is tested with (torch {TESTED_TORCH[0][0]}.{TESTED_TORCH[0][1]}-{TESTED_TORCH[1][0]}."
            f"{TESTED_TORCH[1][1]}, triton {TESTED_TRITON[0][0]}.{TESTED_TRITON[0][1]}-{TESTED_TRITON[1][0]}."
            f"{TESTED_TRITON[1][1]})")
