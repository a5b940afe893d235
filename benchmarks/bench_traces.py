"""How fast does `tritoninspect graph` read TORCH_TRACE logs, against tlparse reading the same?

Ratios measured in this run, medians of --repeat fresh processes, the two sides
alternating (run i of both before run i+1 of either):

  small   `tritoninspect graph LOG --json`   vs `tlparse LOG -o OUT --overwrite --no-browser`   (1.4 MiB log)
  big     the same on a log of --mib MiB (100: a job that compiled thousands of frames)
  ranks   `tritoninspect graph DIR --json`   vs `tlparse DIR --all-ranks-html -o OUT --overwrite --no-browser`
          (a folder of --ranks logs of 1.4 MiB, one job)

The logs are generated here, before timing, by benchmarks/make_traces.py from the real logs
in tests/fixtures/traces/ (nothing committed). Wall time, CPU time (user+sys) and peak RSS
(ru_maxrss from wait4: the largest single process of the run's tree, so for parallel ranks
the biggest worker, not their sum) are printed for every side. tlparse is the Rust binary
of the `tlparse` package (pip install tlparse==0.4.3). Targets: every ratio <= 1.00.

With --devices N the ranks ran N GPUs to a node (make_traces.py --devices): with 64, no two ranks
share a payload that names a device, so none is parsed once for several ranks.

Usage: python benchmarks/bench_traces.py [--repeat 3] [--big-repeat 1] [--mib 100] [--ranks 64] [--devices 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_traces  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TARGET = 1.00


class Side:
    def __init__(self, name: str, cmd: list[str]) -> None:
        self.name, self.cmd = name, cmd
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self.rss: list[float] = []  # MiB


def run_once(side: Side, env: dict[str, str], out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    proc = subprocess.Popen(side.cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        sys.exit(f"failed (exit {proc.returncode}): {' '.join(side.cmd)}\n{err[-3000:]}")
    side.wall.append(elapsed)
    side.cpu.append(usage.ru_utime + usage.ru_stime)
    side.rss.append(usage.ru_maxrss / 1024)


def measure(label: str, ours: Side, theirs: Side, repeat: int, env: dict[str, str], out: Path,
            warm: bool) -> str:
    if warm:  # untimed: fills the shared .pyc cache, as an install has its .pyc files
        run_once(ours, env, out)
        run_once(theirs, env, out)
        for side in (ours, theirs):
            side.wall.clear(), side.cpu.clear(), side.rss.clear()
    for _ in range(repeat):
        run_once(ours, env, out)
        run_once(theirs, env, out)
    med = {s.name: (statistics.median(s.wall), statistics.median(s.cpu), statistics.median(s.rss))
           for s in (ours, theirs)}
    (w1, c1, r1), (w2, c2, r2) = med[ours.name], med[theirs.name]
    ratio = w1 / w2
    for s in (ours, theirs):
        print(f"  {s.name}: wall runs {' '.join(f'{t:.2f}' for t in s.wall)}; cpu {' '.join(f'{t:.2f}' for t in s.cpu)}; "
              f"peak RSS MiB {' '.join(f'{r:.0f}' for r in s.rss)}")
    print(f"{label}: {ratio:.2f} wall, {c1 / c2:.2f} CPU, {r1 / r2:.2f} peak RSS (target wall <= {TARGET:.2f}) "
          f"{'OVER' if ratio > TARGET else 'OK'}")
    return (f"| {label} | {w1:.2f} s | {w2:.2f} s | {ratio:.2f} | {c1 / c2:.2f} | {r1:.0f} MiB | {r2:.0f} MiB | "
            f"≤ {TARGET:.2f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per side, small log")
    parser.add_argument("--big-repeat", type=int, default=1, help="timed runs per side, big log and ranks")
    parser.add_argument("--mib", type=float, default=100)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--rank-mib", type=float, default=1.4)
    parser.add_argument("--devices", type=int, default=1, help="GPUs a node for the ranks (make_traces.py)")
    parser.add_argument("--only", choices=("small", "big", "ranks"), action="append")
    parser.add_argument("--keep", type=Path, help="generate the logs here and keep them (reused when present)")
    args = parser.parse_args()
    tlparse = shutil.which("tlparse")
    if tlparse is None:
        sys.exit("no tlparse on PATH: pip install tlparse==0.4.3")
    version = subprocess.run([tlparse, "--version"], capture_output=True, text=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="bench-traces-"))
    data = args.keep or work / "data"
    try:
        if not (data / "big").is_dir():
            make_traces.make(data, args.mib, args.ranks, args.rank_mib, args.devices)
            make_traces.small(data)
        small = next((data / "small").glob("*.log"))
        big = next((data / "big").glob("*.log"))
        ranks = data / "ranks"
        env = {**os.environ, "PYTHONPYCACHEPREFIX": str(work / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        load = os.getloadavg()
        print(f"{platform.node()}: {os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
              f"{version}; python {platform.python_version()}")
        mib = lambda p: sum(f.stat().st_size for f in ([p] if p.is_file() else p.iterdir())) / (1 << 20)  # noqa: E731
        py, out = sys.executable, work / "tl_out"
        rows = []
        cases = [
            ("small", f"`graph LOG --json` vs `tlparse LOG`, one log of {mib(small):.1f} MiB", small, [], args.repeat),
            ("big", f"`graph LOG --json` vs `tlparse LOG`, one log of {mib(big):.0f} MiB", big, [], args.big_repeat),
            ("ranks", f"`graph DIR --json` vs `tlparse DIR --all-ranks-html`, {args.ranks} ranks, {mib(ranks):.0f} MiB"
                      + (f", {args.devices} devices" if args.devices > 1 else ""),
             ranks, ["--all-ranks-html"], args.big_repeat),
        ]
        for i, (key, label, target, extra, repeat) in enumerate(cases):
            if args.only and key not in args.only:
                continue
            ours = Side("tritoninspect", [py, "-m", "tritoninspect", "graph", str(target), "--json"])
            theirs = Side("tlparse", [tlparse, str(target), *extra, "-o", str(out), "--overwrite", "--no-browser"])
            print(f"\n{label}\n  {' '.join(ours.cmd)}\n  {' '.join(theirs.cmd)}")
            rows.append(measure(label, ours, theirs, repeat, env, out, warm=not rows))
        load = os.getloadavg()
        print(f"\nload average after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}\n")
        print("| what | tritoninspect | tlparse | ratio (wall) | ratio (CPU) | peak RSS | tlparse peak RSS | target |")
        print("|---|---|---|---|---|---|---|---|")
        print("\n".join(rows))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
