"""The child process of a diff side: `python -m tritoninspect.children.side_child REQUEST OUT`.

Reads the request the parent wrote (see the package docstring), captures the target
through the pipeline (and times it for `--bench`), and always writes an answer to OUT:
the report, or the typed error the parent rebuilds. Exits with that error's code.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from tritoninspect.model.errors import TritonInspectError, error_to_dict, internal_error


def main(argv: Sequence[str] | None = None) -> int:
    """Answer the request in argv[0] into the file argv[1]; return the exit code."""
    request_file, out = (sys.argv[1:] if argv is None else argv)[:2]
    from tritoninspect.run.exits import exits_raised
    from tritoninspect.run.stdout_guard import stdout_to_stderr

    with stdout_to_stderr(), exits_raised():  # the target's prints go to stderr, marked; its os._exit() raises
        answer, code = respond(json.loads(Path(request_file).read_text()))
    Path(out).write_text(json.dumps(answer, default=str))
    return code


def respond(request: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The answer to one request, and the exit code: every error becomes an answer too."""
    try:
        return capture(request), 0
    except TritonInspectError as exc:
        error = exc
    except Exception as exc:  # noqa: BLE001 - a bug of ours: reported, not a traceback in the void
        if request.get("debug"):
            traceback.print_exc()
        error = internal_error(exc)
    return {"error": error_to_dict(error)}, int(error.exit_code)


def capture(request: dict[str, Any]) -> dict[str, Any]:
    """Capture (and, with "bench", time) the requested target."""
    from tritoninspect.run.acquire import acquire
    from tritoninspect.run.pipeline import CaptureOptions
    from tritoninspect.source.spec import parse_spec

    spec = parse_spec(request["target"])
    options = CaptureOptions(**request["options"])
    with _stages_to(request.get("stages")):
        report = acquire(spec, options)
    if not request.get("bench"):
        return {"report": report.to_dict(), "bench": None, "bench_method": None}
    from tritoninspect.analyse.diff import backend_seconds
    from tritoninspect.children.bench import METHOD, bench_target

    bench = bench_target(spec, options, mode=report.meta.mode, compile_s=backend_seconds(report))
    return {"report": report.to_dict(), "bench": dataclasses.asdict(bench), "bench_method": METHOD}


@contextlib.contextmanager
def _stages_to(path: str | None) -> Iterator[None]:
    """Each stage the capture starts, written to `path` as a line (the parent reads it as we run)."""
    if not path:
        yield
        return
    from tritoninspect.capture.progress import listening

    with open(path, "a", encoding="utf-8") as f:
        def write(message: str) -> None:
            f.write(" ".join(message.split()) + "\n")
            f.flush()

        with listening(write):
            yield


if __name__ == "__main__":
    sys.exit(main())
