"""Scoped attribute patches that are always undone, in reverse order."""

from __future__ import annotations

from typing import Any

_MISSING = object()


class Patcher:
    """Set attributes now; `restore()` puts every old value back."""

    def __init__(self) -> None:
        self._undo: list[tuple[Any, str, Any]] = []

    def set(self, obj: Any, name: str, value: Any) -> None:
        # For classes, remember only what the class itself defines, so an
        # inherited attribute is deleted again rather than copied down.
        old = obj.__dict__.get(name, _MISSING) if isinstance(obj, type) else getattr(obj, name, _MISSING)
        self._undo.append((obj, name, old))
        setattr(obj, name, value)

    def restore(self) -> None:
        while self._undo:
            obj, name, old = self._undo.pop()
            if old is _MISSING:
                delattr(obj, name)
            else:
                setattr(obj, name, old)
