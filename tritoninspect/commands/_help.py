"""Help written for users: metavars that name what to type, and examples under each command.

`HelpCommand` is the Typer command class of every command: flags show no `<bool>`,
arguments only their metavar (no `<str>`, `<list[str]>`), and the usage line reads
`graph [OPTIONS] TARGET` instead of Typer's `{TARGET}`. `EXAMPLES` holds each command's
epilog (shown after its options by `--help`).
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperCommand, TyperGroup

#: Where example inputs come from, said once for every command that compiles a target.
INPUTS_CONVENTION = (
    "Example inputs: --inputs, else a staticmethod example_inputs() on the model class, else a "
    "module-level example_inputs() in its file (return a tuple of arguments, or a list of tuples "
    "for several calls)."
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


class HelpGroup(TyperGroup):
    """The app itself: `-h/--help` without `<bool>`, as in its commands."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option
