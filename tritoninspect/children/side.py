"""The parent half of a diff side: a saved report as it is, or a target captured in a fresh child.

See the package docstring for the request and answer the child exchanges with us.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tritoninspect.model.diff_report import DiffReport, SideBench, side_bench_from_dict
from tritoninspect.model.errors import CaptureError, ReportError, TimeoutProblem, TritonInspectError, error_from_dict
from tritoninspect.model.report import Diagnostic, Report
from tritoninspect.run.acquire import acquire
from tritoninspect.source.parse import SavedReport, Source, TargetSpec

if TYPE_CHECKING:
    from tritoninspect.run.pipeline import CaptureOptions

#: The directory holding the `tritoninspect` package, put on the child's PYTHONPATH
#: so a checkout run without installing (PYTHONPATH=.) works in the child too.
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[2])

#: The capture children of the `in_parallel` call running in this context, so it can end them all.
_RUNNING: contextvars.ContextVar[set[subprocess.Popen[str]] | None] = contextvars.ContextVar(
    "tritoninspect_side_children", default=None)

#: Hears each stage a side's capture starts: (side label, stage).
SideProgress = Callable[[str, str], None]

T = TypeVar("T")

#: The files `--save DIR` writes for two sides (more sides: C.json, D.json, ...).
SAVED_NAMES = ("A.json", "B.json")


def side_labels(count: int) -> tuple[str, ...]:
    """"A", "B", "C", ... for `count` sides (A is the one the others are compared with)."""
    return tuple(chr(ord("A") + i) for i in range(count))


@dataclass(frozen=True)
class SideResult:
    report: Report
    bench: SideBench | None
    #: As given: the target spec or the report path.
    source: str
    saved: bool
    #: How the child measured run times (children.bench.METHOD), with --bench.
    bench_method: str = ""
    #: When its capture ran (time.monotonic() at start and end); None for a saved side.
    span: tuple[float, float] | None = None


def get_side(label: str, source: Source, *, options: CaptureOptions, bench: bool = False, debug: bool = False,
             timeout: float | None = None, progress: SideProgress | None = None) -> SideResult:
    """A saved report or a trace's one log as it is, or a model captured in a fresh process (ended
    after `timeout` s); `progress(label, stage)` hears each stage the capture starts."""
    if isinstance(source, TargetSpec):
        on_stage = None if progress is None else functools.partial(progress, label)
        return capture_side(label, source.text, options=options, bench=bench, debug=debug, timeout=timeout,
                            on_stage=on_stage)
    try:
        return SideResult(acquire(source, options), None, source.text, saved=True)
    except ReportError as exc:
        if isinstance(source, SavedReport):  # say which side's file it is
            raise ReportError(f"{label}: {exc.message}", hint=exc.hint) from exc
        raise


def get_sides(sources: Sequence[Source], options: Sequence[CaptureOptions], *, jobs: int, bench: bool = False,
              debug: bool = False, timeout: float | None = None,
              progress: SideProgress | None = None) -> list[SideResult]:
    """Every side, in order: saved ones read, targets captured in fresh processes, `jobs` at a time.

    Each capture is its own child process; a thread per running child only waits for it.
    The first side's error (in order) is raised once every started capture has ended.
    """
    labels = side_labels(len(sources))
    extra = {} if progress is None else {"progress": progress}
    calls = [functools.partial(get_side, label, source, options=opts, bench=bench, debug=debug, timeout=timeout,
                               **extra)
             for label, source, opts in zip(labels, sources, options)]
    return in_parallel(calls, jobs=jobs)


def in_parallel(calls: Sequence[Callable[[], T]], *, jobs: int) -> list[T]:
    """Each call's result, in order, `jobs` calls at a time (each in a thread that only waits for
    its capture child). The first exception (in order) is raised once every started call has
    ended; on it, or on Ctrl-C, the calls not started never start and the running children end."""
    from concurrent.futures import ThreadPoolExecutor

    running: set[subprocess.Popen[str]] = set()
    token = _RUNNING.set(running)
    try:
        context = contextvars.copy_context()  # each task sees `running`, to register its child in
    finally:
        _RUNNING.reset(token)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(context.copy().run, call) for call in calls]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()  # not started yet: never started
            for proc in list(running):
                proc.kill()  # Ctrl-C or a failed side: the other captures end now, as one capture would
            raise


def capture_side(label: str, target: str, *, options: CaptureOptions, bench: bool = False,
                 debug: bool = False, timeout: float | None = None,
                 on_stage: Callable[[str], None] | None = None, cwd: Path | None = None) -> SideResult:
    """Capture `target` in a fresh `python -m tritoninspect.children.side_child` process (`on_stage`
    hears each stage it starts), run in `cwd` (default: ours), which a relative target is read from."""
    request = {"target": target, "options": dataclasses.asdict(options), "bench": bench, "debug": debug}
    started = time.monotonic()
    extra: dict[str, Any] = {} if on_stage is None else {"on_stage": on_stage}
    if cwd is not None:
        extra["cwd"] = cwd
    try:
        payload, returncode, stderr = run_child(request, debug=debug, timeout=timeout, **extra)
    except subprocess.TimeoutExpired as exc:
        raise TimeoutProblem(f"{label}: the capture of {target} did not finish within {timeout:g} s") from exc
    if payload is None or ("report" not in payload and "error" not in payload):
        raise CaptureError(
            f"{label}: the capture process for {target} ended (exit {returncode}) without a result" + _tail(stderr),
            hint="rerun with --debug to see its output",
        )
    if "error" in payload:
        raise error_from_payload(label, target, payload["error"])
    if on_stage is not None:
        on_stage(f"done ({time.monotonic() - started:.1f} s)")
    side_bench = side_bench_from_dict(payload["bench"]) if payload.get("bench") else None
    return SideResult(Report.from_dict(payload["report"]), side_bench, target, saved=False,
                      bench_method=str(payload.get("bench_method") or ""), span=(started, time.monotonic()))


def run_child(request: dict[str, Any], *, debug: bool = False, timeout: float | None = None,
              on_stage: Callable[[str], None] | None = None,
              cwd: Path | None = None) -> tuple[dict[str, Any] | None, int, str]:
    """Run one child on `request`: its answer (None if it wrote none), exit code and stderr.
    Past `timeout` seconds the child is killed (subprocess.TimeoutExpired), as on Ctrl-C.
    `on_stage` hears each stage the child starts (it writes them to a file we read as it runs)."""
    with tempfile.TemporaryDirectory(prefix="tritoninspect-side-") as tmp:
        request_file, out = Path(tmp) / "request.json", Path(tmp) / "side.json"
        stages = _StageFile(Path(tmp) / "stages.txt", on_stage) if on_stage is not None else None
        request_file.write_text(json.dumps({**request, "stages": str(stages.path)} if stages else request))
        # With --debug the child's output goes to our stderr as it comes; stdout stays clean for --json.
        with subprocess.Popen(
            child_command(request_file, out), env=_child_env(), cwd=cwd,
            stdout=sys.stderr.fileno() if debug else subprocess.PIPE,
            stderr=None if debug else subprocess.PIPE, text=True,
        ) as proc:
            running = _RUNNING.get()
            if running is not None:
                running.add(proc)
            try:
                stderr = _wait(proc, timeout, stages)
            except BaseException:  # a timeout (or Ctrl-C): the child ends with us, as subprocess.run does
                proc.kill()
                proc.wait()
                raise
            finally:
                if running is not None:
                    running.discard(proc)
        return _read_payload(out), proc.returncode, stderr or ""


def _wait(proc: subprocess.Popen[str], timeout: float | None, stages: _StageFile | None) -> str:
    """The child's stderr once it ends; its stages passed on meanwhile (read every 0.2 s)."""
    if stages is None:
        return proc.communicate(timeout=timeout)[1]
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        # communicate() may be called again after its timeout: nothing read so far is lost.
        left = 0.2 if deadline is None else max(0.0, min(0.2, deadline - time.monotonic()))
        try:
            stderr = proc.communicate(timeout=left)[1]
            stages.read()
            return stderr
        except subprocess.TimeoutExpired:
            stages.read()
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(proc.args, timeout or 0.0) from None


