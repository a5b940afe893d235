"""One side of `tritoninspect diff`: a saved report, or a target captured (and timed) in a fresh child.

Each target is captured by `python -m tritoninspect.side` in its own process,
so the two compiles share no Dynamo or Inductor state (compile ids, the kernel
side table, in-memory caches, imported modules) and both start clean. The child
writes one JSON payload to a file the parent names:
`{"report": <report>, "bench": <SideBench> | null}` on success, or
`{"error": {"type", "message", "exit_code", "hint", "user_traceback"}}`.
The parent turns an error payload back into the typed error, so `diff` exits
with the same code `graph` would.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tritoninspect import errors
from tritoninspect.diff_report import DiffReport, SideBench, side_bench_from_dict
from tritoninspect.errors import CaptureError, ReportError, TritonInspectError, UserCodeError
from tritoninspect.report import Report, read_report

#: The directory holding the `tritoninspect` package, put on the child's PYTHONPATH
#: so a checkout run without installing (PYTHONPATH=.) works in the child too.
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[1])


@dataclass(frozen=True)
class CaptureOptions:
    """The capture options both sides share (inputs may differ per side)."""

    device: str = "auto"
    dynamic: bool = False
    backward: bool | None = None
    stage: str = "inductor"
    bench: bool = False


@dataclass(frozen=True)
class SideResult:
    report: Report
    bench: SideBench | None
    #: As given: the target spec or the report path.
    source: str
    saved: bool
    #: How the child measured run times (tritoninspect.bench.METHOD), with --bench.
    bench_method: str = ""


def is_saved_report(source: str) -> bool:
    """A side given as `*.json` is a saved report; anything else a target."""
    return source.endswith(".json")


def get_side(
    label: str, source: str, *, inputs: str | None, options: CaptureOptions, debug: bool = False
) -> SideResult:
    """A saved report as it is, or a target captured in a fresh process."""
    if is_saved_report(source):
        return load_side(label, source)
    return capture_side(label, source, inputs=inputs, options=options, debug=debug)


def build_diff(a: SideResult, b: SideResult, *, context: int = 3) -> DiffReport:
    """The diff of two sides, with their timings when both were benchmarked."""
    from tritoninspect.analyse.diff import bench_pair, diff_reports

    bench = None
    if a.bench is not None and b.bench is not None:
        meta = a.report.meta
        bench = bench_pair(meta.mode, meta.device, a.bench_method or b.bench_method, a.bench, b.bench)
    return diff_reports(a.report, b.report, sources=(a.source, b.source), saved=(a.saved, b.saved),
                        bench=bench, context=context)


#: The files `--save DIR` writes.
SAVED_NAMES = ("A.json", "B.json")


def check_save_dir(directory: Path) -> None:
    """Raise ValueError if `save_reports` would have to overwrite something that is
    not a tritoninspect report, or `directory` is not a directory."""
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"--save: {directory} exists and is not a directory")
    for name in SAVED_NAMES:
        path = directory / name
        if path.exists() and not _is_report_file(path):
            raise ValueError(f"--save: {path} exists and is not a tritoninspect report; choose another directory")


def _is_report_file(path: Path) -> bool:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("meta"), dict) and data["meta"].get("tool") == "tritoninspect"


def save_reports(directory: Path, a: SideResult, b: SideResult) -> list[Path]:
    """Write each side's report as DIR/A.json and DIR/B.json (the directory is made if needed)."""
    check_save_dir(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, result in zip(SAVED_NAMES, (a, b)):
        path = directory / name
        path.write_text(result.report.to_json() + "\n")
        written.append(path)
    return written


def load_side(label: str, source: str) -> SideResult:
    """Read a saved report (no compile, no GPU)."""
    try:
        report = read_report(source)
    except ReportError as exc:
        raise ReportError(f"{label}: {exc.message}", hint=exc.hint) from exc
    return SideResult(report, None, source, saved=True)


def capture_side(
    label: str, target: str, *, inputs: str | None, options: CaptureOptions, debug: bool = False
) -> SideResult:
    """Capture `target` in a fresh `python -m tritoninspect.side` process."""
    with tempfile.TemporaryDirectory(prefix="tritoninspect-side-") as tmp:
        out = Path(tmp) / "side.json"
        # With --debug the child's output goes to our stderr as it comes; stdout stays clean for --json.
        proc = subprocess.run(
            child_command(target, out, inputs=inputs, options=options, debug=debug), env=_child_env(),
            stdout=sys.stderr.fileno() if debug else subprocess.PIPE,
            stderr=None if debug else subprocess.PIPE, text=True,
        )
        payload = _read_payload(out)
    if payload is None or ("report" not in payload and "error" not in payload):
        raise CaptureError(
            f"{label}: the capture process for {target} ended (exit {proc.returncode}) without a result"
            + _tail(proc.stderr or ""),
            hint="rerun with --debug to see its output",
        )
    if "error" in payload:
        raise error_from_payload(label, target, payload["error"])
    bench = side_bench_from_dict(payload["bench"]) if payload.get("bench") else None
    return SideResult(Report.from_dict(payload["report"]), bench, target, saved=False,
                      bench_method=str(payload.get("bench_method") or ""))


def child_command(
    target: str, out: Path, *, inputs: str | None, options: CaptureOptions, debug: bool
) -> list[str]:
    """The argv of one capture child."""
    cmd = [sys.executable, "-m", "tritoninspect.side", target, "--out", str(out),
           "--device", options.device, "--stage", options.stage]
    if inputs is not None:
        cmd += ["--inputs", inputs]
    if options.dynamic:
        cmd.append("--dynamic")
    if options.backward is not None:
        cmd.append("--backward" if options.backward else "--no-backward")
    if options.bench:
        cmd.append("--bench")
    if debug:
        cmd.append("--debug")
    return cmd


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


#: Error types a child may report, by class name.
_ERRORS: dict[str, type[TritonInspectError]] = {
    cls.__name__: cls
    for cls in vars(errors).values()
    if isinstance(cls, type) and issubclass(cls, TritonInspectError)
}


def error_from_payload(label: str, target: str, data: dict[str, Any]) -> TritonInspectError:
    """The child's typed error, rebuilt in the parent, its message naming the side."""
    message = f"{label} ({target}): {data.get('message', 'capture failed')}"
    hint = data.get("hint")
    cls = _ERRORS.get(str(data.get("type")), CaptureError)
    if issubclass(cls, UserCodeError):
        return UserCodeError(message, user_traceback=data.get("user_traceback") or "", hint=hint)
    return cls(message, hint=hint)


# --- the child -------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tritoninspect.side", description="internal: one side of a diff")
    p.add_argument("target")
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--inputs")
    p.add_argument("--device", default="auto")
    p.add_argument("--stage", default="inductor")
    p.add_argument("--dynamic", action="store_true")
    p.add_argument("--backward", dest="backward", action="store_true", default=None)
    p.add_argument("--no-backward", dest="backward", action="store_false")
    p.add_argument("--bench", action="store_true")
    p.add_argument("--debug", action="store_true")
    return p


def run_child(args: argparse.Namespace) -> dict[str, Any]:
    """Capture (and time) the target; the payload to write."""
    from tritoninspect.analyse.diff import backend_seconds
    from tritoninspect.bench import METHOD, bench_target
    from tritoninspect.run import capture_target
    from tritoninspect.spec import parse_spec

    spec = parse_spec(args.target)
    report = capture_target(spec, inputs=args.inputs, device=args.device, dynamic=args.dynamic,
                            backward=args.backward, stage=args.stage)
    bench = None
    if args.bench:
        bench = bench_target(spec, inputs=args.inputs, mode=report.meta.mode, dynamic=args.dynamic,
                             backward=args.backward, compile_s=backend_seconds(report))
    return {"report": report.to_dict(), "bench": asdict(bench) if bench is not None else None,
            "bench_method": METHOD if bench is not None else None}


def _error_payload(exc: TritonInspectError) -> dict[str, Any]:
    return {"error": {
        "type": type(exc).__name__, "message": exc.message, "exit_code": int(exc.exit_code), "hint": exc.hint,
        "user_traceback": getattr(exc, "user_traceback", None),
    }}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the child: always writes a payload to --out, returns the exit code."""
    from tritoninspect.capture.scratch import scratch_inductor_cache

    args = _parser().parse_args(argv)
    try:
        # Before torch is imported: what Inductor writes goes to a directory removed after.
        with scratch_inductor_cache():
            payload = run_child(args)
        code = 0
    except TritonInspectError as exc:
        payload, code = _error_payload(exc), int(exc.exit_code)
    except Exception as exc:  # noqa: BLE001 - a bug of ours: reported, not a traceback in the void
        if args.debug:
            traceback.print_exc()
        internal = CaptureError(f"internal error: {type(exc).__name__}: {exc}", hint="rerun with --debug and report it")
        payload, code = _error_payload(internal), int(internal.exit_code)
    args.out.write_text(json.dumps(payload, default=str))
    return code


if __name__ == "__main__":
    sys.exit(main())
