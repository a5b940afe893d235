"""Findings of a run that did not go as compiled: the failure block (under the header) and hit recompile limits."""

from __future__ import annotations

from pathlib import Path

from rich.console import RenderableType
from rich.text import Text

from tritoninspect.analyse.emulation import failure_caveat
from tritoninspect.render import _format as fmt
from tritoninspect.render._widgets import ALERT
from tritoninspect.model.report import Failure, RecompileLimit, Report

#: Message lines shown under the headline (the JSON keeps up to 40).
SHOWN_LINES = 12

#: What each failure stage means, in words.
STAGE_WORDS = {
    "dynamo": "while Dynamo traced the model",
    "aot": "in AOTAutograd",
    "inductor": "in Inductor",
    "kernel_compile": "while Triton compiled a kernel",
    "run": "while running the compiled model",
    # `tritoninspect export`'s first step: the model run as it is, before torch.export.
    "eager": "in the eager reference run of the model (before torch.export)",
    "backward": "while running backward",
}


def failure_section(report: Report, cwd: Path) -> list[RenderableType]:
    """The failure, where it happened, and that the rest of the report came before it."""
    failure = report.failure
    if failure is None:
        return []
    lines: list[RenderableType] = [Text.assemble(("FAILED ", ALERT), _where(failure), ": ", (_headline(failure), "bold"))]
    for frame in failure.user_stack or ((failure.user_frame,) if failure.user_frame else ()):
        lines.append(Text.assemble("  your code: ", _frame(frame, cwd)))
    if failure.torch_frame:
        lines.append(Text.assemble("  raised in: ", _frame(failure.torch_frame, cwd)))
    if failure.kernel:
        lines.append(Text(f"  kernel: {failure.kernel}"))
    hint = failure_hint(failure)
    if hint:
        lines.append(Text(f"  hint: {hint}"))
    caveat = failure_caveat(report)
    if caveat:
        lines.append(Text(f"  {caveat}", style=ALERT))
    rest = failure.details()
    for line in rest[:SHOWN_LINES]:
        lines.append(Text("  │ " + line, style="dim"))
    if len(rest) > SHOWN_LINES:
        lines.append(Text(f"  │ ... {len(rest) - SHOWN_LINES} more lines in --json", style="dim"))
    lines.append(Text("  Everything below was captured before the failure.", style="dim"))
    return lines


def _where(failure: Failure) -> str:
    words = STAGE_WORDS.get(failure.stage, f"in {failure.stage}")
    cid = f" [{failure.compile_id}]" if failure.compile_id else ""
    part = f" ({failure.part})" if failure.part else ""
    return f"{words}{cid}{part}"


def _headline(failure: Failure) -> str:
    head = failure.headline()
    return f"{failure.exc_type}: {head}" if head else failure.exc_type


def _frame(frame: str, cwd: Path) -> str:
    """`file:line in fn` with the file shown as every location in the report is."""
    where, _, func = frame.rpartition(" in ")
    file, _, line = where.rpartition(":")
    if not file or not line.isdigit():
        return frame
    for site in ("/site-packages/", "/dist-packages/"):
        if site in file:  # torch's or Triton's file from its package down: a bare `autograd.py` is ambiguous
            return f"{file.rsplit(site, 1)[1]}:{line} in {func}"
    return f"{fmt.location(file, int(line), cwd=cwd)} in {func}"


def failure_line(failure: Failure, *, caveat: str | None = None) -> str:
    """One line for stderr: what failed, where, and the user's line (`caveat`: what compile-only mode
    may have to do with it, `failure_caveat`)."""
    at = f" at {failure.user_frame}" if failure.user_frame else ""
    hint = failure_hint(failure)
    hint = f"; hint: {hint}" if hint else ""
    probe = f"; {caveat}" if caveat else ""
    return (f"the model failed {_where(failure)}: {_headline(failure)}{at}{hint}{probe} "
            "(the report shows what was captured before)")


#: torch's message for a custom op or triton_op without a backward (torch/_library/autograd.py,
#: `make_autograd_impl`'s backward), raised when AOTAutograd traces the joint graph because
#: parameters require grad: the first thing a kernel author meets with an nn.Linear before the op.
_NO_AUTOGRAD = "no autograd formula was registered"


#: Where torch's CUDA-graph trees assert that a partition's non-tensor inputs are ints or generators
#: (torch/_inductor/cudagraph_trees.py, CUDAGraphNode._allocate_and_copy_recording_inputs). With
#: `capture_scalar_outputs` a `.item()` splits the graph and Inductor passes a None (an assertion's
#: buffer) or a float into the next partition, so recording it fails; plain
#: `torch.compile(mode="reduce-overhead")` fails the same way (measured on the H200, torch 2.11; the assert
#: is unchanged in 2.13). pytorch/pytorch#189123 lets None and floats through.
_CUDAGRAPH_RECORDING_INPUTS = "_allocate_and_copy_recording_inputs"


def failure_hint(failure: Failure) -> str | None:
    """What to do for a known failure cause, else None."""
    if _NO_AUTOGRAD in failure.message:
        return ("the op has no backward and something before it requires grad: register one with "
                "torch.library.register_autograd (see samples/triton_op_autograd.py), or look at the "
                "forward alone with --no-backward")
    if failure.exc_type == "AssertionError" and _CUDAGRAPH_RECORDING_INPUTS in (failure.torch_frame or ""):
        return ("torch's CUDA-graph trees cannot record a graph partition that receives a None or float (a "
                ".item() splitting the graph; pytorch/pytorch#189123), and plain torch.compile(mode="
                "\"reduce-overhead\") fails the same way: set torch._inductor.config.graph_partition = False "
                "(the graph then runs without CUDA graphs) or keep the .item() out of the compiled region")
    return None


def recompile_limit_section(report: Report, cwd: Path) -> list[RenderableType]:
    """Each frame that hit a recompile limit: from then on its calls ran eagerly."""
    return [line for limit in report.recompile_limits for line in _limit_lines(limit, cwd)]


def _limit_lines(limit: RecompileLimit, cwd: Path) -> list[RenderableType]:
    where = f" ({fmt.location(limit.file, limit.line, cwd=cwd)})" if limit.file else ""
    value = f" = {limit.limit}" if limit.limit is not None else ""
    head = Text.assemble(
        ("recompile limit hit ", ALERT), f"[{limit.compile_id}]: ", (limit.function or "a frame", "bold"), where,
        f" reached torch._dynamo.config.{limit.limit_type}{value}; Dynamo compiles it no more, "
        "so its later calls ran eagerly (kernels launched there are eager launches)",
    )
    hint = Text("  hint: find what changes between the compiles in the recompiles above (often a size that a "
                "constexpr or a Python int specialises on): mark it dynamic (torch._dynamo.mark_dynamic) or make "
                f"it stop changing; raising {limit.limit_type} only postpones the eager fallback", style="dim")
    return [head, hint]
