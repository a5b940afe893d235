"""Does the tool's own work grow with the model only as fast as the compile does?

A generated model (benchmarks/models/stack.py) with 8, 16, 32 and 64 layers, each layer
launching user kernels through all three entry kinds (raw launch in an autograd.Function,
triton_op, custom_op), forward and backward. For each size, --repeat fresh processes
(sizes interleaved, so a busy spell of a shared machine hits all of them) each time,
in-process:

  capture   `pipeline.capture_target`: load the model, torch.compile it with the recording
            backend, run forward and backward (torch and triton imported before timing;
            the compile is nearly all of it): the "compile time" of the target below;
  analysis  `pipeline.analyse`: every analysis, the report built
            (the heap is frozen after the imports and after the capture, as the CLI does:
            commands/_capture.py);
  render    the JSON and the terminal text of that report.

Targets: (analysis + render) <= 5% of capture at 64 layers, and linear in the number of
graph nodes (sum of `op_count` over the report's graphs): the exponent of a least-squares
fit of log(time) on log(nodes) <= 1.15. Capture's exponent is printed beside it. Each
process has empty compile caches (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR of its own).

Usage: python benchmarks/bench_scaling.py [--layers 8,16,32,64] [--repeat 1] [--device auto] [--check]
Exit status: 0, or with --check 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODEL = "benchmarks/models/stack.py"
SHARE_TARGET = 0.05
EXPONENT_TARGET = 1.15


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", default="8,16,32,64")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("LAYERS", "DEVICE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(int(args.child[0]), args.child[1])
    device = args.device
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    sizes = [int(n) for n in args.layers.split(",")]
    print(f"model {MODEL}:Net<N> · device {device} · median of {args.repeat} fresh process(es) per size")
    print(f"command: {shlex.join([sys.executable, __file__, '--child', 'N', device])}")
    rows: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    for _ in range(args.repeat):
        for n in sizes:
            rows[n].append(run_child(n, device))
    return 1 if report(rows) and args.check else 0


def run_child(layers: int, device: str) -> dict[str, float]:
    cache = tempfile.mkdtemp(prefix="bench-scaling-cache-")
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, "TRITON_CACHE_DIR": os.path.join(cache, "triton")}
    try:
        proc = subprocess.run([sys.executable, __file__, "--child", str(layers), device], cwd=REPO, env=env,
                              capture_output=True, text=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if proc.returncode != 0:
        sys.exit(f"failed (exit {proc.returncode}) at {layers} layers:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def report(rows: dict[int, list[dict[str, float]]]) -> bool:
    """Print the table, the shares and the fitted exponents; True when a target is missed."""
    med = {n: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for n, runs in rows.items()}
    print(f"\n{'layers':>6} {'nodes':>6} {'capture s':>10} {'analysis s':>11} {'render s':>9} {'(a+r)/capture':>14}")
    for n, m in med.items():
        share = (m["analysis"] + m["render"]) / m["capture"]
        print(f"{n:>6} {int(m['nodes']):>6} {m['capture']:>10.2f} {m['analysis']:>11.3f} {m['render']:>9.3f} "
              f"{share:>13.1%}")
    largest = med[max(med)]
    share = (largest["analysis"] + largest["render"]) / largest["capture"]
    nodes = [m["nodes"] for m in med.values()]
    own = fit_exponent(nodes, [m["analysis"] + m["render"] for m in med.values()])
    capture = fit_exponent(nodes, [m["capture"] for m in med.values()])
    parts = {k: fit_exponent(nodes, [m[k] for m in med.values()]) for k in ("analysis", "render")}
    over_share, over_exp = share > SHARE_TARGET, own > EXPONENT_TARGET
    print(f"\n(analysis+render)/capture at {max(med)} layers: {share:.1%} (target <= {SHARE_TARGET:.0%}) "
          f"{'OVER' if over_share else 'OK'}")
    print(f"time ~ nodes^k: analysis+render k = {own:.2f} (target <= {EXPONENT_TARGET}) {'OVER' if over_exp else 'OK'}"
          f"; capture k = {capture:.2f}; analysis alone k = {parts['analysis']:.2f}, render alone k = {parts['render']:.2f}")
    return over_share or over_exp


def fit_exponent(xs: list[float], ys: list[float]) -> float:
    """The slope of the least-squares line through (log x, log y)."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def child(layers: int, device: str) -> int:
    """One size, timed in this process; prints one JSON line."""
    from tritoninspect.run import pipeline
    from tritoninspect.render import render_as
    from tritoninspect.source.spec import parse_spec

    # Imported before timing: the capture's time is compile and run.
    importlib.import_module("torch")
    importlib.import_module("triton")

    spec = parse_spec(f"{MODEL}:Net{layers}")
    gc.freeze()  # as the CLI does (commands/_capture.py `ready_to_capture`, `capture_here`)
    start = time.perf_counter()
    capture = pipeline.capture_target(spec, pipeline.CaptureOptions(device=device))
    gc.freeze()
    captured = time.perf_counter()
    report = pipeline.analyse(capture)
    analysed = time.perf_counter()
    for fmt in ("json", "text"):
        render_as(report, fmt, color=False, width=100)
    rendered = time.perf_counter()
    if report.failure is not None:
        sys.exit(f"the capture failed: {report.failure}")
    nodes = sum(g.op_count for g in report.graphs)
    print(json.dumps({"nodes": nodes, "capture": captured - start, "analysis": analysed - captured,
                      "render": rendered - analysed}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
