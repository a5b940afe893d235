"""How much slower is `tritoninspect graph` than the torch.compile it inspects?

Four ratios, all measured in this run, each the median over --repeat fresh processes:

  (a) cold: `python -m tritoninspect graph <model>:Net --device D --json > /dev/null`
      against a baseline process that does a plain `torch.compile(model)` (default
      Inductor backend) and its first call(s) (forward, and backward when parameters or
      inputs require grad) on the same model and inputs. Both with empty compile caches.
      Target: <= 1.00 (<= 0.90 with --device cuda, for the Liger-style block of scripts/gpu-bench).
  (b) warm: the same two commands rerun over compile caches their own first run filled
      (a user rerunning the tool on an unchanged model). The baseline turns off the same
      stage caches the tool must turn off (FX graph, AOTAutograd, Dynamo PGO:
      tritoninspect/capture/compat/caches.py), so both sides do the same work: trace,
      lower, generate code, and load the C++/Triton kernels from the cache. Target: <= 1.00.
  (b') for information: warm `graph` against plain torch.compile with all its default
      caches (an FX-graph-cache hit skips lowering and code generation, the stages the tool
      exists to show; not a like-for-like ratio, no target).
  (c) `python -m tritoninspect --help` against `python -c "import torch"`. Target: <= 0.10.
  (d) plain: cold `graph` against a PLAIN `torch.compile(model)(*inputs)` first call with
      empty caches: no compile-only mode, no TRITON_INTERPRET window, the default backend
      and lazy backward, what a user compares with for a model without user kernels (the
      cold baseline (a) does what the tool must do for kernel models; keep it for those).
      Target: <= 1.00. Peak RSS of the same two runs beside it: target <= 1.30.

Why it is measured this way:
  * Fresh processes: a first compile is what a user waits for; an in-process loop
    would time warm Dynamo/Inductor state instead. Compiled Python, interleaved runs
    (run i of every command before run i+1 of any, so a busy spell of a shared machine
    hits both sides of a ratio): see benchmarks/_common.py.
  * Same mode: the tool is run with an explicit --device; without CUDA the baseline
    enters `tritoninspect.capture.session.compile_only()` before importing the model
    (Triton kernels cannot compile on a CPU otherwise) and, as the tool does, sets
    TRITON_INTERPRET=1 around Inductor's compile_fx only (the default backend is
    otherwise unchanged) and compiles a backward with its forward, inside that window;
    with CUDA it is plain torch with the model and inputs on the GPU.
  * Same work: inputs come from the model file's `example_inputs()` (a list of tuples
    means one call per tuple), and the baseline runs under `torch.no_grad()` unless
    inputs or parameters require grad, then runs backward, as the tool does.
  * Default model: benchmarks/models/mlp.py, small and kernel-free (fwd+bwd), so the
    ratio is the tool's overhead over torch.compile's own work.

Usage: python benchmarks/bench_graph.py [--sample benchmarks/models/mlp.py] [--repeat 3] [--device auto]
       [--only cold,warm,help,plain] [--check]
Exit status: 0, or with --check 1 when a ratio is over its target.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import FreshRuns, bench_arguments, import_sample, input_sets, report_ratio, to_device  # noqa: E402

GRAPH_TARGET = 1.00
#: On a GPU the issue asks for more (issue 15: the Liger-style block, fwd+bwd, empty caches).
GRAPH_TARGET_GPU = 0.90
WARM_TARGET = 1.00
HELP_TARGET = 0.10
RSS_TARGET = 1.30
ROWS = ("cold", "warm", "help", "plain")


def main() -> int:
    args = bench_arguments(__doc__, sample="benchmarks/models/mlp.py", repeat=3,
                           extra=[("--only", {"default": ",".join(ROWS), "help": "rows to run: cold,warm,help,plain"})])
    if args.baseline_child:
        return run_baseline(*args.baseline_child)
    device, rel = args.device, args.path
    if device == "cpu":
        print("no CUDA: both sides run in compile-only mode (stub sm_90 Triton target, kernels interpreted).")
        print("The baseline enters tritoninspect.capture.session.compile_only() before importing the model")
        print("and, as the tool does, sets TRITON_INTERPRET=1 around Inductor's compile_fx and compiles any")
        print("backward together with its forward.")
    rows = set(args.only.split(","))
    py = sys.executable
    tool = [py, "-m", "tritoninspect", "graph", f"{rel}:Net", "--device", device, "--json"]
    base = [py, __file__, "--baseline-child", rel, device]
    commands: dict[str, list[str]] = {}
    if "cold" in rows:
        commands |= {"graph (cold)": tool, "torch.compile (cold)": [*base, "default"]}
    if "plain" in rows:
        commands |= {"graph (cold)": tool, "plain torch.compile (cold)": [*base, "plain"]}
    if "warm" in rows:
        commands |= {"graph (warm)": tool, "torch.compile (warm, stage caches off)": [*base, "stage-off"],
                     "torch.compile (warm, all caches)": [*base, "default"]}
    if "help" in rows:
        commands |= {"tritoninspect --help": [py, "-m", "tritoninspect", "--help"],
                     "import torch": [py, "-c", "import torch"]}
    runs = FreshRuns(commands, warm=tuple(name for name in commands if "(warm" in name))
    runs.run(args.repeat)
    print()
    runs.print_table()
    print()
    runs.print_commands()
    print()
    cold_target = GRAPH_TARGET_GPU if device == "cuda" else GRAPH_TARGET
    over = report_rows(runs.wall, rows, cold_target)
    print("\nthe same ratios in CPU time (user+sys of each process and its children; steadier on a busy machine):")
    report_rows(runs.cpu, rows, cold_target)
    if "plain" in rows:
        print("\npeak RSS (the largest process of each run's tree, MiB):")
        over.append(report_ratio("graph / plain torch.compile, peak RSS", runs.rss["graph (cold)"],
                                 runs.rss["plain torch.compile (cold)"], RSS_TARGET))
    return 1 if args.check and any(over) else 0


def report_rows(times: dict[str, list[float]], rows: set[str], cold_target: float) -> list[bool]:
    """Print each ratio; True for each one over its target."""
    over = []
    if "cold" in rows:
        over.append(report_ratio("graph / torch.compile, cold caches", times["graph (cold)"],
                                 times["torch.compile (cold)"], cold_target))
    if "warm" in rows:
        over.append(report_ratio("graph / torch.compile, warm caches (same work)", times["graph (warm)"],
                                 times["torch.compile (warm, stage caches off)"], WARM_TARGET))
        report_ratio("graph / torch.compile, warm, all caches (information only)", times["graph (warm)"],
                     times["torch.compile (warm, all caches)"], None)
    if "plain" in rows:
        over.append(report_ratio("graph / plain torch.compile, cold caches", times["graph (cold)"],
                                 times["plain torch.compile (cold)"], cold_target))
    if "help" in rows:
        over.append(report_ratio("--help / import torch", times["tritoninspect --help"], times["import torch"],
                                 HELP_TARGET))
    return over


# --- the baseline process ------------------------------------------------------------------------


def run_baseline(sample_path: str, device: str, caches: str = "default") -> int:
    """Plain torch.compile of the sample's Net, called on each of its input sets (a child process).
    `caches`: "default" (torch's own settings), "stage-off" (the stage caches the tool turns off),
    or "plain": torch's own settings and nothing of the tool's (no compile-only mode on a CPU)."""
    import contextlib

    import torch

    if caches == "stage-off":
        from tritoninspect.capture.compat.caches import stage_cache_patches

        for config, name, value in stage_cache_patches():
            setattr(config, name, value)
    mode = contextlib.nullcontext()
    plain = caches == "plain"
    if device == "cpu" and not plain:
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
        compiled = torch.compile(model) if device == "cuda" or plain else torch.compile(model, backend=_interpreting_inductor)
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
