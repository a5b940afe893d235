"""Every private torch / Triton name tritoninspect relies on, one module per torch subsystem.

Everything here tracks internals that move between releases. Rules:
- detect features, not version strings;
- each shim names the torch (or Triton) versions it applies to and the PR or
  issue behind it, so it can be deleted when those versions are dropped;
- an unknown layout raises `CaptureError` (or returns None where the caller
  turns that into a diagnostic), never a silent guess.

Supported: torch 2.11-2.14, triton 3.6-3.8 (see tests/test_compat.py). Callers
write `compat.hops.side_table_kernel(...)`; the text torch emits is parsed
torch-free in `tritoninspect.textformats`.

- `versions`: torch and Triton versions.
- `graph_views`: ATen view, allocation and write-back ops in AOT / post-grad FX graphs.
- `hops`: the triton_kernel_wrapper HOPs, their side table, argument tensors.
- `kernels`: Triton kernel objects, from a side-table entry to the user's JITFunction and decorators.
- `library`: custom_op / triton_op registrations.
- `dynamo`: compile ids, frames, structured trace, mutation-analysis fallback, bytecode hooks.
- `inductor`: Inductor and AOTAutograd: config patches, output-code hooks, launchers, cloned args, compile_fx.
- `cxx_runtime`: the libstdc++ an AOTInductor package needs preloaded (the H200's loader crash).
- `caches`: which compile caches a capture turns off; compile-only mode's Triton cache folder.
- `compile_only`: the stub Triton driver, has_triton and TMA checks on a CPU-only machine.
- `device_queries`: compile-only mode's answers to torch.cuda's device queries (an emulated GPU).
- `device_probes`: where `torch.cuda.is_available()` answered False to the user's code (compile-only mode).
- `no_cuda`: compile-only mode's error for code that asks for a CUDA tensor (instead of torch's abort).
- `interpreter`: launches through Triton's interpreter in compile-only mode (`interpreter_loops`: the
  loop variables and `__index__` it gives kernels; `libdevice`: libdevice in numpy; `kernel_copies`: a
  name Inductor's copy of a kernel lacks, a failure as on a GPU).
- `shapes`: dynamic-shape marks on inputs, the ShapeEnv's guards and symbol sources, nested compile regions.
- `triton_compile`: `--resources`: compile per config, metadata, registers.
- `trace_log`: `graph --trace DIR`: torch's structured-trace handler writing to a directory of ours.
- `autotune`, `layouts`, `lowering`, `mutation`: the evidence of issue 24's findings (capture/hazards.py):
  autotune settings, argument layouts and storages, Inductor's copies of kernel arguments, the
  mutation analysis' time.
"""

from __future__ import annotations

from tritoninspect.capture.compat import (
    autotune,
    caches,
    compile_only,
    cxx_runtime,
    device_probes,
    device_queries,
    dynamo,
    graph_views,
    hops,
    inductor,
    interpreter,
    kernel_copies,
    kernels,
    layouts,
    library,
    lowering,
    mutation,
    no_cuda,
    shapes,
    trace_log,
    triton_compile,
    versions,
)

__all__ = [
    "autotune", "caches", "compile_only", "cxx_runtime", "device_probes", "device_queries", "dynamo",
    "graph_views", "hops", "inductor", "interpreter", "kernel_copies", "kernels", "layouts", "library", "lowering", "mutation",
    "no_cuda", "shapes", "trace_log", "triton_compile", "versions",
]
