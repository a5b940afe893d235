"""The report model, part three: graph breaks, recompiles, recompile limits and Dynamo's
decompiled frames (`--decompile`). A break and a recompile are what Dynamo logged (`DynamoBreak`,
`RecompileRecord`, the capture's records too) with what the analyses tie to them.
`tritoninspect.model.report` holds the rest and re-exports these names: import them from there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal


#: What `GraphBreak.device_probe` means, as the text output, `check` and the notes say it.
DEVICE_PROBE_MEANING = ("follows a device probe answered for the CPU in compile-only mode; "
                        "a GPU run may not break here")


@dataclass(frozen=True)
class DynamoBreak:
    """A graph break as Dynamo logged it: the report's `GraphBreak` adds what it concerns and what to
    do; the capture's `BreakRecord` (tritoninspect/model/records.py) the source of the library frame."""

    compile_id: str
    reason: str
    file: str | None
    line: int | None
    #: The user's frames, innermost last, as "file:line in function".
    user_stack: tuple[str, ...] = ()
    #: True when Dynamo skipped the whole frame and ran it eagerly.
    frame_skipped: bool = False
    #: One line: the graph-break type, with what it says about a Triton kernel.
    headline: str = ""
    #: torch's graph-break id (e.g. "GB0361") and its documentation page, when torch gives one.
    gb_id: str | None = None
    doc_url: str | None = None
    #: Dynamo could not resume after the break: the rest of the frame ran eagerly.
    skipped_rest: bool = False
    #: "file:line in func" of the library frame the break happened in (e.g. triton's
    #: launch wrapper or an installed package), when it is not the user's own code.
    library_frame: str | None = None
    #: The source lines around `line`, the first of them being line `context_start`.
    context: tuple[str, ...] = ()
    context_start: int | None = None
    #: Dynamo's attempt at the compile that logged it: 0, or 1, 2, ... once Dynamo restarted its analysis of
    #: the frame (a second log of one break, the restart's: "Skipping the function"). Breaks are matched to
    #: graphs and launches by `compile_id` alone.
    attempt: int = 0

    @property
    def trace_id(self) -> str:
        """The id as torch prints it (torch._guards.TraceId, tlparse too): `1/0`, `1/0_1` for attempt 1."""
        return f"{self.compile_id}_{self.attempt}" if self.attempt else self.compile_id

    def title(self) -> str:
        """The break in one line: its headline (else the reason's first line), with what it is about
        when torch's explanation names it and the headline does not ("Failed to trace builtin
        operator" -> "... (`print`)")."""
        head = self.headline or next((ln.strip() for ln in self.reason.splitlines() if ln.strip()), "")
        # Torch's explanation is the first such line; a later one is text of the user's (a message).
        explanation = next((ln for ln in self.reason.splitlines() if ln.lstrip().startswith("Explanation:")), "")
        m = _EXPLAINED_NAME.match(explanation)
        name = m[1].rstrip(".") if m else ""  # "the builtin `posix.getpid.`" (sic)
        said = name and re.search(rf"(?<![\w.]){re.escape(name)}(?![\w.])", head)
        return f"{head} (`{name}`)" if name and not said else head


#: What Dynamo's explanation says it could not trace, when it names a builtin, function, method or
#: operator (torch 2.7+'s structured graph breaks, torch/_dynamo/graph_break_registry.json): "builtin
#: operator `print`", "the function `os.getpid`", "calling function `<function f at 0x7f..>`" (the
#: name only). Other backticked text is not a name: an example (`if my_tensor.sum() > 0:`, "e.g. calling
#: `__setattr__`") or a user's own message (User-inserted graph break. Message: ...).
_EXPLAINED_NAME = re.compile(
    r"^\s*Explanation:(?!\s*(?:User-inserted|Manually triggered))[^`\n]*?"
    r"(?<!e\.g\. )\b(?:builtin operator|builtin|function|method|[Oo]perator|calling) "
    r"`(?:<function )?([^\W\d][\w.]{0,79})(?: at 0x[0-9a-fA-F]+>)?`",
    re.MULTILINE)


@dataclass(frozen=True)
class GraphBreak(DynamoBreak):
    #: The user kernel the break concerns, and how it was tied to it.
    kernel: str | None = None
    kernel_relation: str | None = None
    #: Kernels launched eagerly because of this break (from the break's line or the skipped code).
    eager_kernels: tuple[str, ...] = ()
    #: What to do about a known Triton cause, and where that knowledge comes from.
    hint: str | None = None
    hint_source: str | None = None
    #: Compile-only mode: "file:line in function" of a device probe the break follows
    #: (`torch.cuda.is_available()` answered False, or a CPU tensor's `x.is_cuda` or device compared
    #: with "cuda" answered no, while Dynamo traced that function, on its user stack, and the answer
    #: decides a branch there or leaves the function before the break, or what it decides is not
    #: known); a GPU run may not break here. None otherwise.
    device_probe: str | None = None
    #: A break at `.item()`: what the user's function does with the value, kind -> first line:
    #: "branch" (an if/while/assert test), "kernel" (a launch's grid or argument), "size" (a tensor
    #: size or slice bound), "other". None when not known (or another break).
    value_uses: dict[str, int] | None = None
    #: The installed distribution `library_frame` is in (the break happened in its code), else None.
    library: str | None = None

    def tied_kernels(self) -> frozenset[str]:
        """The user kernels the break is tied to: the one it concerns and those it made run eagerly."""
        return frozenset({self.kernel, *self.eager_kernels} - {None})


@dataclass(frozen=True)
class ArgChange:
    """A kernel argument (or its grid) that differs between two compiles of one frame."""

    kernel: str
    #: "grid", "constexpr" or "scalar".
    kind: Literal["grid", "constexpr", "scalar"]
    #: The parameter name ("grid" for the grid).
    name: str
    #: The values as said; "?" (`UNRECORDED`) for one the launch node does not hold.
    before: str
    after: str
    #: The failed guard names the old value: this argument is what the recompile is about.
    guarded: bool = False


#: `ArgChange.before` / `after` for a value the launch node does not hold: a trace's first compile
#: records no value for an int Dynamo specialised (the graph has the constant, the log not its name).
UNRECORDED = "?"


def said(value: str) -> str:
    """An `ArgChange` value as the text says it: `UNRECORDED` in words."""
    return "(not recorded)" if value == UNRECORDED else value


@dataclass(frozen=True)
class RecompileRecord:
    """A recompile as Dynamo logged it; the report's `Recompile` adds the failed guard and what changed."""

    compile_id: str
    reason: str


@dataclass(frozen=True)
class Recompile(RecompileRecord):
    #: The guard that failed, on one line (long expressions shortened).
    guard: str = ""
    #: The compile of the same frame that the guard belonged to, e.g. "0/0".
    previous: str | None = None
    #: Kernel arguments that changed from `previous` to this compile.
    changes: tuple[ArgChange, ...] = ()
    hint: str | None = None


@dataclass(frozen=True)
class RecompileLimit:
    """Dynamo hit a recompile limit: the frame's later calls ran eagerly, uncompiled."""

    #: The compile Dynamo refused (it has no graph and is not listed as a recompile).
    compile_id: str
    #: torch._dynamo.config's name for it: "recompile_limit" or "accumulated_recompile_limit".
    limit_type: str
    limit: int | None
    function: str | None = None
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class DecompiledFrame:
    """Dynamo's transformed code of one compiled frame, decompiled by depyf (--decompile)."""

    compile_id: str
    #: "forward", or a resume function such as "torch_dynamo_resume_in_forward_at_55".
    function: str
    file: str | None
    line: int | None
    source: str
