"""Commands that register themselves on the shared Typer app (`tritoninspect.cli.app`).

Each module is imported by cli.py for its side effect of adding commands;
like cli.py, they import torch and the capture layer only inside commands.
"""
