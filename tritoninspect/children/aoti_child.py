"""The child of run/aoti.py: `python -X faulthandler -m tritoninspect.children.aoti_child REQUEST OUT`.

Loads the target again in the same mode, runs it eagerly, exports it the same way and builds,
loads and runs the AOTInductor package (capture/export.py, in this process), writing the stage
it enters to $TRITONINSPECT_STAGE_FILE; then pickles the package record and failure to OUT.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def main(argv: Sequence[str] | None = None) -> int:
    """Answer the request in argv[0] into argv[1] (a pickle: our own records, between our own processes)."""
    request_file, out = (sys.argv[1:] if argv is None else argv)[:2]
    from tritoninspect.run.stdout_guard import stdout_to_stderr

    with stdout_to_stderr():
        answer = respond(json.loads(Path(request_file).read_text()))
    Path(out).write_bytes(pickle.dumps(answer))
    return 0


def respond(request: dict[str, Any]) -> dict[str, Any]:
    from tritoninspect.capture.compat import caches
    from tritoninspect.model.errors import TritonInspectError
    from tritoninspect.run.pipeline_export import ExportOptions, export_capture
    from tritoninspect.source.spec import parse_spec

    if headers := os.environ.get(caches.PRECOMPILED_HEADERS_ENV):
        caches.use_precompiled_header_dir(headers)
    options = ExportOptions(**{**request["options"], "isolate_aoti": False})
    try:
        cap = export_capture(parse_spec(request["target"]), options)
    except TritonInspectError as exc:
        return {"error": f"{type(exc).__name__}: {exc}", "aoti": None, "failure": None}
    return {"error": None, "aoti": cap.aoti, "failure": cap.failure}


if __name__ == "__main__":
    sys.exit(main())
