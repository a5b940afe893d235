"""Scoped attribute, mapping-item and environment patches that are always undone, in reverse order."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, MutableMapping
from typing import Any

_MISSING = object()


class Patcher:
    """Set attributes (or mapping items) now; `restore()` puts every old value back."""

    def __init__(self) -> None:
        self._undo: list[tuple[Any, Any, Any, bool]] = []

    def set(self, obj: Any, name: str, value: Any) -> None:
        self.remember(obj, name)
        setattr(obj, name, value)

    def remember(self, obj: Any, name: str) -> None:
        """Note the current value, for `restore()` to put back: for a change
        someone else is about to make."""
        # For classes, remember only what the class itself defines, so an
        # inherited attribute is deleted again rather than copied down.
        old = obj.__dict__.get(name, _MISSING) if isinstance(obj, type) else getattr(obj, name, _MISSING)
        self._undo.append((obj, name, old, False))

    def set_item(self, mapping: MutableMapping[Any, Any], key: Any, value: Any) -> None:
        """`mapping[key] = value` until `restore()`; other keys set meanwhile are left alone."""
        self._undo.append((mapping, key, mapping.get(key, _MISSING), True))
        mapping[key] = value

    def restore(self) -> None:
        while self._undo:
            obj, name, old, item = self._undo.pop()
            if item:
                if old is _MISSING:
                    obj.pop(name, None)
                else:
                    obj[name] = old
            elif old is not _MISSING:
                setattr(obj, name, old)
            elif name in getattr(obj, "__dict__", ()):
                delattr(obj, name)


@contextlib.contextmanager
def scoped_env(name: str, value: str) -> Iterator[None]:
    """The environment variable `name` set to `value` within the block, then as it was."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old
