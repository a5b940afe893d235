"""`--bench`: run time of a target, eager and compiled, on the GPU; compile times everywhere.

Runs inside the child process that captured the target (tritoninspect/children/side_child.py),
so the model is already imported and nothing is shared with the other side. It loads
and calls the model through the pipeline's public steps (`load`, `call_once`), as the
capture did.

Run times are measured with CUDA events: `WARMUP` calls first, then `REPS`
calls, each started on an idle GPU (`torch.cuda.synchronize()` before it) so
the host's launch overhead is part of the time, as in a synchronous training
or inference step; then the same number of calls back to back (throughput, where
host work can overlap the GPU). The L2 cache is not flushed between calls.

In compile-only mode kernels run in Triton's interpreter on the CPU, which
says nothing about GPU speed: only compile times are reported there.
"""

from __future__ import annotations

import contextlib
import statistics
import time
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import torch

from tritoninspect.run import pipeline
from tritoninspect.capture.scratch import scratch_inductor_cache
from tritoninspect.model.diff_report import SideBench, Timing

if TYPE_CHECKING:
    from tritoninspect.source.spec import TargetSpec

WARMUP = 25
REPS = 200

#: How run times are measured, for the diff report.
METHOD = (
    f"CUDA events; {WARMUP} warm-up calls, then {REPS} calls each started on an idle GPU "
    "(host overhead included): median [p20-p80]; 'back to back': mean of calls issued without synchronising"
)


def bench_target(
    spec: TargetSpec, options: pipeline.CaptureOptions, *, mode: str, compile_s: float | None
) -> SideBench:
    """Time `spec` eagerly and under a fresh `torch.compile` (gpu mode), or report
    only `compile_s`, the capture's backend compile time (compile-only mode)."""
    if mode != "gpu":
        return SideBench(compile_s=compile_s)
    loaded = pipeline.load(spec, options, device="cuda")
    args = loaded.input_sets[0]
    run_backward = loaded.requires_grad if options.backward is None else options.backward
    eager = time_calls(_step(loaded.module, args, run_backward))
    compiled_fn, first_call_s = fresh_compile(loaded.module, args, dynamic=options.dynamic, backward=run_backward)
    compiled = time_calls(compiled_fn)
    torch.compiler.reset()
    return SideBench(eager=eager, compiled=compiled, compile_s=compile_s, first_call_s=first_call_s)


def _step(fn: Callable[..., Any], args: tuple[Any, ...], backward: bool) -> Callable[[], Any]:
    """One call as the capture makes it (`pipeline.call_once`), ready to time."""
    call_once = pipeline.call_once
    return lambda: call_once(fn, args, backward)


def fresh_compile(
    module: Any, args: tuple[Any, ...], *, dynamic: bool, backward: bool
) -> tuple[Callable[[], Any], float]:
    """`torch.compile(module)` (default backend) and the wall time of its first call,
    with caches off so both sides of a diff pay a cold compile."""
    torch.compiler.reset()
    compiled = torch.compile(module, dynamic=True if dynamic else None)
    step = _step(compiled, args, backward)
    with _caches_off():
        torch.cuda.synchronize()
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        first = time.perf_counter() - start
    return step, first


@contextlib.contextmanager
def _caches_off() -> Iterator[None]:
    # torch.compiler.config is public (torch/compiler/config.py, 2.6+); without it,
    # compile with whatever caches are configured.
    config = getattr(torch.compiler, "config", None)
    if config is None or not hasattr(config, "force_disable_caches"):
        yield
        return

    with config.patch(force_disable_caches=True), scratch_inductor_cache(), warnings.catch_warnings():
        # Turning caches off also turns off Dynamo PGO, and torch warns about it.
        warnings.filterwarnings("ignore", message="dynamo_pgo force disabled")
        yield


def time_calls(fn: Callable[[], Any], *, warmup: int = WARMUP, reps: int = REPS) -> Timing:
    """Per-call GPU time of `fn` (see the module docstring for the method)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for start, end in zip(starts, ends):
        torch.cuda.synchronize()
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return summarise(times, pipelined_ms=_back_to_back(fn, reps))


def _back_to_back(fn: Callable[[], Any], reps: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps


def summarise(times_ms: list[float], *, pipelined_ms: float | None = None) -> Timing:
    """Median, 20th and 80th percentiles and minimum of per-call times."""
    ordered = sorted(times_ms)
    return Timing(
        median_ms=statistics.median(ordered),
        p20_ms=_percentile(ordered, 0.2),
        p80_ms=_percentile(ordered, 0.8),
        min_ms=ordered[0],
        reps=len(ordered),
        pipelined_ms=pipelined_ms,
    )


def _percentile(ordered: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
