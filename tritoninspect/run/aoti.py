"""AOTInductor in a child process (the child: children/aoti_child.py), so that a native crash is a finding.

Building, loading and running an AOTInductor package is native code (a C++ compiler's
output loaded with dlopen, then called): on the H200 (torch 2.11) it ended the whole
`export` run with a SIGSEGV, before any report was written. So the export command exports
in its own process and runs AOTInductor in a child: the child loads the target again in
the same mode, runs it eagerly, exports it the same way (export is deterministic for a
target) and builds, loads and runs the package, writing the stage it enters to a file.
The parent reads back the package record and failure; when the child dies from a signal,
the failure names the stage it was in, the signal, and the tail of the child's stderr
(faulthandler's Python stack), and the export recorded in the parent stays intact.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tritoninspect.analyse.export_hints import NATIVE_CRASH
from tritoninspect.capture.compat import caches, cxx_runtime
from tritoninspect.capture.export import BUILT_FILE_ENV, STAGE_FILE_ENV
from tritoninspect.capture.scratch import has_space, spaceless_temp_parent
from tritoninspect.model.export_records import AotiRecord
from tritoninspect.model.records import Failure

if TYPE_CHECKING:
    from tritoninspect.source.spec import TargetSpec

#: Lines of the child's stderr kept in a crash's failure message (faulthandler's stack is there).
STDERR_TAIL_LINES = 25

#: What each stage was doing, for a crash's message.
_DOING = {"aoti": "while building the package", "aoti_load": "when loaded", "aoti_run": "when run"}


def run_aoti_child(spec: TargetSpec, options: Any, *,
                   device: str) -> tuple[AotiRecord, Failure | None]:
    """Build, load and run the package of `spec` in a child; its record and failure (a crash included).
    `options`: the command's ExportOptions (a dataclass); `device`: the package's device as the report
    names it."""
    # Not under a $TMPDIR with a space in it: the package's C++ build would split the path (scratch.has_space).
    with tempfile.TemporaryDirectory(prefix="tritoninspect-aoti-child-", dir=spaceless_temp_parent()) as tmp:
        directory = Path(tmp)
        request, out, stage_file, built, err = (
            directory / n for n in ("request.json", "out.pickle", "stage", "built.pickle", "stderr"))
        request.write_text(json.dumps({"target": spec.text, "options": dataclasses.asdict(options)}))
        # The child's temp files (its Inductor scratch cache, the package, the C++ compiler's) go in
        # our folder: killed on a timeout or Ctrl-C, it cannot remove them itself, and we do.
        # (Its Inductor cache is a scratch one anyway: capture/scratch.py.)
        scratch = directory / "tmp"
        scratch.mkdir()
        env = {**_child_env(), STAGE_FILE_ENV: str(stage_file), BUILT_FILE_ENV: str(built), "TMPDIR": str(scratch)}
        # ... but the precompiled C++ headers are torch's global ones, shared with the user's own runs.
        headers = caches.precompiled_header_dir()
        if headers is not None and not has_space(headers):  # else the child builds its own, in its scratch
            env[caches.PRECOMPILED_HEADERS_ENV] = headers
        runtime = cxx_runtime.preload_for_package()
        if runtime is not None:
            env = cxx_runtime.with_preload(env, runtime)
        with open(err, "w+b") as stderr:
            proc = subprocess.Popen(child_command(request, out), env=env, stdout=stderr, stderr=stderr)
            code = _wait(proc, stage_file)
            stderr.seek(0)
            text = stderr.read().decode("utf-8", "replace")
        stage = stage_file.read_text().strip() if stage_file.exists() else "aoti"
        if code < 0 or not out.exists():
            partial = pickle.loads(built.read_bytes()) if built.exists() else None
            record, failure = _crashed(code, stage, text, partial or AotiRecord(status="failed", device=device))
        else:
            record, failure = _answer(pickle.loads(out.read_bytes()), device)
        if record.status == "built":
            record.notes.append(runtime_note(runtime))
        return record, failure


def runtime_note(runtime: str | None) -> str:
    """What the report says about the C++ runtime the package was loaded with (compat/cxx_runtime.py)."""
    if runtime is None:
        return ("loaded in a child with its own libstdc++ made global (RTLD_GLOBAL), none preloaded: no C++ compiler "
                "named its libstdc++, or it is older than this process's (if torch's loader crashes in std::regex, "
                "the C++ runtime is the suspect: docs/aoti-load-crash-h200.txt)")
    return (f"loaded in a child with the C++ compiler's libstdc++ preloaded ({cxx_runtime.PRELOAD_ENV}={runtime}): "
            "the package's wrapper .so, built by that compiler, needs its C++ runtime in the global symbol scope "
            "(without it torch's loader crashed in std::regex on the H200: docs/aoti-load-crash-h200.txt)")


def child_command(request: Path, out: Path) -> list[str]:
    # -X faulthandler: a fatal signal prints the Python stack of every thread to stderr.
    return [sys.executable, "-X", "faulthandler", "-m", "tritoninspect.children.aoti_child", str(request), str(out)]


#: Seconds between two looks at the child's stage file (for the progress display).
_POLL_S = 0.5


def _wait(proc: subprocess.Popen[bytes], stage_file: Path | None = None) -> int:
    """The child's exit code; meanwhile each stage it enters goes to the progress display."""
    from tritoninspect.capture.export import STAGE_PROGRESS
    from tritoninspect.capture.progress import stage

    stage("AOTInductor (child process): loading the target, running and exporting it again")
    seen = None
    try:
        while True:
            try:
                return proc.wait(timeout=_POLL_S)
            except subprocess.TimeoutExpired:
                current = _read_stage(stage_file)
                if current and current != seen and current in STAGE_PROGRESS and current.startswith("aoti"):
                    seen = current
                    stage(STAGE_PROGRESS[current])
    finally:  # a timeout (SIGALRM in the parent) or Ctrl-C: the child ends with us
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _read_stage(stage_file: Path | None) -> str | None:
    try:
        return stage_file.read_text().strip() if stage_file is not None else None
    except OSError:
        return None


