"""`--help`: written for users, and started fast.

`HelpCommand` is the Typer command class of every command: flags show no `<bool>`,
arguments only their metavar (no `<str>`, `<list[str]>`), and the usage line reads
`graph [OPTIONS] TARGET` instead of Typer's `{TARGET}`. `EXAMPLES` holds each command's
epilog (shown after its options by `--help`).

Help without the parts of Rich that typer's help formatter imports but this CLI never uses
(`wants_help`, `import_help_formatter`):
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

from typer.core import TyperCommand, TyperGroup

#: Where example inputs come from, said once for every command that compiles a target.
INPUTS_CONVENTION = (
    "Example inputs: --inputs, else a staticmethod example_inputs() on the model class, else a "
    "module-level example_inputs() in its file (return a tuple of arguments or a dict of keyword "
    "arguments, or a list of them for several calls)."
)

#: Each command's examples, shown after its options (Rich markup: \b keeps the line breaks).
EXAMPLES = {
    "graph": (
        "[bold]Examples[/]\n\n"
        "  tritoninspect graph model.py               [dim]# the file's only nn.Module, its own example_inputs[/]\n\n"
        "  tritoninspect graph model.py:Net -i \"64,scalar:i64=8\" --detail\n\n"
        f"{INPUTS_CONVENTION}"
    ),
    "diff": (
        "[bold]Examples[/]\n\n"
        "  tritoninspect diff samples/add_raw.py:Net samples/triton_op.py:Net samples/custom_op.py:Net\n\n"
        "  tritoninspect diff before.json after.json   [dim]# saved reports: nothing is compiled[/]\n\n"
        f"{INPUTS_CONVENTION}"
    ),
    "breaks": (
        "[bold]Examples[/]\n\n"
        "  tritoninspect breaks model.py:Net\n\n"
        "  tritoninspect breaks model.py:Net --dynamic --decompile\n\n"
        f"{INPUTS_CONVENTION}"
    ),
    "check": (
        "[bold]Examples[/]\n\n"
        "  tritoninspect check model.py:Net --no-breaks --entry add_kernel=hop\n\n"
        "  tritoninspect check model.py:Net --max-graphs 1 --no-clones add_kernel\n\n"
        "  tritoninspect check --junit-xml junit.xml   [dim]# every [\\[tool.tritoninspect.check]] entry[/]\n\n"
        f"{INPUTS_CONVENTION}"
    ),
    "export": (
        "[bold]Examples[/]\n\n"
        "  tritoninspect export model.py:Net --stage export   [dim]# torch.export only: seconds[/]\n\n"
        "  tritoninspect export model.py:Net --strict --dynamic -o e.json\n\n"
        f"{INPUTS_CONVENTION}"
    ),
}


class HelpCommand(TyperCommand):
    """A Typer command whose help shows real metavars (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = reflowed(self.help)
        for param in self.params:
            if param.param_type_name == "argument":
                # The metavar says what to type (TARGET, A B [C ...]); Typer would add <str>.
                param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
            elif getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""  # a flag takes no value: no <bool>

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        # Typer writes a required argument as {TARGET} and a repeated one as A...; the metavar says it.
        pieces = [piece.replace("{", "").replace("}", "") for piece in super().collect_usage_pieces(ctx)]
        return [p.removesuffix("...") if p.count("...") > 1 or " ..." in p else p for p in pieces]


def reflowed(text: str | None) -> str | None:
    """Each paragraph of a command's docstring on one line: Typer's "rich" markup keeps a docstring's line
    breaks, so a paragraph wrapped at 100 columns in the source came out ragged at any other width
    ("...share no state; the" / "diff opens ..."); Rich wraps the joined line to the terminal."""
    if not text:
        return text
    return "\n\n".join(" ".join(line.strip() for line in part.splitlines()) for part in text.split("\n\n"))


class HelpGroup(TyperGroup):
    """The app itself: `-h/--help` without `<bool>`, as in its commands."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option


# --- help without the Rich modules it never uses ------------------------------------------------

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