class _StageFile:
    """The stages a child wrote to `path`, one a line, passed to `on_stage` as they appear."""

    def __init__(self, path: Path, on_stage: Callable[[str], None]) -> None:
        self.path, self.on_stage, self.offset = path, on_stage, 0

    def read(self) -> None:
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return
        complete = data[:data.rfind(b"\n") + 1]  # a line still being written waits for the next read
        self.offset += len(complete)
        for line in complete.decode("utf-8", "replace").splitlines():
            if line.strip():
                self.on_stage(line)


def child_command(request: Path, out: Path) -> list[str]:
    """The argv of one capture child."""
    return [sys.executable, "-m", "tritoninspect.children.side_child", str(request), str(out)]


def error_from_payload(label: str, target: str, data: dict[str, Any]) -> TritonInspectError:
    """The child's typed error, rebuilt in the parent, its message naming the side."""
    return error_from_dict(data, prefix=f"{label} ({target}): ")


def build_diff(a: SideResult, b: SideResult, *more: SideResult, context: int = 3) -> DiffReport:
    """The diff of A with B (and, in `others`, with each further side), with timings where both were benchmarked."""
    labels = side_labels(2 + len(more))
    shared = contended((a, b, *more))
    first = _pair(a, b, (labels[0], labels[1]), context=context, parallel=shared[0] or shared[1])
    others = tuple(_pair(a, side, (labels[0], label), context=context, parallel=shared[0] or busy)
                   for side, label, busy in zip(more, labels[2:], shared[2:]))
    return dataclasses.replace(first, others=others) if others else first


