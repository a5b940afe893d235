"""Hazards: what torch.compile changes about a user kernel's result or speed (issue 24).

Each hazard is a small pure function `hazard(capture) -> [Finding]` over the plain records of a
capture (`Capture.hazards` and the rest): no torch, so each is tested on saved records. `HAZARDS`
is the registry, run in order by `find_hazards`; a hazard that raises becomes a diagnostic and the
others go on. A finding is an `error` when the compiled result can differ from eager, a `warning`
when speed or memory suffer, a `note` for what torch did with nothing to change.

Adding a finding: a module here with its rule ids and `hazard(capture)`, one entry in `HAZARDS`, its
ids in `RULE_IDS` (what `check --allow` accepts; tests/test_hazards.py holds every finding to them),
and the evidence it needs recorded by capture/hazards.py into `model/hazard_records.py`.
"""

from __future__ import annotations

from collections.abc import Callable

from tritoninspect.model.errors import ReportError
from tritoninspect.model.records import Capture
from tritoninspect.model.report import SEVERITIES, Finding

Hazard = Callable[[Capture], list[Finding]]

from tritoninspect.analyse.hazards import aliasing, autotune, clones, cudagraphs, scalars, views  # noqa: E402

#: Every hazard, by rule family, in the order they run (findings are then sorted worst first).
HAZARDS: dict[str, Hazard] = {
    "autotune_hooks": autotune.autotune_hooks,
    "fp64_scalars": scalars.fp64_scalars,
    "aliased_args": aliasing.aliased_args,
    "view_args": views.view_args,
    "clone_cost": clones.clone_cost,
    "cudagraphs": cudagraphs.cudagraph_skips,
    "epilogues": cudagraphs.epilogues_refused,
}
#: Every rule id a finding can carry (what `check --allow` accepts).
RULE_IDS: tuple[str, ...] = (autotune.RULE, scalars.RULE, scalars.CAST_RULE, aliasing.RULE, aliasing.MERGED_RULE,
                             views.RULE, views.NOTE_RULE, clones.RULE, cudagraphs.RULE, cudagraphs.EPILOGUE)

#: Each rule id's family (its key in `HAZARDS`).
_FAMILIES: dict[str, str] = {
    autotune.RULE: "autotune_hooks", scalars.RULE: "fp64_scalars", scalars.CAST_RULE: "fp64_scalars",
    aliasing.RULE: "aliased_args", aliasing.MERGED_RULE: "aliased_args", views.RULE: "view_args",
    views.NOTE_RULE: "view_args", clones.RULE: "clone_cost", cudagraphs.RULE: "cudagraphs",
    cudagraphs.EPILOGUE: "epilogues",
}


def family_of(rule: str) -> str:
    """The hazard (a key of `HAZARDS`) that makes findings of `rule`."""
    return _FAMILIES[rule]


def find_hazards(capture: Capture, hazards: dict[str, Hazard] | None = None) -> tuple[list[Finding], list[tuple[str, Exception]]]:
    """Every hazard's findings for `capture`, worst first; and (name, exception) per hazard that failed."""
    findings: list[Finding] = []
    failed: list[tuple[str, Exception]] = []
    for name, hazard in (HAZARDS if hazards is None else hazards).items():
        try:
            findings += hazard(capture)
        except ReportError:
            raise  # the input is bad (a log changed while it was read), not this analysis
        except Exception as exc:  # noqa: BLE001 - one failing analysis must not sink the others
            failed.append((name, exc))
    return ordered(findings), failed


def ordered(findings: list[Finding]) -> list[Finding]:
    """Worst first; within a severity, in the order the hazards found them."""
    return sorted(findings, key=lambda f: SEVERITIES.index(f.severity))