def _child_env() -> dict[str, str]:
    # As children/side.py: the child imports this very copy of tritoninspect.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                      env.get("PYTHONPATH")]))
    return env


def crash_failure(code: int, stage: str, stderr: str) -> Failure:
    """The failure of a child that died (`code` < 0: killed by signal -code) in `stage`."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        what = f"signal {-code} ({name})"
    else:
        what = f"exit code {code} and no answer"
    subject = "the package" if stage in ("aoti_load", "aoti_run") else "AOTInductor"
    doing = _DOING.get(stage, f"in stage {stage}")
    tail = _stack_tail(stderr)
    message = f"{subject} crashed with {what} {doing}\n(in a child process: the exported program is intact)"
    if tail:
        message += "\nlast lines of its stderr (faulthandler's stack when it crashed):\n" + "\n".join(tail)
    return Failure(stage=stage, compile_id=None, part="", exc_type=NATIVE_CRASH, message=message)


def _stack_tail(stderr: str) -> list[str]:
    """The end of the child's stderr; of faulthandler's dump, the crashing thread's stack first
    ("Current thread ..."), not the helper threads' (stdout_guard's drain thread)."""
    lines = [line for line in stderr.rstrip().splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if line.startswith("Current thread")]
    if starts:
        fatal = [line for line in lines[:starts[-1]] if line.startswith("Fatal Python error")][-1:]
        lines = fatal + lines[starts[-1]:]
    return lines[:STDERR_TAIL_LINES] if starts else lines[-STDERR_TAIL_LINES:]


def _crashed(code: int, stage: str, stderr: str, record: AotiRecord) -> tuple[AotiRecord, Failure]:
    """`record`: what the child wrote once the package was built (its files and code), if it got there."""
    if stage in ("aoti_load", "aoti_run"):
        record.loaded = stage == "aoti_run"
    else:
        record.status = "failed"
    return record, crash_failure(code, stage, stderr)


def _answer(answer: dict[str, Any], device: str) -> tuple[AotiRecord, Failure | None]:
    if answer.get("error"):  # the child could not even get to AOTInductor (a typed error of ours)
        return AotiRecord(status="failed", device=device), Failure(
            stage="aoti", compile_id=None, part="", exc_type="ChildError", message=answer["error"])
    record = answer["aoti"] or AotiRecord(status="failed", device=device)
    failure = answer["failure"]
    if failure is not None and failure.stage in ("eager", "export"):
        # The parent's own eager run and export succeeded: the child's differ (a non-deterministic target).
        failure = dataclasses.replace(failure, message=f"(in the AOTInductor child, which exports again) "
                                                       f"{failure.message}")
    return record, failure