def contended(sides: Sequence[SideResult]) -> list[bool]:
    """Per side: its capture overlapped another side's in time (`--jobs` above 1), so the two
    shared the CPU and its compile time is not comparable with a capture that ran alone. A saved
    side says so itself: `save_reports` noted it (`CONTENDED_NOTE`)."""
    spans = [s.span for s in sides]
    return [(span is not None and any(other is not None and j != i and span[0] < other[1] and other[0] < span[1]
                                      for j, other in enumerate(spans)))
            or (sides[i].saved and was_contended(sides[i].report))
            for i, span in enumerate(spans)]


#: The note `save_reports` gives a side whose capture overlapped another's (source "diff").
CONTENDED_NOTE = ("captured while another side of the same diff compiled (diff -j above 1, sharing the CPU): its "
                  "compile time is not comparable with a capture that ran alone, so a diff of it gives no "
                  "compile-time ratio")


def was_contended(report: Report) -> bool:
    """The saved report's capture overlapped another side's (`CONTENDED_NOTE`)."""
    return any(d.source == "diff" and d.message == CONTENDED_NOTE for d in report.diagnostics)


def _pair(a: SideResult, b: SideResult, labels: tuple[str, str], *, context: int, parallel: bool = False) -> DiffReport:
    from tritoninspect.analyse.diff import bench_pair, diff_reports

    bench = None
    if a.bench is not None and b.bench is not None:
        meta = a.report.meta
        bench = bench_pair(meta.mode, meta.device, a.bench_method or b.bench_method, a.bench, b.bench)
    return diff_reports(a.report, b.report, sources=(a.source, b.source), saved=(a.saved, b.saved),
                        bench=bench, context=context, labels=labels, parallel=parallel)


def check_save_dir(directory: Path, count: int = 2) -> None:
    """Raise ValueError if `save_reports` would have to overwrite something that is
    not a tritoninspect report, or `directory` is not a directory."""
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"--save: {directory} exists and is not a directory")
    for label in side_labels(count):
        path = directory / f"{label}.json"
        if path.exists() and not _is_report_file(path):
            raise ValueError(f"--save: {path} exists and is not a tritoninspect report; choose another directory")


def save_reports(directory: Path, *sides: SideResult) -> list[Path]:
    """Write each side's report as DIR/A.json, DIR/B.json, ... (the directory is made if needed)."""
    check_save_dir(directory, len(sides))
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for label, result, busy in zip(side_labels(len(sides)), sides, contended(sides)):
        path = directory / f"{label}.json"
        report = result.report
        if busy and not was_contended(report):
            # A later `diff A.json B.json` must withhold the compile-time ratio as the live diff did.
            note = Diagnostic("note", "diff", CONTENDED_NOTE)
            report = dataclasses.replace(report, diagnostics=(*report.diagnostics, note))
        path.write_text(report.to_json() + "\n")
        written.append(path)
    return written


def _is_report_file(path: Path) -> bool:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("meta"), dict) and data["meta"].get("tool") == "tritoninspect"


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_PARENT, env.get("PYTHONPATH")]))
    return env


def _read_payload(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _tail(stderr: str, lines: int = 8) -> str:
    tail = [line for line in stderr.strip().splitlines() if line.strip()][-lines:]
    return (": " + " | ".join(tail)) if tail else ""
