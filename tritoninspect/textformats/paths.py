"""Whose file is it: torch's, Triton's, this tool's, an installed library's, or the user's own.

Decided by where packages are installed, not by path substrings: see `tritoninspect/origin.py`.
"""

from __future__ import annotations

from tritoninspect import origin


def is_user_file(path: str) -> bool:
    """False for torch, triton, this tool, the CLI libraries and our console script."""
    return origin.is_user_file(path)


def is_library_file(path: str) -> bool:
    """Installed third-party or standard-library code (site dirs, `pip install --target` dirs, the stdlib)."""
    return origin.is_library_file(path)


def is_own_file(path: str) -> bool:
    """The user's own code: neither torch/triton/this tool nor an installed library."""
    return origin.is_own_file(path)
