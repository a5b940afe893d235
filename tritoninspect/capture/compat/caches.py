"""Which compile caches a capture turns off, and where compile-only mode's Triton binaries go.

A capture must see every stage of a compile: Dynamo's graphs, AOTAutograd's joint
and split graphs, Inductor's post-grad graph and the output code. A cache that
returns a stage's *result* skips the stage, so those are off for the duration of a
capture (`stage_cache_patches`). Caches of kernel *binaries* (Inductor's C++
codecache and precompiled headers, Triton's on-disk cache, Inductor's autotune
results) only skip the C++/PTX compiler: the tool still sees the source Inductor
generated, the launches and the graphs, so they stay on, in torch's and Triton's
default locations, shared with the user's own runs. That is what makes a rerun fast.

Until issue 15 every capture set `force_disable_caches` instead, which also turned
the binary caches off and made `compile_fx` keep a fresh cache folder per compile.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

#: Compile-only mode's Triton binaries live in this subfolder of Triton's cache dir.
COMPILE_ONLY_SUBDIR = "tritoninspect-compile-only"


def stage_cache_patches() -> list[tuple[Any, str, Any]]:
    """(config module, attribute, False) for every cache that would replay a stage the
    capture must observe; names absent in this torch are skipped (feature detection)."""
    import torch._dynamo.config as dynamo_config
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    wanted = [
        # FX graph cache: a hit returns the compiled module without lowering, so no
        # post-grad passes and no output code (compile_fx.py `fx_codegen_and_compile`,
        # `use_cache`). On by default in OSS since https://github.com/pytorch/pytorch/pull/124091;
        # the remote one is for fbcode; both names in torch 2.11-2.14.
        (inductor_config, "fx_graph_cache"),
        (inductor_config, "fx_graph_remote_cache"),
        # AOTAutograd cache: a hit skips the joint graph and its partition
        # (_functorch/_aot_autograd/autograd_cache.py `should_use_local_autograd_cache`),
        # added by https://github.com/pytorch/pytorch/pull/125541, on by default in OSS since
        # https://github.com/pytorch/pytorch/pull/141981; torch 2.11-2.14.
        (functorch_config, "enable_autograd_cache"),
        (functorch_config, "enable_remote_autograd_cache"),
        (functorch_config, "bundled_autograd_cache"),
        # Dynamo PGO: a profile from an earlier run marks dims dynamic from the first
        # compile (_dynamo/pgo.py `code_state_path`, in <cache_dir>/dynamo), so a rerun
        # would show different graphs and recompiles than the first run.
        # https://github.com/pytorch/pytorch/pull/139001, torch 2.11-2.14.
        (dynamo_config, "automatic_dynamic_local_pgo"),
        (dynamo_config, "automatic_dynamic_remote_pgo"),
        # Dynamo's precompile cache (off unless TORCH_CACHING_PRECOMPILE=1) would load whole
        # compiled frames (_dynamo/config.py `caching_precompile`, ~line 752 in 2.13). PR not found.
        (dynamo_config, "caching_precompile"),
    ]
    return [(module, name, False) for module, name in wanted if hasattr(module, name)]


def compile_only_triton_cache_dir() -> str:
    """The folder compile-only mode's Triton compiles use: a subfolder of Triton's cache
    dir (`knobs.cache.dir`: $TRITON_CACHE_DIR, else ~/.triton/cache; triton 3.6-3.8).

    Why apart: the stub driver reports the same target (cuda, sm_90) as a real H100, and
    Triton's cache key (triton/compiler/compiler.py: source, backend hash = arch + ptxas
    version, options, env) does not say that no GPU was there. What compile-only mode
    patches around the compile (driver, device queries, TMA checks) is outside the key, so
    a binary built under it could otherwise be loaded by the user's next real GPU run. In
    this folder it is found again only by compile-only runs, which make the same binary.
    """
    import triton

    return os.path.join(triton.knobs.cache.dir, COMPILE_ONLY_SUBDIR)


@contextlib.contextmanager
def compile_only_triton_cache() -> Iterator[str]:
    """Triton's cache dir is `compile_only_triton_cache_dir()` within the block (the
    `knobs.cache` scope restores the knob and $TRITON_CACHE_DIR after; triton 3.6-3.8,
    PR not found)."""
    import triton

    directory = compile_only_triton_cache_dir()
    with triton.knobs.cache.scope():
        triton.knobs.cache.dir = directory
        yield directory


#: run/aoti.py tells the AOTInductor child where the user's precompiled C++ headers are (the child's
#: TMPDIR is a scratch folder, from which torch would derive another, empty, place).
PRECOMPILED_HEADERS_ENV = "TRITONINSPECT_PRECOMPILED_HEADERS"


def inductor_cache_dir() -> str:
    """Inductor's cache folder as this process would make it, without making it (torch's `cache_dir()`
    creates the folder and sets $TORCHINDUCTOR_CACHE_DIR): `runtime/cache_dir_utils.py`, torch 2.11-2.14."""
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    return os.environ.get("TORCHINDUCTOR_CACHE_DIR") or default_cache_dir()


def precompiled_header_dir() -> str | None:
    """Where this process's Inductor keeps its precompiled C++ headers, or None (a torch without them).

    `codecache._HEADER_DIR`, <default cache dir>/precompiled_headers, fixed when codecache is imported and
    meant to be global, outside any scratch cache ("these headers need to be global, rather than ignored by
    fresh_inductor_cache": https://github.com/pytorch/pytorch/pull/144002); torch 2.11-2.14."""
    import torch._inductor.codecache as codecache

    return getattr(codecache, "_HEADER_DIR", None)


def use_precompiled_header_dir(directory: str) -> None:
    """Build and reuse precompiled headers in `directory` (the parent's `precompiled_header_dir()`).

    An AOTInductor package's wrapper is compiled with precompiled headers (`aot_inductor.precompile_headers`);
    built in a fresh folder each export, they cost 15 of the 50 s of a CPU export. `_precompile_header`
    reads the two module globals when called; a torch without them keeps its own place."""
    import torch._inductor.codecache as codecache

    if hasattr(codecache, "_HEADER_DIR") and hasattr(codecache, "_HEADER_LOCK_DIR"):
        codecache._HEADER_DIR = directory
        codecache._HEADER_LOCK_DIR = os.path.join(directory, "locks")
