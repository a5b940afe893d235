"""Conditions a report must meet, for CI (`tritoninspect check`) and for tests.

`check_report` is pure: it reads a `Report` and returns one message per failed
condition (an empty list when all hold). `run_checks` gathers several named
conditions into a `CheckResult`, the versioned document `check --json` prints.
Nothing here imports torch, so a test or a CI step can check a saved report
without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tritoninspect.analyse.advice_text import plural
from tritoninspect.analyse.summary import short_path
from tritoninspect.model import __version__
from tritoninspect.model.report import Entry, GraphBreak, Kernel, Occurrence, Report
from tritoninspect.textformats.origin import INSTALL_DIR_NAMES

#: Version of the `check --json` document. Changelog:
#: 1: schema_version, tool, tool_version, target, ok, conditions, failures (before it,
#:    `check --json` printed target, ok, conditions and failures without a version).
#: 2: mode: what made the report the conditions were checked on ("gpu", "compile-only", "trace"): a pass
#:    in compile-only mode checked no GPU behaviour (a newcomer read one as a GPU result).
CHECK_SCHEMA_VERSION = 2

#: Entry kinds `--entry` accepts: how the kernel must enter torch.compile.
ENTRY_KINDS = (Entry.HOP.value, Entry.TRITON_OP.value, Entry.CUSTOM_OP.value)
#: Breaks listed in a failure message; the rest are counted.
SHOWN = 3
#: The condition every check holds, given or not (`findings=True`), as `check` labels it.
FINDINGS_CONDITION = "no error finding"


def findings_condition(allowed: Iterable[str]) -> str:
    """The findings condition's label, naming the rules `--allow` accepts."""
    rules = ", ".join(allowed)
    return FINDINGS_CONDITION + (f" (--allow {rules})" if rules else "")


def only_findings(conditions: Iterable[str]) -> bool:
    """Whether the findings condition is the only one: `check TARGET` given no condition."""
    labels = tuple(conditions)
    return len(labels) == 1 and labels[0].startswith(FINDINGS_CONDITION)


def check_report(
    report: Report,
    *,
    no_breaks: bool = False,
    max_graphs: int | None = None,
    entries: Mapping[str, str] | None = None,
    no_clones: Iterable[str] = (),
    no_fallback: bool = False,
    findings: bool = False,
    allow: Iterable[str] = (),
    cwd: Path | None = None,
) -> list[str]:
    """One line per failed condition; `[]` when every condition holds.

    - `no_breaks`: no graph break (a frame skipped by Dynamo counts). A break that follows a
      compile-only device probe (`GraphBreak.device_probe`) still fails it: compile-only mode
      cannot tell whether the GPU run breaks there too; the message says so for each;
    - `max_graphs`: at most this many Dynamo graphs;
    - `entries`: kernel name (or id) -> "hop" | "triton_op" | "custom_op": the
      only way that kernel entered torch.compile;
    - `no_clones`: kernels whose AOT occurrences clone no tensor
      (`tensors_to_clone` empty);
    - `no_fallback`: mutation analysis never fell back to "every input mutated".
    - `findings`: no `error` finding (`Report.findings`: the compiled result can differ from
      eager), except those whose rule is in `allow`.

    `cwd`: the folder the user is in; the files a failure names are then given relative to it (as the
    user gives them to `check`) when they are under it. None: as the report holds them (absolute).

    Raises ValueError for an unknown entry kind. Conditions that need a stage
    the report does not have (clones and fallbacks need AOT) fail, saying so.
    A report of a failed compile, or of a cut-off trace log, fails whatever the conditions,
    naming why.
    """
    failures = _failed(report)
    if no_breaks:
        failures += _no_breaks(report, cwd)
    if max_graphs is not None:
        failures += _max_graphs(report, max_graphs)
    for kernel, kind in (entries or {}).items():
        failures += _entry(report, kernel, kind)
    for kernel in no_clones:
        failures += _no_clones(report, kernel)
    if no_fallback:
        failures += _no_fallback(report)
    if findings:
        failures += _error_findings(report, set(allow))
    return failures


#: The source of the warnings of a TORCH_TRACE log that is cut off (traces.py): what the
#: conditions would be checked on is incomplete, so every condition fails, naming it once.
INCOMPLETE_LOG = "incomplete log"
#: The source of the warning of a log whose compile ids repeat (traces.py `restarted`): its report mixes two
#: runs' compiles, so every condition fails too.
MIXED_LOG = "mixed log"


def _failed(report: Report) -> list[str]:
    cut = [f"{d.source}: {d.message}" for d in report.diagnostics if d.source in (INCOMPLETE_LOG, MIXED_LOG)]
    if report.failure is None:
        return cut
    from tritoninspect.analyse.emulation import failure_caveat

    caveat = failure_caveat(report)  # a CPU CI job failing a model a GPU runs says why it may
    return [*cut, f"the compile {report.failure.summary()}" + (f" ({caveat})" if caveat else "")]


