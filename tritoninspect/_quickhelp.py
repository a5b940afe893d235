"""`--help` without the parts of Rich that typer's help formatter imports but this CLI never uses.

typer's `rich_utils` (imported to format help when `rich_markup_mode` is set) imports
`rich.markdown` (and with it markdown_it, rich.syntax and pygments) for
`rich_markup_mode="markdown"`, and `rich.traceback` (with rich.pretty) for pretty
exceptions. This app uses "rich" markup and has pretty exceptions off, so neither is
called; together they were about half of `tritoninspect --help`'s start-up (measured with
`python -X importtime -m tritoninspect --help`, typer 0.29). Alternatives measured: plain
Click help (`rich_markup_mode=None`) drops the panels and markup the help texts use.

Only on the help path, and only while `typer.rich_utils` itself is imported: stand-ins for
the two names it takes from those modules are put in `sys.modules`, then removed, so any
later `import rich.markdown` gets the real module. A stand-in that is called after all
imports the real class and hands the call on.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Sequence
from typing import Any

HELP_FLAGS = frozenset({"--help", "-h"})
#: Module -> the name typer.rich_utils imports from it (typer 0.29: rich_utils.py, top).
_DEFERRED = {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}


def wants_help(args: Sequence[str]) -> bool:
    """The command line asks only for help: no arguments, or -h/--help before any `--`."""
    words = list(args)
    if "--" in words:
        words = words[: words.index("--")]
    return not words or any(word in HELP_FLAGS for word in words)


def import_help_formatter() -> None:
    """Import typer's Rich help formatter with the unused modules deferred (see above)."""
    if "typer.rich_utils" in sys.modules or any(name in sys.modules for name in _DEFERRED):
        return  # already paid for, or someone uses the real ones: nothing to save
    for name, attr in _DEFERRED.items():
        sys.modules[name] = _stand_in_module(name, attr)
    try:
        importlib.import_module("typer.rich_utils")
    except ImportError:
        pass  # typer without rich: it formats help with plain Click
    finally:
        for name in _DEFERRED:
            sys.modules.pop(name, None)


def _stand_in_module(name: str, attr: str) -> types.ModuleType:
    module = types.ModuleType(name, f"tritoninspect stand-in for {name} while typer.rich_utils is imported")
    setattr(module, attr, _deferred_class(name, attr))
    return module


def _deferred_class(module: str, attr: str) -> type:
    """A class whose construction imports `module` and builds the real `attr` instead."""

    class Deferred:
        def __new__(cls, *args: Any, **kwargs: Any) -> Any:  # noqa: D102 - see the class docstring
            return getattr(importlib.import_module(module), attr)(*args, **kwargs)

    Deferred.__name__ = Deferred.__qualname__ = attr
    Deferred.__module__ = module
    return Deferred
