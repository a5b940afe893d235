"""What both benchmarks share: fresh timed processes, the ratio lines, the sample's inputs.

How a process is timed (`FreshRuns`):
  * Fresh compile caches: each timed run gets its own empty TORCHINDUCTOR_CACHE_DIR and
    TRITON_CACHE_DIR, so no side reuses compiled kernels or graphs of an earlier run.
    A command named in `warm` instead keeps one pair of cache dirs of its own for all its
    runs, filled by its untimed first run: a rerun, as a user editing a model makes it.
  * Compiled Python, as installed: all runs share one PYTHONPYCACHEPREFIX, and each command
    runs once untimed first. An install has its .pyc files; a machine whose site-packages
    has none (or is read-only) would otherwise recompile torch's ~2,000 modules from source
    in every process (seen on the GPU machine: 9 of 15 s), drowning the difference measured.
  * Interleaved: run i of every command before run i+1 of any, so a slow spell of a shared
    machine hits all sides.
  * Wall time, and the process tree's CPU time and peak RSS (wait4's rusage) beside it.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent


def bench_arguments(doc: str, *, sample: str, repeat: int,
                    extra: list[tuple[str, dict]] = ()) -> argparse.Namespace:  # type: ignore[assignment]
    """The options both benchmarks take. Unless this is a baseline child, the sample must
    exist, `device` is resolved from auto, `path` is the sample's repo-relative file, and
    the header line has been printed."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--sample", default=sample, help="a file in samples/ without .py, or a path to a .py file")
    parser.add_argument("--repeat", type=int, default=repeat, help="timed fresh processes per command")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--check", action="store_true", help="exit 1 when a ratio is over its target")
    parser.add_argument("--baseline-child", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    for flag, options in extra:
        parser.add_argument(flag, **options)
    args = parser.parse_args()
    if args.baseline_child:
        return args
    args.path = args.sample if args.sample.endswith(".py") else f"samples/{args.sample}.py"
    if not (REPO / args.path).is_file():
        parser.error(f"no sample {REPO / args.path}")
    if args.device == "auto":
        args.device = "cuda" if cuda_available() else "cpu"
    print(f"sample {args.path} · device {args.device} · median of {args.repeat} fresh processes")
    return args


def import_sample(path: str) -> ModuleType:
    """A sample file imported as a module of its own name (in a baseline child)."""
    name = Path(path).stem
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


class FreshRuns:
    """Times commands in fresh processes from the repo root (see the module docstring)."""

    def __init__(self, commands: dict[str, list[str]], warm: tuple[str, ...] = ()) -> None:
        self.commands = commands
        self.wall: dict[str, list[float]] = {name: [] for name in commands}
        self.cpu: dict[str, list[float]] = {name: [] for name in commands}
        #: Peak RSS in MiB (ru_maxrss of wait4: the largest process of the run's tree).
        self.rss: dict[str, list[float]] = {name: [] for name in commands}
        self._pycache = tempfile.mkdtemp(prefix="bench-pycache-")
        #: Command name -> its own cache dir, kept across its runs (see the module docstring).
        self._kept = {name: tempfile.mkdtemp(prefix="bench-warm-cache-") for name in warm}

    def run(self, repeat: int) -> None:
        try:
            for name, cmd in self.commands.items():
                self._once(cmd, self._kept.get(name))  # untimed: fills the .pyc cache (and a kept cache)
            for _ in range(repeat):
                for name, cmd in self.commands.items():
                    elapsed, used, rss = self._once(cmd, self._kept.get(name))
                    self.wall[name].append(elapsed)
                    self.cpu[name].append(used)
                    self.rss[name].append(rss)
        finally:
            for directory in (self._pycache, *self._kept.values()):
                shutil.rmtree(directory, ignore_errors=True)

    def print_table(self) -> None:
        width = max(24, *(len(name) for name in self.commands))
        print(f"{'command':<{width}} {'median s':>9} {'cpu s':>7} {'RSS MiB':>8}   wall runs")
        for name in self.commands:
            runs = " ".join(f"{t:.2f}" for t in self.wall[name])
            print(f"{name:<{width}} {statistics.median(self.wall[name]):9.2f} "
                  f"{statistics.median(self.cpu[name]):7.2f} {statistics.median(self.rss[name]):8.0f}   {runs}")

    def print_commands(self) -> None:
        """The exact command line of each row (run from the repo root)."""
        for name, cmd in self.commands.items():
            caches = "kept cache dirs" if name in self._kept else "fresh cache dirs"
            print(f"  {name}: {shlex.join(cmd)}   ({caches})")

    def _once(self, cmd: list[str], kept: str | None = None) -> tuple[float, float, float]:
        cache = kept or tempfile.mkdtemp(prefix="bench-cache-")
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, "TRITON_CACHE_DIR": os.path.join(cache, "triton"),
               "PYTHONPYCACHEPREFIX": self._pycache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        try:
            with tempfile.TemporaryFile() as err:
                start = time.perf_counter()
                proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=err)
                _, status, usage = os.wait4(proc.pid, 0)
                elapsed = time.perf_counter() - start
                proc.returncode = os.waitstatus_to_exitcode(status)
                err.seek(0)
                stderr = err.read().decode(errors="replace")
        finally:
            if kept is None:
                shutil.rmtree(cache, ignore_errors=True)
        if proc.returncode != 0:  # a failed run is no measurement
            sys.exit(f"failed (exit {proc.returncode}): {' '.join(cmd)}\n{stderr[-3000:]}")
        return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def report_ratio(label: str, measured: list[float], baseline: list[float], target: float | None) -> bool:
    """Print one ratio of medians against its target (None: no target); True when it is over.

    The ratio of the fastest runs is printed beside it: noise on a shared machine only
    adds time, so the best of N estimates each side's own cost; the target is judged on
    the medians all the same (what a user typically waits for)."""
    ratio = statistics.median(measured) / statistics.median(baseline)
    best = min(measured) / min(baseline)
    if target is None:
        print(f"{label}: {ratio:.2f}; best of {len(measured)}: {best:.2f}")
        return False
    over = ratio > target
    print(f"{label}: {_shown(ratio, target)} (target <= {target:.2f}) {'OVER' if over else 'OK'}; "
          f"best of {len(measured)}: {_shown(best, target)}")
    return over


def _shown(ratio: float, target: float) -> str:
    return f"{ratio:.2f}" if round(ratio, 2) != target else f"{ratio:.3f}"  # never "1.05 ... OVER"


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def input_sets(value: object) -> list[tuple]:
    """As the tool reads example_inputs(): a list of tuples is one call per tuple."""
    if isinstance(value, list) and value and all(isinstance(v, (tuple, list)) for v in value):
        return [tuple(v) for v in value]
    return [tuple(value) if isinstance(value, (tuple, list)) else (value,)]


def to_device(value: object, device: str) -> object:
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().to(device).requires_grad_(value.requires_grad)
    return value
