"""The C++ runtime an AOTInductor package needs: the libstdc++ of the compiler that built it.

On the lent H200 (torch 2.11.0+cu130, Python 3.12) every AOTInductor package crashed when torch
loaded it, plain torch too: SIGSEGV in the `wrapper.so` the machine's g++ built,
`torch::aot_inductor::parse_device_str` -> `std::regex` -> a locale facet
(docs/aoti-load-crash-h200.txt). The wrapper has no dynamic libstdc++ dependency (`ldd`), and its
inlined `std::regex` code reaches the process's libstdc++, which that Python had not loaded into
the global symbol scope. Run with that compiler's libstdc++ preloaded
(`LD_PRELOAD=$(readlink -f $(g++ -print-file-name=libstdc++.so.6))`), the same processes loaded and
ran every package (scripts/gpu-export: 9 of 9 as expected, all matching eager; the notes' §9).

So the AOTInductor child (run/aoti.py) starts with that library preloaded, and before it loads a
package it promotes the libstdc++ it has loaded to the global scope (`promote_loaded`, which is all it
can do where nothing was preloaded). The library is found the way the
compiler Inductor uses would find it: `torch._inductor.cpp_builder.get_cpp_compiler()` (config.cpp.cxx
or $CXX, searched; torch 2.11-2.14, PR not found), then `<compiler> -print-file-name=libstdc++.so.6`.
Nothing is preloaded without a compiler (no package can be built then anyway), when the compiler
names no file, or when its libstdc++ is older than one this process already uses (a preloaded older
runtime would refuse torch's `GLIBCXX_*` symbols).
"""

from __future__ import annotations

import os
import re
import subprocess

#: What the child's environment variable holds; the report's note names it.
PRELOAD_ENV = "LD_PRELOAD"

_VERSION_RE = re.compile(r"libstdc\+\+\.so\.6\.0\.(\d+)$")


def compiler_libstdcxx() -> str | None:
    """The real path of the libstdc++ the C++ compiler Inductor uses links against, or None."""
    compiler = _inductor_compiler()
    if compiler is None:
        return None
    try:
        out = subprocess.run([compiler, "-print-file-name=libstdc++.so.6"], capture_output=True, text=True,
                             timeout=30, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    # Without it the compiler echoes the bare name back.
    if not os.path.isabs(out) or not os.path.exists(out):
        return None
    return os.path.realpath(out)


def _inductor_compiler() -> str | None:
    try:
        from torch._inductor.cpp_builder import get_cpp_compiler

        return str(get_cpp_compiler())
    except Exception:  # noqa: BLE001 - InvalidCxxCompiler, an ImportError on another torch: no compiler
        return None


def loaded_libstdcxx() -> list[str]:
    """Real paths of the libstdc++ files this process has loaded (Linux: /proc/self/maps)."""
    try:
        with open("/proc/self/maps") as maps:
            found = {line.split()[-1] for line in maps if "libstdc++.so" in line and "/" in line}
    except OSError:
        return []
    return sorted({os.path.realpath(path) for path in found})


def preload_for_package() -> str | None:
    """The libstdc++ to preload into the AOTInductor child, or None (see the module docstring)."""
    path = compiler_libstdcxx()
    if path is None:
        return None
    ours = _version(path)
    for loaded in loaded_libstdcxx():
        theirs = _version(loaded)
        if loaded != path and (ours is None or theirs is None or theirs > ours):
            return None
    return path


def _version(path: str) -> int | None:
    match = _VERSION_RE.search(path)
    return int(match[1]) if match else None


def with_preload(env: dict[str, str], path: str) -> dict[str, str]:
    """`env` with `path` first in LD_PRELOAD (kept once)."""
    rest = [p for p in env.get(PRELOAD_ENV, "").replace(":", " ").split() if p and os.path.realpath(p) != path]
    return {**env, PRELOAD_ENV: " ".join([path, *rest])}


def promote_loaded() -> list[str]:
    """Put the libstdc++ this process already loaded into the global symbol scope (dlopen with
    RTLD_NOLOAD | RTLD_GLOBAL promotes a library loaded RTLD_LOCAL; nothing new is loaded), before
    an AOTInductor package loads: the child's own runtime, where no compiler's could be preloaded.
    The paths promoted."""
    import ctypes

    promoted = []
    for path in loaded_libstdcxx():
        try:
            ctypes.CDLL(path, mode=os.RTLD_GLOBAL | os.RTLD_NOLOAD | os.RTLD_NOW)
        except OSError:
            continue
        promoted.append(path)
    return promoted

