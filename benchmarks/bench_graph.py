"""How much slower is `tritoninspect graph` than the torch.compile it inspects?

Two ratios, both measured in this run, each the median over --repeat fresh processes:

  (a) `python -m tritoninspect graph samples/<sample>.py:Net --json > /dev/null`
      against a baseline process that does a plain `torch.compile(model)` (default
      Inductor backend) and its first call(s) on the same model and inputs.
      Target: <= 1.10 (the recording backend should cost little on top of the compile).
  (b) `python -m tritoninspect --help` against `python -c "import torch"`.
      Target: <= 0.10 (the CLI imports torch lazily, so help must start fast).

Why it is measured this way:
  * Fresh processes: a first compile is what a user waits for; an in-process loop
    would time warm Dynamo/Inductor state instead. Empty compile caches, compiled
    Python, interleaved runs: see benchmarks/_common.py.
  * Same mode: the tool is run with an explicit --device; without CUDA the baseline
    enters `tritoninspect.capture.session.compile_only()` before importing the
    sample (Triton kernels cannot compile on a CPU otherwise) and, as the tool
    does, sets TRITON_INTERPRET=1 around Inductor's compile_fx only (the default
    backend is otherwise unchanged) and compiles a backward with its forward, inside
    that window; with CUDA it is plain torch with the model and inputs on the GPU.
  * Same work: inputs come from the sample's `example_inputs()` (a list of tuples
    means one call per tuple), and the baseline runs under `torch.no_grad()` unless
    inputs or parameters require grad, then runs backward, as the tool does.

Usage: python benchmarks/bench_graph.py [--sample add_raw] [--repeat 3] [--device auto] [--check]
Exit status: 0, or with --check 1 when a ratio is over its target.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import FreshRuns, bench_arguments, import_sample, input_sets, report_ratio, to_device  # noqa: E402

GRAPH_TARGET = 1.10
HELP_TARGET = 0.10


def main() -> int:
    args = bench_arguments(__doc__, sample="add_raw", repeat=3)
    if args.baseline_child:
        return run_baseline(*args.baseline_child)
    device, rel = args.device, args.path
    if device == "cpu":
        print("no CUDA: both sides run in compile-only mode (stub sm_90 Triton target, kernels interpreted).")
        print("The baseline enters tritoninspect.capture.session.compile_only() before importing the sample")
        print("and, as the tool does, sets TRITON_INTERPRET=1 around Inductor's compile_fx and compiles any")
        print("backward together with its forward.")

    py = sys.executable
    commands = {
        "tritoninspect graph": [py, "-m", "tritoninspect", "graph", f"{rel}:Net", "--device", device, "--json"],
        "torch.compile": [py, __file__, "--baseline-child", rel, device],
        "tritoninspect --help": [py, "-m", "tritoninspect", "--help"],
        "import torch": [py, "-c", "import torch"],
    }
    runs = FreshRuns(commands)
    runs.run(args.repeat)
    print()
    runs.print_table()
    print()
    times = runs.wall
    over = [
        report_ratio("graph / torch.compile", times["tritoninspect graph"], times["torch.compile"], GRAPH_TARGET),
        report_ratio("--help / import torch", times["tritoninspect --help"], times["import torch"], HELP_TARGET),
    ]
    return 1 if args.check and any(over) else 0


# --- the baseline process ------------------------------------------------------------------------


def run_baseline(sample_path: str, device: str) -> int:
    """Plain torch.compile of the sample's Net, called on each of its input sets (a child process)."""
    import contextlib

    import torch

    mode = contextlib.nullcontext()
    if device == "cpu":
        import torch._functorch.config
        from tritoninspect.capture.session import compile_only

        mode = compile_only()  # before the import: kernel libraries probe Triton when imported
        # A lazy backward would compile at .backward(), outside the TRITON_INTERPRET window.
        torch._functorch.config.force_non_lazy_backward_lowering = True
    with mode:
        module = import_sample(sample_path)
        model = module.Net().to(device)
        calls = [tuple(to_device(v, device) for v in call) for call in input_sets(module.example_inputs())]
        grad = any(p.requires_grad for p in model.parameters()) or any(
            getattr(v, "requires_grad", False) for call in calls for v in call
        )
        compiled = torch.compile(model) if device == "cuda" else torch.compile(model, backend=_interpreting_inductor)
        for call in calls:
            with contextlib.nullcontext() if grad else torch.no_grad():
                out = compiled(*call)
            if grad:
                outs = out if isinstance(out, (tuple, list)) else [out]
                losses = [t.sum() for t in outs if isinstance(t, torch.Tensor) and t.requires_grad]
                if losses:
                    torch.stack(losses).sum().backward()
        if device == "cuda":
            torch.cuda.synchronize()
    return 0


def _interpreting_inductor(gm: object, example_inputs: object) -> object:
    """The default backend (Inductor's compile_fx) with TRITON_INTERPRET=1 while it compiles.

    Without it Inductor precompiles user kernels for the stub GPU target and fails;
    the tool's recorder sets it around compile_fx only, so Dynamo still sees the kernels.
    """
    from torch._inductor.compile_fx import compile_fx

    previous = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        return compile_fx(gm, example_inputs)
    finally:
        if previous is None:
            del os.environ["TRITON_INTERPRET"]
        else:
            os.environ["TRITON_INTERPRET"] = previous


if __name__ == "__main__":
    sys.exit(main())
