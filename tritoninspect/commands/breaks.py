"""`tritoninspect breaks`: graph breaks and recompiles around Triton kernels.

Dynamo only and forward only by default, so it is about as fast as `torch._dynamo.explain`:
where each break is, which kernel it concerns, why, and what to do. The forward runs with grad
on when parameters or inputs require it, as a training step's does (Dynamo traces an
autograd.Function differently under no_grad); its backward, which holds no graph break of its
own, runs only with `--backward` (fla's backward kernels autotune on their first call: on an
H200 that tripled `breaks` on an fla block).
"""

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Optional

import typer

from tritoninspect.commands._capture import given_options, report_for
from tritoninspect.commands._edge import edge, exit_if_failed
from tritoninspect.commands._outputs import check_outputs
from tritoninspect.commands._options import (
    DebugOpt,
    Device,
    DeviceOpt,
    DynamicOpt,
    ForceOpt,
    InputsOpt,
    JsonOpt,
    QuietOpt,
    OutputOpt,
    Stage,
    TargetArg,
    TimeoutOpt,
    folder,
)

#: Prefix of depyf's files in a `--dump` directory (the dump keeps bare names).
DEPYF_PREFIX = "depyf_"


def breaks(
    target: TargetArg,
    inputs: InputsOpt = None,
    device: DeviceOpt = Device.auto,
    dynamic: DynamicOpt = False,
    backward: Annotated[
        Optional[bool],
        typer.Option("--backward/--no-backward",
                     help="Also run backward (default: forward only, with grad on when inputs or parameters "
                          "require it; --no-backward: under no_grad)."),
    ] = None,
    stage: Annotated[
        Optional[Stage], typer.Option(help="Stop after this stage (default: dynamo, enough for breaks).")
    ] = None,
    decompile: Annotated[
        bool, typer.Option("--decompile", help="Show each frame's transformed code (needs depyf).")
    ] = False,
    json_out: JsonOpt = False,
    output: OutputOpt = None,
    dump: Annotated[
        Optional[Path], typer.Option("--dump", metavar="DIR", parser=folder, help="Write the artifacts (and depyf's dump with --decompile) to DIR.")
    ] = None,
    force: ForceOpt = False,
    timeout: TimeoutOpt = None,
    quiet: QuietOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Explain graph breaks and recompiles around Triton kernels: where, which kernel, why, what to do."""
    from tritoninspect.run.pipeline import CaptureOptions
    from tritoninspect.source.parse import parse_source

    with edge(json_out=json_out, debug=debug) as err:
        source = parse_source(target)
        check_outputs(output=output, dump=dump, sources=[source], force=force)
        with _depyf_dir(decompile and dump is not None) as depyf_dir:
            options = CaptureOptions(inputs=inputs, device=device.value, dynamic=dynamic, backward=backward,
                                     auto_backward=False, stage=stage.value if stage else "dynamo", decompile=decompile,
                                     depyf_dump=depyf_dir)
            given = given_options(options, stage=stage is not None, decompile=decompile, timeout=timeout)
            report = report_for(source, options, given=given, err=err, timeout=timeout,
                                progress=not (quiet or json_out), quiet=quiet, json_out=json_out, debug=debug)
            extra = read_depyf_dump(Path(depyf_dir)) if depyf_dir else {}
        # The renderers are imported only when text or files are asked for: `--json` alone needs none.
        from tritoninspect.render.emit import emit

        # An HTML file opens on the breaks (`html:breaks`); other suffixes as `emit` guesses them.
        html = output is not None and output.suffix.lower() in (".html", ".htm")
        emit(report, "json" if json_out else None if output else "breaks", output, text="breaks", dump=dump,
             extra_files=extra, file_fmt="html:breaks" if html else None)
        exit_if_failed(report, err)


@contextlib.contextmanager
def _depyf_dir(wanted: bool) -> Iterator[str | None]:
    """A temporary directory for depyf's own dump, when `--decompile --dump` asks for it."""
    if not wanted:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="tritoninspect-depyf-") as directory:
        yield directory


def read_depyf_dump(directory: Path) -> dict[str, str]:
    """depyf's `.py` files, named for a flat `--dump` directory (`depyf_<path with _>`)."""
    files = sorted(p for p in directory.rglob("*") if p.is_file() and p.suffix == ".py")
    return {DEPYF_PREFIX + p.relative_to(directory).as_posix().replace("/", "_"): p.read_text(errors="replace")
            for p in files}
