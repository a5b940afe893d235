"""`emit`: the one way a command's document leaves the process.

In order: the `--dump` directory (a report's artifacts), the `-o` file, then
stdout. Formats are `RENDERERS` names; files and stdout both end with a newline;
"wrote ..." goes to stderr. A path or format that cannot be used is a
UsageError (exit 2), raised after whatever came before it was written.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tritoninspect.errors import usage_errors
from tritoninspect.render import guess_format_from_path, render_as


def emit(
    document: Any,
    fmt: str | None,
    output: Path | None = None,
    *,
    text: str = "text",
    file_fmt: str | None = None,
    dump: Path | None = None,
    extra_files: Mapping[str, str] | None = None,
) -> None:
    """Write `document` in format `fmt` on stdout (None: nothing on stdout).

    `output`: also write it to this file, as `file_fmt`, by default guessed from
    the suffix (JSON for ".json", else `text`, the command's own text format),
    uncoloured. `dump`: write a report's artifacts, and `extra_files`, into
    this directory first (see `render.dump.dump_artifacts`).
    """
    with usage_errors():
        if dump is not None:
            from tritoninspect.render.dump import dump_artifacts

            written = dump_artifacts(document, dump, extra_files)
            _note(f"wrote {len(written)} files to {dump}")
        if output is not None:
            body = render_as(document, file_fmt or guess_format_from_path(output, text), color=False)
            output.write_text(body + "\n")
            _note(f"wrote {output}")
        if fmt is not None:
            sys.stdout.write(render_as(document, fmt) + "\n")


def _note(message: str) -> None:
    sys.stderr.write(message + "\n")
