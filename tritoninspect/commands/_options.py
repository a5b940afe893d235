"""Options the commands share, as `Annotated` aliases, and their choices as enums.

A command declares `device: DeviceOpt = Device.auto`: each flag's spelling and help
live here once. Options only one command has stay in that command's module.
"""

from __future__ import annotations

import math
import os
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer


class Device(str, Enum):
    auto = "auto"
    cpu = "cpu"
    cuda = "cuda"


class Stage(str, Enum):
    dynamo = "dynamo"
    aot = "aot"
    inductor = "inductor"


class Show(str, Enum):
    dynamo = "dynamo"
    aot = "aot"
    post_grad = "post-grad"
    code = "code"
    fusion = "fusion"
    export = "export"  # an export report's torch.export program
    aoti = "aoti"  # an export report's AOTInductor code


TargetArg = Annotated[
    str, typer.Argument(metavar="TARGET", help="model.py:Net, package.module:Net, a saved report.json, or a "
                                               "TORCH_TRACE folder or .log file (docs/traces.md).")
]
#: `export`'s: it exports the model, so a trace will not do (nor a saved `graph` report).
ModelTargetArg = Annotated[
    str, typer.Argument(metavar="TARGET", help="model.py:Net, package.module:Net, or a saved export report.json.")
]
InputsOpt = Annotated[
    Optional[str], typer.Option("--inputs", "-i", metavar="SPEC",
                                help='Example inputs: shapes with optional dtype and value, e.g. '
                                     '"4x128:float16,4x128,scalar:i64=8".')
]
TargetArchOpt = Annotated[
    Optional[str], typer.Option("--target", metavar="ARCH", help="Compile-only mode's GPU architecture (default sm_90).")
]
DeviceOpt = Annotated[Device, typer.Option(help="auto: CUDA when available, else compile-only CPU mode.")]
DynamicOpt = Annotated[bool, typer.Option("--dynamic", help="Compile with dynamic shapes from the start.")]
BackwardOpt = Annotated[
    Optional[bool],
    typer.Option(
        "--backward/--no-backward",
        help="Run backward so backward graphs compile (default: when inputs or parameters require grad).",
    ),
]
StageOpt = Annotated[Stage, typer.Option(help="Stop after this stage (faster).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON on stdout and nothing else (errors too).")]


def output_file(value: str) -> Optional[Path]:
    """`-o` as typed. `-` is stdout, as for Unix tools: the same as no `-o` (what the command prints
    without it; `-` has no suffix to pick another format), where it wrote a file named `-`; `./-` names
    that file. A name ending in a slash means a folder, which `Path` would silently drop (`-o out/`
    wrote a file named `out`)."""
    if value == "-":
        return None
    if value.endswith(("/", os.sep)):
        raise typer.BadParameter(f"{value} names a folder; give a file name such as {value}report.json")
    return Path(value)


OutputOpt = Annotated[
    Optional[Path],
    typer.Option("--output", "-o", metavar="FILE", parser=output_file,
                 help="Write to a file (.json, .html or text; - is stdout, as without -o). Refuses to replace a "
                      "file tritoninspect did not write."),
]


def folder(value: str) -> Path:
    """A folder option (`--dump`, `--trace`, `--save`) as typed: `-` would be stdout, which cannot take a
    folder (they made a folder named `-`); `./-` names such a folder."""
    if value == "-":
        raise typer.BadParameter("- would be stdout, which cannot take a folder; give a folder name "
                                 "(./- for one named -)")
    return Path(value)


ForceOpt = Annotated[bool, typer.Option("--force", help="Let -o replace an existing file that is not a report.")]
#: `--timeout`'s range, in seconds. At most a million: `inf` or 1e300 would overflow the alarm's timer (exit 6).
TIMEOUT_RANGE = (0.1, 1e6)


def _seconds(value: str) -> float:
    """`--timeout` as typed: a number of seconds in `TIMEOUT_RANGE`. Typer's own range check let NaN through
    its comparisons and said "Input should be less than or equal to 1000000" for `--timeout nan`."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    low, high = TIMEOUT_RANGE
    if not low <= seconds <= high:  # NaN is in no range
        raise typer.BadParameter(f"{value!r} is not a number of seconds from {low:g} to {high:.0f}")
    return seconds


TimeoutOpt = Annotated[
    Optional[float],
    typer.Option("--timeout", parser=_seconds, metavar="SECONDS",
                 help="Stop a capture (import, compile, run) that takes longer (0.1 to 1000000 s): exit 8."),
]
DumpOpt = Annotated[
    Optional[Path], typer.Option("--dump", metavar="DIR", parser=folder,
                                 help="Write every artifact to DIR, named by compile id and stage.")
]
DebugOpt = Annotated[bool, typer.Option("--debug", help="Show full tracebacks, and torch's own log lines (TORCH_LOGS).")]
#: `graph`'s --quiet also leaves out the summary -o prints on stdout.
GraphQuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress on stderr: no stage lines, no live status on a "
                                             "terminal (--json drops the lines only); with -o, no summary on stdout "
                                             "either (only the 'wrote' line).")
]
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress on stderr: no stage lines, no live status on a terminal "
                                             "(--json drops the lines only).")
]
