"""Several ranks' reports (one TORCH_TRACE log each) and where they differ.

A distributed job writes one log per rank. Ranks that compiled the same program agree on
every facet below; a facet whose value differs between ranks is listed with the groups of
ranks that share each value (ranks that break or recompile elsewhere, a kernel that entered
as a HOP on one rank and never on another, different compile ids...).
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tritoninspect.model.errors import UsageError
from tritoninspect.model.report import Diagnostic, Report

#: Version of the `graph DIR --json` document for several ranks (changelog: 1 first version).
RANKS_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class RankGroup:
    ranks: tuple[str, ...]
    value: str


@dataclass(frozen=True)
class RankDifference:
    """One facet whose value is not the same on every rank."""

    what: str
    groups: tuple[RankGroup, ...]


@dataclass(frozen=True)
class RankSummary:
    """The reports of several ranks and where they differ."""

    source: str
    ranks: tuple[str, ...]
    reports: tuple[Report, ...]
    differences: tuple[RankDifference, ...]
    #: How the text shows each rank: a report format ("text": the one-screen summary, "detail",
    #: "show:code", ...; render/ranks.py), as `graph`'s options asked. Not in the JSON.
    view: str = "text"
    #: `graph DIR --kernel NAME`: the kernel the reports were narrowed to (`narrowed`). Not in the JSON.
    kernel: str | None = None

    def to_dict(self, *, reports: bool = True) -> dict[str, Any]:
        return {
            "schema_version": RANKS_SCHEMA_VERSION,
            "tool": "tritoninspect",
            "source": self.source,
            "ranks": list(self.ranks),
            "differences": [{"what": d.what, "groups": [{"ranks": list(g.ranks), "value": g.value} for g in d.groups]}
                            for d in self.differences],
            **({"reports": [r.to_dict() for r in self.reports]} if reports else {}),
        }

    def to_json(self, indent: int | None = 2) -> str:
        if indent != 2:
            return json.dumps(self.to_dict(), indent=indent, default=str)
        texts = [r.json_text.replace("\n", "\n" + _MARGIN) for r in self.reports]
        return _spliced(self.to_dict(reports=False), texts)

    def narrowed(self, kernel: str) -> RankSummary:
        """Each rank's report with kernel `kernel` only (by name or id; none on a rank without it),
        for `graph DIR --kernel NAME`. Raises UsageError naming the kernels when no rank has it."""
        found = [r.kernel(kernel) for r in self.reports]
        if not any(found):
            names = ", ".join(dict.fromkeys(k.name for r in self.reports for k in r.kernels)) or "none"
            raise UsageError(f"--kernel {kernel}: no such kernel on any rank; kernels: {names}")
        # A rank with the kernel: as `graph LOG --kernel` narrows its report; one without: nothing of it.
        reports = tuple(r.narrowed(kernel) if k is not None else _without_kernels(r) for r, k in zip(self.reports, found))
        return dataclasses.replace(self, reports=reports, kernel=kernel)

    @property
    def problems(self) -> list[tuple[str, Diagnostic]]:
        """(rank, diagnostic) for each rank's warnings and errors (`--strict`)."""
        return [(name, d) for name, r in zip(self.ranks, self.reports) for d in r.diagnostics if d.severity != "note"]


@dataclass(frozen=True)
class RankFacts:
    """What the ranks' JSON document needs of one rank's report (`rank_facts`): made in the worker
    that read the rank, so that the report itself does not travel back (for 64 ranks of 1.4 MiB,
    unpickling the reports was a second of the main process's CPU)."""

    rank: int | None
    facets: dict[str, str]
    #: The report's warnings and errors (`--strict`).
    problems: tuple[Diagnostic, ...]
    #: `Report.json_text` as the document holds it, its lines indented under "reports" (`_MARGIN`).
    json_text: str


def rank_facts(report: Report) -> RankFacts:
    """The facts of `report` the ranks' JSON document and `--strict` read."""
    problems = tuple(d for d in report.diagnostics if d.severity != "note")
    return RankFacts(report.meta.rank, _facets(report), problems, report.json_text_in(_MARGIN))


@dataclass(frozen=True)
class RanksDocument:
    """`graph DIR --json`'s document made from each rank's `RankFacts`: the text of
    `RankSummary.to_json()` for the same reports, without the reports."""

    source: str
    ranks: tuple[str, ...]
    facts: tuple[RankFacts, ...]
    differences: tuple[RankDifference, ...]

    def to_json(self, indent: int | None = 2) -> str:
        if indent != 2:
            raise ValueError("a ranks document made from the ranks' facts has their indented text only")
        return "".join(self._pieces())  # joined once: tens of MB

    def write_json(self, write: Callable[[str], Any]) -> None:
        """`to_json()` handed to `write` a rank at a time: the document (as large as all the ranks' reports)
        is never joined."""
        for piece in self._pieces():
            write(piece)

    def _pieces(self) -> Iterator[str]:
        head = RankSummary(self.source, self.ranks, (), self.differences).to_dict(reports=False)
        return _pieces(head, [f.json_text for f in self.facts])

    @property
    def problems(self) -> list[tuple[str, Diagnostic]]:
        """(rank, diagnostic) for each rank's warnings and errors (`--strict`)."""
        return [(name, d) for name, f in zip(self.ranks, self.facts) for d in f.problems]


