"""Whose file is it: torch's, Triton's, this tool's, an installed library's, or the user's own (by path)."""

from __future__ import annotations

import os
import sysconfig

#: Frames that are never the user's: the tool itself and the libraries it drives.
_NOT_USER = tuple(
    os.sep + part + os.sep
    for part in ("torch", "triton", "tritoninspect", "typer", "click", "importlib", "_pytest", "pluggy")
)


def is_user_file(path: str) -> bool:
    """False for torch, triton, this tool, the CLI libraries and our console script."""
    if path.startswith("<") or any(part in path for part in _NOT_USER):
        return False
    return os.path.basename(path) != "tritoninspect"


#: The standard library's directory: its frames are library frames, not the user's.
_STDLIB = sysconfig.get_paths().get("stdlib", "") + os.sep


def is_library_file(path: str) -> bool:
    """Installed third-party or standard-library code (site-packages, dist-packages, the stdlib)."""
    if any(part in path for part in (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")):
        return True
    return path.startswith(_STDLIB) if _STDLIB else False


def is_own_file(path: str) -> bool:
    """The user's own code: neither torch/triton/this tool nor an installed library."""
    return is_user_file(path) and not is_library_file(path)