@dataclass(frozen=True)
class CheckResult:
    """What `tritoninspect check` found: the conditions asked, and one line per failure."""

    #: The target or saved report as given on the command line.
    target: str
    #: Each condition as typed, e.g. `--entry add_kernel=hop`.
    conditions: tuple[str, ...]
    failures: tuple[str, ...]
    #: What made the report checked (`Meta.mode`: "gpu", "compile-only", "trace"); "" when not known.
    mode: str = ""

    @property
    def ok(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON form (docs/json.md: the `check` document)."""
        return {
            "schema_version": CHECK_SCHEMA_VERSION,
            "tool": "tritoninspect",
            "tool_version": __version__,
            "target": self.target,
            "mode": self.mode or None,
            "ok": self.ok,
            "conditions": list(self.conditions),
            "failures": list(self.failures),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)


def run_checks(report: Report, conditions: Mapping[str, Mapping[str, Any]], *, target: str,
               cwd: Path | None = None) -> CheckResult:
    """Check each condition (display text -> `check_report` keywords), in order; `cwd` as `check_report`'s."""
    failures: list[str] = []
    for keywords in conditions.values():
        failures += check_report(report, **keywords, cwd=cwd)
    labels = tuple(_at_stage(label, report) if keywords.get("findings") else label
                   for label, keywords in conditions.items())
    # A failed compile fails every condition: say it once.
    return CheckResult(target, labels, tuple(dict.fromkeys(failures)), mode=report.meta.mode)


def _at_stage(label: str, report: Report) -> str:
    """The findings condition of a capture stopped before Inductor says so: most findings come from the
    AOT graphs and Inductor's output code (`check --stage dynamo` said "ok: no error finding" for a model
    whose full check fails)."""
    stage = report.meta.stage
    if stage not in ("dynamo", "aot"):
        return label
    return f"{label} at stage {stage} (the findings of later stages were not looked for)"


def parse_entry(text: str) -> tuple[str, str]:
    """`KERNEL=KIND` -> (kernel, kind); ValueError when malformed."""
    kernel, sep, kind = text.partition("=")
    if not sep or not kernel.strip() or kind.strip() not in ENTRY_KINDS:
        raise ValueError(f"--entry {text!r}: expected KERNEL=KIND with KIND one of {', '.join(ENTRY_KINDS)}")
    return kernel.strip(), kind.strip()


def parse_allow(rule: str) -> str:
    """A finding rule for `--allow`; ValueError naming the rules when it is none of them."""
    from tritoninspect.analyse.hazards import RULE_IDS

    rule = rule.strip()
    if rule not in RULE_IDS:
        raise ValueError(f"--allow {rule!r}: no such finding rule; rules: {', '.join(RULE_IDS) or 'none'}")
    return rule


def dynamo_graph_ids(report: Report) -> list[str]:
    """Distinct compile ids of the report's Dynamo graphs, in order."""
    return list(dict.fromkeys(g.compile_id for g in report.graphs if g.stage == "dynamo"))


def _no_breaks(report: Report, cwd: Path | None) -> list[str]:
    breaks = report.graph_breaks
    if not breaks:
        return []
    # Dynamo logs one cause once per frame and recompile: the same place and cause is said once,
    # with every compile id that logged it (a Liger model logged one break 6 times).
    places: dict[str, list[str]] = {}
    for b in breaks:
        places.setdefault(_break_text(b, cwd), []).append(b.compile_id)
    texts = [f"[{', '.join(ids)}] {text}" for text, ids in places.items()]
    shown = "; ".join(texts[:SHOWN])
    more = f"; and {len(texts) - SHOWN} more" if len(texts) > SHOWN else ""
    return [f"--no-breaks: {plural(len(breaks), 'graph break')}{_probed(breaks)}: {shown}{more}"]


def _probed(breaks: tuple[GraphBreak, ...], *, counted: bool = True) -> str:
    """How many breaks follow a compile-only device probe, said in the failure's head. `counted`:
    the head counts these breaks (so "of them"); else it counts graphs, and the breaks are named."""
    probed = [b for b in breaks if b.device_probe]
    if not probed:
        return ""
    if not counted:
        which = f"{plural(len(probed), 'graph break')} "
    else:
        which = "" if len(breaks) == 1 else f"{len(probed)} of them "
    return (f" ({which}after a device probe answered for the CPU in compile-only mode: "
            "a GPU run may not break there; check on a GPU)")


def _break_text(b: GraphBreak, cwd: Path | None) -> str:
    where = f"{shown_path(b.file, cwd)}:{b.line}" if b.file else "unknown location"
    headline = b.title()
    skipped = " (frame skipped)" if b.frame_skipped else ""
    probe = f" (after the device probe at {_shown_frame(b.device_probe, cwd)})" if b.device_probe else ""
    return f"{where}{skipped} {headline}{probe}".strip()


def shown_path(file: str, cwd: Path | None) -> str:
    """`file` relative to `cwd` when it is under it (`samples/model.py`, as the user named the target); an
    installed package's from its package down (`liger_kernel/utils.py`, as every view names it); else as it
    is (absolute: a CI log needs the whole path). As it is without a `cwd`."""
    path = Path(file)
    if cwd is None or not path.is_absolute():
        return file
    if INSTALL_DIR_NAMES & set(path.parts):
        return short_path(file, cwd)
    return path.relative_to(cwd).as_posix() if path.is_relative_to(cwd) else file


def _shown_frame(frame: str, cwd: Path | None) -> str:
    """A "file:line in function" with its file as `shown_path` gives it."""
    location, sep, function = frame.rpartition(" in ")
    file, colon, line = (location if sep else frame).rpartition(":")
    if not colon or not line.isdigit():
        return frame
    return f"{shown_path(file, cwd)}:{line}" + (f" in {function}" if sep else "")


def _max_graphs(report: Report, limit: int) -> list[str]:
    ids = dynamo_graph_ids(report)
    if len(ids) <= limit:
        return []
    probed = _probed(report.graph_breaks, counted=False)
    return [f"--max-graphs {limit}: {plural(len(ids), 'Dynamo graph')} ({', '.join(ids)}){probed}"]


def _entry(report: Report, name: str, kind: str) -> list[str]:
    if kind not in ENTRY_KINDS:
        raise ValueError(f"unknown entry kind {kind!r}; choose one of {', '.join(ENTRY_KINDS)}")
    label = f"--entry {name}={kind}"
    kernel = report.kernel(name)
    if kernel is None:
        return [_not_seen(report, label, name)]
    if tuple(kernel.entries) == (kind,):
        return []
    return [f"{label}: {kernel.name} entered as {', '.join(kernel.entries) or 'nothing'}"]


def _not_seen(report: Report, label: str, name: str) -> str:
    seen = ", ".join(k.name for k in report.kernels) or "none"
    return f"{label}: no kernel {name} in the report (kernels: {seen})"


def _after_aot(kernel: Kernel) -> list[Occurrence]:
    return [o for o in kernel.occurrences if o.stage.startswith(("aot_", "post_grad"))]


def _no_clones(report: Report, name: str) -> list[str]:
    label = f"--no-clones {name}"
    kernel = report.kernel(name)
    if kernel is None:
        return [_not_seen(report, label, name)]
    after = _after_aot(kernel)
    if not after:
        return [f"{label}: no AOT occurrence of {kernel.name} to check ({_stage_note(report)})"]
    final = [o for o in after if o.clones is not None and o.clones.after_reinplace is not None]
    if final:
        # What Inductor still clones after re-inplacing is what costs copies at run time.
        cloning = [(o.compile_id, o.clones.after_reinplace) for o in final if o.clones.after_reinplace]
        when = "after Inductor's re-inplacing"
    else:
        cloning = [(o.compile_id, o.tensors_to_clone) for o in after if o.tensors_to_clone]
        when = "in the AOT graph, before Inductor's re-inplacing (use --stage inductor for what remains)"
    if not cloning:
        return []
    cloned = ", ".join(dict.fromkeys(name for _, names in cloning for name in names or ()))
    ids = ", ".join(dict.fromkeys(str(cid) for cid, _ in cloning))
    return [f"{label}: {kernel.name} clones {cloned} {when} (compile {ids})"]


def _no_fallback(report: Report) -> list[str]:
    if report.meta.stage == "dynamo":
        return [f"--no-fallback: mutation analysis runs after Dynamo ({_stage_note(report)})"]
    failures = []
    for kernel in report.kernels:
        ids = list(dict.fromkeys(str(o.compile_id) for o in kernel.occurrences if o.mutation_analysis_fallback))
        if ids:
            cause = next(o.mutation_analysis_fallback for o in kernel.occurrences if o.mutation_analysis_fallback)
            where = f"{kernel.name} in {', '.join(ids)}"
            failures.append(f"--no-fallback: mutation analysis fell back for {where}: {cause}")
    for f in report.mutation_fallbacks_unattributed:
        failures.append(f"--no-fallback: mutation analysis fell back in {f.compile_id} (kernel unknown): {f.cause}")
    return failures


def _error_findings(report: Report, allow: set[str]) -> list[str]:
    """One line per error finding whose rule is not allowed."""
    failures = []
    for f in report.findings:
        if f.severity != "error" or f.rule in allow:
            continue
        ids = f" [{', '.join(f.compile_ids)}]" if f.compile_ids else ""
        failures.append(f"finding {f.rule}{ids}: {f.summary} (accept it with --allow {f.rule})")
    return failures


def _stage_note(report: Report) -> str:
    return f"the report stops at stage {report.meta.stage!r}; capture with --stage aot or inductor"
