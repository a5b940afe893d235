"""Make TORCH_TRACE logs of the bundled samples with plain `torch.compile` (tests/fixtures/traces/).

    python tools/make_trace_fixtures.py                    # every sample, compile-only mode on this CPU
    python tools/make_trace_fixtures.py add_raw triton_op  # some of them
    python tools/make_trace_fixtures.py tests/assets/failures/shape_mismatch.py   # any target file with a Net
    python tools/make_trace_fixtures.py --out DIR --device cuda   # GPU mode (scripts/gpu-traces)

Each sample runs in a fresh process with `TORCH_TRACE=<out>/<sample>` set before torch is
imported: `torch.compile(Net())` with the default (Inductor) backend, called on each of the
sample's example input sets (forward, then backward where an input requires grad), exactly as a
user's job would, with a private Inductor cache so every graph compiles. On a CPU-only machine
the run is wrapped in tritoninspect's compile-only mode (capture/session.py `compile_only`,
entered before the sample is imported; TRITON_INTERPRET set after it, around the compile,
as the recorder does) so the user kernels trace and the compiled module runs: nothing of
tritoninspect's recorder is installed, so the trace is torch's own.

Repository paths in the logs are made repo-relative (`samples/add_raw.py`) so fixtures do not
leak the checkout's location; timestamps and pids are left as torch wrote them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLES = (
    "add_raw", "autotune", "heuristics", "triton_op", "custom_op", "autograd_function", "triton_op_autograd",
    "graph_break", "dynamic_shapes", "inplace", "inline_asm", "recompile_constexpr", "break_item_grid",
    "break_disabled_dispatch",
)
#: Events and artifacts tritoninspect does not read and tlparse does not need, dropped to keep
#: fixtures small (timing spans, fake-tensor descriptions, guards, config dumps, extra graphs).
DROPPED_EVENTS = frozenset({"chromium_event", "describe_storage", "describe_tensor", "describe_source",
                            "dynamo_cpp_guards_str", "guard_added", "guard_added_fast"})
DROPPED_ARTIFACTS = frozenset({"fx_graph_runnable", "torch._functorch.config", "before_pre_grad_graph",
                               "after_pre_grad_graph", "before_joint_graph", "after_joint_graph",
                               "aot_forward_graph_fw_metadata", "runtime_wrapper_orchestration"})
#: Of `inductor_config`, what tritoninspect reads.
KEPT_INDUCTOR_CONFIG = ("epilogue_fusion_user_defined_triton_kernel", "trace.provenance_tracking_level")
#: compilation_metrics keys holding whole configs (tens of kB each).
DROPPED_METRICS = frozenset({"dynamo_config", "inductor_config", "functorch_config", "compiler_config"})

_CHILD = r"""
import importlib.util, os, sys
sample, device = sys.argv[1], sys.argv[2]
import torch
from tritoninspect.capture.session import compile_only, call_once
import contextlib
mode = compile_only() if device == "cpu" else contextlib.nullcontext()
with mode:
    path = sample if sample.endswith(".py") else os.path.join("samples", sample + ".py")
    sample = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(sample, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[sample] = module
    spec.loader.exec_module(module)
    if device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    inputs = module.example_inputs()
    # As tritoninspect's target loader reads example_inputs(): a list of call tuples, a tuple, or one tensor.
    sets = inputs if isinstance(inputs, list) else [inputs]
    sets = [s if isinstance(s, tuple) else (s,) for s in sets]
    model = module.Net().to(device)
    compiled = torch.compile(model)
    for args in sets:
        args = tuple(a.to(device) if isinstance(a, torch.Tensor) else a for a in args)
        backward = any(getattr(a, "requires_grad", False) for a in args) or any(
            p.requires_grad for p in model.parameters())
        call_once(compiled, args, backward)
"""


def make(sample: str, out: Path, device: str, trimmed: bool = True, provenance: bool = False,
         timeout: float = 600) -> tuple[str, int, str]:
    """Run one sample under TORCH_TRACE=out/sample; return (sample, exit code, stderr tail).
    `provenance`: with Inductor's provenance tracking on (INDUCTOR_PROVENANCE=1)."""
    target = out / Path(sample).stem  # a sample's name, or a target file's (tests/assets/failures/x.py)
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("*.log"):
        old.unlink()
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TORCH_TRACE": str(target), "TORCHINDUCTOR_CACHE_DIR": cache,
               "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}
        env.pop("TRITON_INTERPRET", None)
        if provenance:
            env["INDUCTOR_PROVENANCE"] = "1"
        try:
            proc = subprocess.run([sys.executable, "-c", _CHILD, sample, device], cwd=REPO, env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:  # the child is killed; what it traced so far is kept
            proc = subprocess.CompletedProcess([], 124, "", f"timed out after {timeout:g} s")
    for log in target.glob("*.log"):
        log.write_text(trim(scrub(log.read_text())) if trimmed else scrub(log.read_text()))
    return sample, proc.returncode, proc.stderr[-2000:]


def scrub(text: str) -> str:
    """Repo-relative paths: the checkout's location must not leak into fixtures."""
    return text.replace(str(REPO) + os.sep, "")


def trim(text: str) -> str:
    """The log without DROPPED_* events, artifacts and metrics; every other line as written."""
    out: list[str] = []
    keep = True
    for line in text.splitlines(keepends=True):
        if line.startswith("\t"):
            if keep:
                out.append(line)
            continue
        head, sep, body = line.partition("] {")
        try:
            record = json.loads("{" + body) if sep else None
        except ValueError:
            record = None
        keep = _kept(record)
        if keep and record is not None and "compilation_metrics" in record:
            metrics = record["compilation_metrics"]
            record["compilation_metrics"] = {k: v for k, v in metrics.items() if k not in DROPPED_METRICS}
            if isinstance(metrics.get("inductor_config"), str):  # the settings tritoninspect reads, only
                config = json.loads(metrics["inductor_config"])
                record["compilation_metrics"]["inductor_config"] = json.dumps(
                    {k: config[k] for k in KEPT_INDUCTOR_CONFIG if k in config})
            line = f"{head}] {json.dumps(record)}\n"
        if keep:
            out.append(line)
    return "".join(out)


def _kept(record: dict | None) -> bool:
    if not record:
        return True
    name = next(iter(record))
    if name in DROPPED_EVENTS:
        return False
    return not (name == "artifact" and record[name].get("name") in DROPPED_ARTIFACTS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("samples", nargs="*", default=list(SAMPLES))
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "fixtures" / "traces")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--full", action="store_true", help="keep every event (no trimming)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per sample (its process is killed after)")
    parser.add_argument("--provenance", action="store_true",
                        help="with INDUCTOR_PROVENANCE=1, into OUT/provenance/<sample>")
    args = parser.parse_args()
    failed = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        for sample, rc, err in pool.map(lambda s: make(s, args.out / "provenance" if args.provenance else args.out, args.device,
                                                       not args.full, args.provenance, args.timeout), args.samples):
            print(f"{sample}: {'ok' if rc == 0 else f'exit {rc}'}", flush=True)
            if rc != 0:
                failed += 1
                print(err, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
