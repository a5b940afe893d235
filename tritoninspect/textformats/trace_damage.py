"""What a TORCH_TRACE log is or holds that torch never writes, refused or read all the same.

torch writes each log as a regular file. `refuse_special` refuses a path that is none (a named pipe,
a device, a link to one) before it is opened: opening a pipe waits for a writer.
"""

from __future__ import annotations

import errno
import stat
from pathlib import Path

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
