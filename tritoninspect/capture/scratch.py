"""A private Inductor cache directory, removed after it: for `diff --bench`'s cold compile.

A capture uses torch's default cache folders (kernel binaries are shared with the user's
own runs; see capture/compat/caches.py). `--bench` times a *fresh* compile of each side,
so it sets `force_disable_caches`, and with that each `compile_fx` makes a fresh cache
directory under `cache_dir()` and keeps it (torch/_inductor/compile_fx.py
`with_fresh_cache_if_config`: `fresh_cache(dir=cache_dir(), delete=False)`, checked in
torch 2.13). Pointing $TORCHINDUCTOR_CACHE_DIR at a directory of ours for that compile
loses nothing (nothing in it is reused with caches off) and leaves nothing behind.

Torch-free, so it can be entered before torch is imported.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator

__all__ = ["INDUCTOR_CACHE_ENV", "has_space", "scratch_inductor_cache", "space_hint", "spaceless_temp_parent"]

INDUCTOR_CACHE_ENV = "TORCHINDUCTOR_CACHE_DIR"


#: Where a temporary folder goes when $TMPDIR has a space in its path (first one writable).
_FALLBACK_TEMP = ("/tmp", "/var/tmp")


def has_space(path: str) -> bool:
    """Torch's C++ builds (Inductor's CPU kernels, an AOTInductor package) split their compiler command on
    whitespace, so a file under such a path fails to compile (`g++ '/tmp/a' 'b/header.hpp'`; torch 2.13)."""
    return any(c.isspace() for c in path)


def space_hint(exc: BaseException, folder: str) -> str:
    """Why a C++ build failed (`exc`) when Inductor's cache `folder` has a space in its path, and what
    to set; "" when that is not the case."""
    if "CppCompileError" not in f"{type(exc).__name__}: {exc}" or not has_space(folder):
        return ""
    return (f". Inductor's cache folder {folder!r} has a space in its path, which torch's C++ build splits "
            "on: set TORCHINDUCTOR_CACHE_DIR (or TMPDIR) to a folder without one")


def spaceless_temp_parent() -> str | None:
    """Where to make a temporary folder torch will build C++ in: the temp folder, unless its path has
    whitespace, then the first of `_FALLBACK_TEMP` that takes files; None when there is none (the
    default is used, and torch's compile fails with its own message)."""
    default = tempfile.gettempdir()
    if not has_space(default):
        return default
    return next((d for d in _FALLBACK_TEMP if os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK)), None)


@contextlib.contextmanager
def scratch_inductor_cache() -> Iterator[str | None]:
    """$TORCHINDUCTOR_CACHE_DIR is a new temporary directory within the block; on
    exit (an error or KeyboardInterrupt included) the previous value comes back and
    the directory is removed. Yields None, changing nothing, when the temp dir is
    not writable (torch then fails with its own message)."""
    try:
        directory = tempfile.mkdtemp(prefix="tritoninspect-inductor-")
    except OSError:
        yield None
        return
    saved = os.environ.get(INDUCTOR_CACHE_ENV)
    os.environ[INDUCTOR_CACHE_ENV] = directory
    try:
        yield directory
    finally:
        if saved is None:
            os.environ.pop(INDUCTOR_CACHE_ENV, None)
        else:
            os.environ[INDUCTOR_CACHE_ENV] = saved
        shutil.rmtree(directory, ignore_errors=True)
