"""Make a two-rank TORCH_TRACE (tests/fixtures/traces/ranks/): one log per rank of a gloo job.

    python tools/make_rank_trace.py [--out DIR] [--device cpu|cuda]

`torchrun --nproc-per-node 2` runs this file's `--child` part on two processes with the
gloo backend and TORCH_TRACE set (with --device cuda both ranks share the first GPU): each rank joins the group,
all-reduces a tensor, and calls `torch.compile(Net())` of samples/recompile_constexpr.py
(plain Inductor, compile-only mode on a CPU-only machine, as tools/make_trace_fixtures.py
does). Rank 0 calls it on 40 elements; rank 1 on 40 then 100, so rank 1 recompiles and
rank 0 does not: the difference `graph DIR` should report. torch names each log
`dedicated_log_torch_trace_rank_<r>_*.log`.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))


def child(device: str) -> None:
    import torch
    import torch.distributed as dist

    from tritoninspect.capture.session import compile_only

    # gloo on CPU tensors in both modes: the GPU machine may have a single GPU, which both
    # ranks then share for their compiled model.
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    ones = torch.ones(1)
    dist.all_reduce(ones)
    mode = compile_only() if device == "cpu" else contextlib.nullcontext()
    with mode:
        spec = importlib.util.spec_from_file_location("recompile_constexpr", REPO / "samples" / "recompile_constexpr.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if device == "cpu":
            os.environ["TRITON_INTERPRET"] = "1"
        compiled = torch.compile(module.Net())
        sizes = (40,) if rank == 0 else (40, 100)
        with torch.no_grad():
            for n in sizes:
                compiled(torch.randn(n, device=device))
    dist.barrier()
    dist.destroy_process_group()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "tests" / "fixtures" / "traces" / "ranks")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--timeout", type=float, default=900, help="seconds for the whole job")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.device)
        return 0
    from make_trace_fixtures import scrub, trim

    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob("*.log"):
        old.unlink()
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TORCH_TRACE": str(args.out), "TORCHINDUCTOR_CACHE_DIR": cache,
               "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1", "PYTHONPATH": str(REPO)}
        env.pop("TRITON_INTERPRET", None)
        command = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                   str(Path(__file__).resolve()), "--child", "--device", args.device]
        try:
            proc = subprocess.run(command, cwd=REPO, env=env, timeout=args.timeout)
        except subprocess.TimeoutExpired:  # torchrun is killed (and with it its workers)
            proc = subprocess.CompletedProcess(command, 124)
    for log in args.out.glob("*.log"):
        log.write_text(trim(scrub(log.read_text())))
    print(f"exit {proc.returncode}; logs: {sorted(p.name for p in args.out.glob('*.log'))}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