#: What starts each line of a report's text inside the ranks' document (under "reports").
_MARGIN = "    "


def _spliced(head: dict[str, Any], texts: list[str]) -> str:
    """The document `head` with the reports' own texts (`Report.json_text`, made in the workers that
    read the ranks), indented as json.dumps would indent them there (`_MARGIN`), spliced in: the same text."""
    return "".join(_pieces(head, texts))  # joined once: tens of MB


def _pieces(head: dict[str, Any], texts: list[str]) -> Iterator[str]:
    """`_spliced`'s text in pieces: the head, then each rank's report."""
    top = json.dumps({**head, "reports": []}, indent=2, default=str)
    if not texts:
        yield top
        return
    yield top.removesuffix("[]\n}") + "[\n" + _MARGIN
    for i, text in enumerate(texts):
        if i:
            yield ",\n" + _MARGIN
        yield text
    yield "\n  ]\n}"


def rank_name(report: Report, position: int) -> str:
    """"rank 1" (from the log), else the log's position "log 2"."""
    return _rank_name(report.meta.rank, position)


def _rank_name(rank: int | None, position: int) -> str:
    return f"rank {rank}" if rank is not None else f"log {position}"


def summarise(source: str, per_rank: list[Report] | list[RankFacts]) -> RankSummary | RanksDocument:
    """The ranks and where they differ: a `RankSummary` of their reports, or the `RanksDocument` of
    their `RankFacts` (what `graph DIR --json` needs, made where each rank was read)."""
    if per_rank and isinstance(per_rank[0], RankFacts):
        return summarise_facts(source, per_rank)
    return summarise_ranks(source, per_rank)


def summarise_ranks(source: str, reports: list[Report]) -> RankSummary:
    """The facets on which the ranks' reports differ, in a fixed order."""
    names = tuple(rank_name(r, i) for i, r in enumerate(reports))
    return RankSummary(source, names, tuple(reports), _differences(names, [_facets(r) for r in reports]))


def summarise_facts(source: str, facts: list[RankFacts]) -> RanksDocument:
    """`summarise_ranks` from each rank's `RankFacts`: the same names and differences."""
    names = tuple(_rank_name(f.rank, i) for i, f in enumerate(facts))
    return RanksDocument(source, names, tuple(facts), _differences(names, [f.facets for f in facts]))


def _differences(names: tuple[str, ...], per_rank: list[dict[str, str]]) -> tuple[RankDifference, ...]:
    facets: dict[str, list[str]] = {what: [] for each in per_rank for what in each}
    for what in facets:
        facets[what] = [each.get(what, "none") for each in per_rank]
    differences = []
    for what, values in facets.items():
        if len(set(values)) > 1:
            groups = {v: tuple(n for n, x in zip(names, values) if x == v) for v in dict.fromkeys(values)}
            differences.append(RankDifference(what, tuple(RankGroup(r, v) for v, r in groups.items())))
    return tuple(differences)


def _facets(report: Report) -> dict[str, str]:
    stages = Counter(g.stage for g in report.graphs)
    meta = report.meta
    facets = {
        # Ranks of one job run one torch on one kind of device: a difference here means the logs are
        # probably not one job (a hostile user mixed a CPU 2.13 log and a CUDA 2.11 one).
        "torch": f"torch {meta.torch or '?'} · triton {meta.triton or '?'}",
        "device": meta.device or "?",
        "graphs": ", ".join(f"{stage} {n}" for stage, n in stages.items()) or "none",
        "compile ids": ", ".join(dict.fromkeys(g.compile_id for g in report.graphs if g.stage == "dynamo")) or "none",
        "graph breaks": "; ".join(f"[{b.compile_id}] {b.file}:{b.line} {b.headline or b.reason}".strip()
                                  for b in report.graph_breaks) or "none",
        "recompiles": "; ".join(f"[{r.compile_id}] {r.reason}" for r in report.recompiles) or "none",
        "opaque ops": ", ".join(sorted({o.op for o in report.opaque_ops})) or "none",
        "failure": f"{report.failure.stage}: {report.failure.exc_type}" if report.failure else "none",
    }
    for kernel in report.kernels:
        cids = sorted({o.compile_id for o in kernel.occurrences if o.compile_id})
        facets[f"kernel {kernel.name}"] = f"{'/'.join(kernel.entries)} in {', '.join(cids) or 'no graph'}"
    return facets


def _without_kernels(report: Report) -> Report:
    """A rank's report with nothing said per kernel: `--kernel` names a kernel it never launched."""
    return dataclasses.replace(report, kernels=(), findings=(), epilogues=())
