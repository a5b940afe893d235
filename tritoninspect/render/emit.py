"""`emit`: the one way a command's document leaves the process.

In order: the `--dump` directory (a report's artifacts), the `-o` file, then
stdout. Formats are `RENDERERS` names; files and stdout both end with a newline;
"wrote ..." goes to stderr. A path or format that cannot be used is a
UsageError (exit 2), raised after whatever came before it was written.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from tritoninspect.model.errors import UsageError, usage_errors
from tritoninspect.render import guess_format_from_path, write_as

#: What every file tritoninspect writes starts with (text) or carries (JSON, HTML): how `-o`
#: knows a file it may replace. Text reports open with "tritoninspect <version>  ...".
#: The first line of every text view: `tritoninspect 0.1.0  <target>` (the ranks view has no version).
#: A user's notes that merely start with the word (`tritoninspect graph model.py ...`) are not ours.
_TEXT_MARK = re.compile(r"tritoninspect(?: \d[^\s]*)?  \S")
_HTML_MARK = '<meta name="generator" content="tritoninspect'
#: `check --junit-xml`'s file (render/junit.py: the suite is named "tritoninspect.check").
_JUNIT_MARK = '<testsuite name="tritoninspect.check"'
#: Larger files are not opened to look: no report of ours is that big, so they are not ours.
_MAX_SNIFF = 64 * 1024 * 1024


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
    this directory first (see `render.dump.dump_artifacts`). Each file written is said in one line
    on stderr ("wrote report.html (HTML report: 4 kernels, 1 finding)").
    """
    global _stdout_open
    _stdout_open = False
    with usage_errors():
        if dump is not None:
            from tritoninspect.render.dump import dump_artifacts

            written = dump_artifacts(document, dump, extra_files)
            _note(f"wrote {len(written)} files to {dump}")
        if output is not None:
            file_format = file_fmt or guess_format_from_path(output, text)

            def fill(write: Callable[[str], Any]) -> None:  # a report's JSON in pieces, as on stdout
                write_as(document, file_format, write, color=False)
                write("\n")

            write_atomically(output, fill)
            _note(f"wrote {output}{_what(document, file_format)}")
        if fmt is not None:
            if sys.stdout is None:  # the shell closed it (`>&-`)
                raise UsageError("stdout is closed: nowhere to write the report", hint="give -o FILE")
            _stdout_open = True
            write_as(document, fmt, sys.stdout.write)  # not `+ "\n"`: a copy of a document of tens of MB
            sys.stdout.write("\n")
            _stdout_open = False


#: Whether stdout holds the first part of a document only (`write_as` writes JSON in pieces): an error
#: said now (`commands/_edge.py`) starts a line of its own.
_stdout_open = False


def stdout_mid_document() -> bool:
    """Is a document half written on stdout (an error or Ctrl-C cut it)?"""
    return _stdout_open


#: How the "wrote" line names a format.
_FORMAT_WORDS = {"json": "JSON", "html": "HTML", "html:breaks": "HTML", "text": "text", "detail": "text"}


def _what(document: Any, fmt: str) -> str:
    """" (HTML report: 4 kernels, 1 finding)": what a report file holds; "" for other documents."""
    from tritoninspect.model.report import Report

    if not isinstance(document, Report):
        return ""
    from tritoninspect.analyse.advice import advise

    kernels, findings = len(document.kernels), len(document.advice or advise(document))
    word = _FORMAT_WORDS.get(fmt, fmt)
    return (f" ({word} report: {kernels} kernel{'s' if kernels != 1 else ''}, "
            f"{findings} finding{'s' if findings != 1 else ''})")


def _note(message: str) -> None:
    from tritoninspect.render._safe import safe_text

    sys.stderr.write(safe_text(message) + "\n")  # it names a path of the user's: no escape sequence shown


def check_output(output: Path | None, *, reads: Iterable[Path] = (), force: bool = False) -> None:
    """Refuse an `-o` file before any work is done (UsageError, exit 2).

    Never one of the files this run reads (the target's source, a saved report), even
    with `force`; an existing file only when tritoninspect wrote it (a report, a diff,
    a check result, in any of its formats), or with `force`.
    """
    if output is None:
        return
    if output.is_dir():
        raise UsageError(f"-o {output}: is a directory; give a file name such as report.json")
    if output.exists() and not output.is_file():  # a device, a pipe: the rename would replace it (--force too)
        raise UsageError(f"-o {output}: not a regular file; give a file name such as report.json")
    if not output.parent.is_dir():
        raise UsageError(f"-o {output}: the directory {output.parent} does not exist")
    if not os.access(output.parent, os.W_OK | os.X_OK):  # now, not after the compile (as --trace)
        raise UsageError(f"-o {output}: the directory {output.parent} is not writable")
    _probe_writable(output)
    for read in reads:
        if _same_file(output, read):
            raise UsageError(f"-o {output}: this run reads that file ({read}); write the output elsewhere")
    if output.exists() and not force and not written_by_tritoninspect(output):
        raise UsageError(f"-o {output}: the file exists and tritoninspect did not write it",
                         hint="choose another name, or pass --force to replace it")


def _probe_writable(output: Path) -> None:
    """Create and remove a file where the write will (through a link, as `write_atomically`):
    `os.access` says yes to root everywhere, also where creating a file fails (sysfs, a read-only or
    full filesystem), which would otherwise be found after the compile."""
    folder = Path(os.path.realpath(output)).parent
    try:
        os.unlink(_new_temp(folder, ".probe"))
    except OSError as exc:
        raise UsageError(f"-o {output}: cannot create a file in {folder}: {exc.strerror or exc}") from exc


def _new_temp(folder: Path, suffix: str) -> Path:
    """A new empty file in `folder` (the umask's permissions), named apart from every other run's and
    short whatever the output's name (a name near the 255-byte limit stays writable)."""
    while True:
        temp = folder / f".tritoninspect-{os.getpid()}-{secrets.token_hex(4)}{suffix}"
        try:
            os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return temp
        except FileExistsError:
            continue


def written_by_tritoninspect(path: Path) -> bool:
    """Does `path` hold something tritoninspect writes (so `-o` may replace it)?"""
    try:
        if path.stat().st_size > _MAX_SNIFF or not path.is_file():
            return False
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if _TEXT_MARK.match(text) or _HTML_MARK in text[:4096] or _JUNIT_MARK in text[:4096]:
        return True
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return isinstance(data, dict) and _is_our_json(data)


def _is_our_json(data: dict[str, Any]) -> bool:
    if "error" in data and len(data) == 1:
        return isinstance(data["error"], dict) and "exit_code" in data["error"]
    if not isinstance(data.get("schema_version"), int):
        return False
    meta = data.get("meta")
    tool = meta.get("tool") if isinstance(meta, dict) else data.get("tool")
    return tool == "tritoninspect" or {"a", "b"} <= set(data)  # reports, check results; diffs


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def write_atomically(path: Path, fill: Callable[[Callable[[str], Any]], None]) -> None:
    """Write what `fill` hands its `write` through a temporary file in the same directory, then rename:
    a reader (or a Ctrl-C) never sees half a file, and a failed write leaves the old one. A link is
    written through: the file it names is replaced, the link kept."""
    if path.is_symlink():
        path = path.resolve()
    temp = _new_temp(path.parent, ".tmp")
    try:
        with open(temp, "w", encoding="utf-8") as file:
            fill(file.write)
        os.replace(temp, path)
    finally:
        if temp.exists():
            temp.unlink()
