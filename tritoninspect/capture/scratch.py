"""A private Inductor cache directory for a run, removed after it: a run leaves nothing in the temp dir.

With `force_disable_caches` (every capture sets it, and `--bench` for its fresh
compile), each `compile_fx` makes a fresh cache directory under `cache_dir()` and
keeps it (torch/_inductor/compile_fx.py `with_fresh_cache_if_config`:
`fresh_cache(dir=cache_dir(), delete=False)`, checked in torch 2.13). `cache_dir()` is
$TORCHINDUCTOR_CACHE_DIR, else <tempdir>/torchinductor_$USER, which it creates
and writes back to the environment; torch 2.13 calls it when `torch._dynamo` is
imported (torch/_dynamo/package.py `DynamoCache`). Nothing in it is reused with
caches off, so pointing it at a directory of ours for the run loses nothing.

Torch-free: the CLI enters it before torch is imported; a capture enters it again
for the Python API, whose caller imported torch long before.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator

__all__ = ["INDUCTOR_CACHE_ENV", "scratch_inductor_cache"]

INDUCTOR_CACHE_ENV = "TORCHINDUCTOR_CACHE_DIR"


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
