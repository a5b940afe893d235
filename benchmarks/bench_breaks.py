"""How much slower is `tritoninspect breaks` than `torch._dynamo.explain` on the same model?

One ratio, measured in this run: the median over --repeat fresh processes of

  `python -m tritoninspect breaks samples/<sample>.py:Net --device D --json > /dev/null`

against a baseline process that runs `torch._dynamo.explain(model)(*inputs)` on the
same model and inputs. Target: <= 1.00 (breaks is Dynamo-only by default, like explain).

Why it is measured this way:
  * Fresh processes: a first compile is what a user waits for. Empty compile caches,
    compiled Python (a warm-up run per side), interleaved runs: see benchmarks/_common.py.
  * Same mode: without CUDA the baseline enters
    `tritoninspect.capture.session.compile_only()` before importing the sample (Triton
    kernels cannot be traced on a CPU otherwise, and explain runs the graphs), as the
    tool does; with CUDA both run on the GPU.
  * Same work: inputs come from the sample's `example_inputs()`; a list of tuples is one
    call per tuple, and the baseline runs explain once per tuple. The default sample
    makes one call. Both run the forward only, with grad on when parameters or inputs
    require it (`torch._dynamo.explain(model)(*inputs)` as a user types it; `breaks`
    runs a training step's forward, its backward only with --backward).
  * CPU time too: the children's user+sys time (getrusage) is printed beside wall time;
    on a busy machine it varies less. --check uses the wall-time ratio.

Usage: python benchmarks/bench_breaks.py [--sample break_pre_hook] [--repeat 5] [--device auto] [--check]
Exit status: 0, or with --check 1 when the ratio is over its target.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import FreshRuns, bench_arguments, import_sample, input_sets, report_ratio, to_device  # noqa: E402

BREAKS_TARGET = 1.00


def main() -> int:
    args = bench_arguments(__doc__, sample="break_pre_hook", repeat=5)
    if args.baseline_child:
        return run_explain(*args.baseline_child)
    device, rel = args.device, args.path
    if device == "cpu":
        print("no CUDA: both sides run in compile-only mode; the explain baseline enters")
        print("tritoninspect.capture.session.compile_only() before importing the sample.")

    py = sys.executable
    tool, base = "tritoninspect breaks", "torch._dynamo.explain"
    commands = {
        tool: [py, "-m", "tritoninspect", "breaks", f"{rel}:Net", "--device", device, "--json"],
        base: [py, __file__, "--baseline-child", rel, device],
    }
    runs = FreshRuns(commands)
    runs.run(args.repeat)
    print()
    runs.print_table()
    print()
    runs.print_commands()
    print()
    over = report_ratio("breaks / explain (wall)", runs.wall[tool], runs.wall[base], BREAKS_TARGET)
    print(f"breaks / explain (cpu): {statistics.median(runs.cpu[tool]) / statistics.median(runs.cpu[base]):.2f}")
    return 1 if args.check and over else 0


def run_explain(sample_path: str, device: str) -> int:
    """`torch._dynamo.explain` on the sample's Net, once per input set (a child process)."""
    import contextlib

    mode: contextlib.AbstractContextManager = contextlib.nullcontext()
    if device == "cpu":
        from tritoninspect.capture.session import compile_only

        mode = compile_only()  # before the import: kernel libraries probe Triton when imported
    with mode:
        import torch

        module = import_sample(sample_path)
        model = module.Net().to(device)
        for call in input_sets(module.example_inputs()):
            torch._dynamo.explain(model)(*(to_device(v, device) for v in call))
        if device == "cuda":
            torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
