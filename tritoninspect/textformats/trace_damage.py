"""What a TORCH_TRACE log is or holds that torch never writes, refused or read all the same.

torch writes each log as a regular file, in UTF-8, its JSON with `json.dumps`. `refuse_special` refuses a
path that is no regular file (a named pipe, a device, a link to one) before it is opened: opening a pipe
waits for a writer. `trace_json` reads a lone surrogate (`\\udcff`, which json.dumps writes for a str that
held bytes not UTF-8: a path read with surrogateescape) as U+FFFD, as a damaged log's invalid bytes are read;
`NotUtf8` counts the lines holding those, which a report says: a name in them no longer matches the same name
elsewhere in the log.
"""

from __future__ import annotations

import errno
import json
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: What a path that is no regular file is, as the error line says it (`stat.S_IFMT`).
_SPECIAL = {stat.S_IFIFO: "a named pipe", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a device",
            stat.S_IFBLK: "a device", stat.S_IFDIR: "a folder"}


def refuse_special(path: Path) -> None:
    """An OSError for a path (a link followed) that is no regular file: opening a named pipe waits for a
    writer, for ever (`graph DIR` hung on a rank linked to one), and a device can be read without end.
    A path that cannot be stat'ed is left to `open`, which says why (no such file, permission)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode):
        kind = _SPECIAL.get(stat.S_IFMT(mode), "a special file")
        raise OSError(errno.EINVAL, f"{kind}, not a regular file", str(path))


#: A JSON escape of a UTF-16 surrogate, `\ud800` to `\udfff` (json.loads pairs a valid pair into one character).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def trace_json(text: str) -> Any:
    """`json.loads(text)` of a log's JSON (an event's line, a JSON payload), each lone surrogate in its
    strings replaced by U+FFFD, as the log's invalid bytes are: torch's json.dumps writes `\\udcff` for a
    str that held bytes not UTF-8 (a path read with surrogateescape), json.loads makes that a str no
    UTF-8 can hold, and printing the report failed (exit 2). Only a text holding such an escape is walked."""
    value = json.loads(text)
    return _replaced(value) if _SURROGATE_ESCAPE.search(text) else value


def _replaced(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_replaced(key): _replaced(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item) for item in value]
    return value


@dataclass
class NotUtf8:
    """The lines of a log read so far that hold bytes that are not UTF-8 (a damaged log: torch writes UTF-8)."""

    #: How many.
    lines: int = 0
    #: 1-based number of the first of them.
    first: int | None = None

    def count(self, lines: list[bytes], number: int) -> None:
        """Count those of `lines` (as read, the first being line `number`): a U+FFFD decoded from valid
        UTF-8 is text torch wrote, not damage."""
        for i, raw in enumerate(lines):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                self.lines += 1
                self.first = number + i if self.first is None else min(self.first, number + i)
