"""--resources: compile a user kernel per autotune config with Triton, read its metadata and registers."""

from __future__ import annotations

import os
import re
from typing import Any

import torch
import triton
from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

from tritoninspect.errors import CaptureError

# A kernel is compiled once per autotune config through a fresh copy of its
# JITFunction: `warmup()` binds and specialises the arguments exactly as a
# launch would (pointer alignment, ints divisible by 16), compiles for the
# active driver's target and launches nothing (triton/runtime/jit.py
# `KernelInterface.warmup` / `JITFunction.run`, same in triton 3.6-3.8). A copy,
# so its binder is made for the driver active now (the stub's `--target` in
# compile-only mode) and the user's kernel cache is left alone. The private
# pieces (`device_caches`, `create_binder`, `MockTensor.wrap_dtype`) are as in
# triton 3.6-3.8; PR not found.


def compile_kernel(jf: JITFunction, args: dict[str, Any], options: dict[str, Any]) -> Any:
    """Compile `jf` for the active target; `args` by parameter name (a torch.dtype
    stands for a tensor of that dtype: `MockTensor.wrap_dtype`)."""
    import copy
    from collections import defaultdict

    from triton.runtime.jit import MockTensor

    fresh = copy.copy(jf)
    fresh.device_caches = defaultdict(fresh.create_binder)
    # warmup() wraps dtypes given positionally only; these go by name.
    named = {name: MockTensor.wrap_dtype(value) for name, value in args.items()}
    compiled = fresh.warmup(grid=(1,), **named, **options)
    if compiled is None:
        raise CaptureError(f"Triton returned no compiled kernel for {jf.fn.__name__}")
    # An async compile returns a future (triton knobs.compilation.async_compile,
    # triton 3.6-3.8; PR not found).
    return compiled.result() if hasattr(compiled, "result") else compiled


def compiled_metadata(compiled: Any) -> dict[str, Any]:
    """Shared memory (bytes), warps, stages and target of a CompiledKernel
    (`CompiledKernel.metadata`, a namedtuple of the backend's options; fields as
    in triton 3.6-3.8, PR not found)."""
    meta = compiled.metadata
    target = meta.target
    arch = getattr(target, "arch", None)
    return {
        "shared": getattr(meta, "shared", None),
        "num_warps": getattr(meta, "num_warps", None),
        "num_stages": getattr(meta, "num_stages", None),
        "target": f"sm_{arch}" if getattr(target, "backend", "") == "cuda" else str(arch),
    }


def loaded_kernel_usage(compiled: Any) -> tuple[int | None, int | None]:
    """(registers, spills) of a kernel loaded on the GPU: `_init_handles()` loads
    it and reads CU_FUNC_ATTRIBUTE_NUM_REGS and LOCAL_SIZE_BYTES / 4
    (triton/backends/nvidia/driver.c `loadBinary`, triton 3.6-3.8; PR not found)."""
    compiled._init_handles()
    return getattr(compiled, "n_regs", None), getattr(compiled, "n_spills", None)


_RES_USAGE_RE = re.compile(r"\bREG:(?P<reg>\d+)\b.*?\bLOCAL:(?P<local>\d+)\b")


def cubin_usage(compiled: Any) -> tuple[int | None, int | None]:
    """(registers, spills) of a compiled kernel that cannot be loaded here, from
    the cuobjdump bundled in the triton wheel (`knobs.nvidia.cuobjdump`,
    triton/backends/nvidia/bin): `cuobjdump -res-usage` prints
    `REG:30 STACK:0 SHARED:0 LOCAL:0 ...`. Spills as the driver counts them:
    local memory bytes / 4. `knobs.nvidia.cuobjdump`: triton 3.6-3.8 (the knobs
    module); PR not found."""
    import subprocess
    import tempfile

    cubin = compiled.asm.get("cubin")
    if cubin is None:
        return None, None
    tool = triton.knobs.nvidia.cuobjdump.path
    with tempfile.TemporaryDirectory(prefix="tritoninspect-") as tmp:
        path = os.path.join(tmp, "kernel.cubin")
        with open(path, "wb") as f:
            f.write(cubin)
        out = subprocess.run([tool, "-res-usage", path], capture_output=True, text=True, check=True).stdout
    match = _RES_USAGE_RE.search(out)
    if match is None:
        raise CaptureError(f"cannot read cuobjdump -res-usage output: {out.strip()[:200]}")
    return int(match["reg"]), int(match["local"]) // 4


def launch_value(value: Any) -> Any:
    """A HOP argument as `compile_kernel` takes it: a tensor node -> its dtype, a
    symbolic int -> its hint (2 without one, as torch's generate_ttir does),
    plain values as they are."""
    example = value.meta.get("val", value.meta.get("example_value")) if isinstance(value, torch.fx.Node) else value
    if isinstance(example, torch.Tensor):
        return example.dtype
    if isinstance(example, torch.SymInt):
        # SymNode.has_hint() / .hint (torch/fx/experimental/sym_node.py, 2.11-2.14;
        # PR not found).
        node = example.node
        return int(node.hint) if node.has_hint() else 2
    return example


def config_dicts(kernel: Any) -> list[dict[str, Any]]:
    """Each autotune config of the kernel object a HOP launches (kwargs plus the
    launch options that are set), or one empty config for a plain JITFunction.
    Dynamo's synthesised Autotuner already holds the heuristics' values (§1).
    Config.all_kwargs(), triton 3.6-3.8."""
    if isinstance(kernel, Autotuner):
        return [{k: v for k, v in c.all_kwargs().items() if v is not None} for c in kernel.configs]
    return [{}]
