"""The diff report: two captures side by side, frozen and versioned like the report.

`tritoninspect diff A B --json` writes `DiffReport.to_json()`. Like the report
(`report.py`), it is a public interface: change it only by bumping
`DIFF_SCHEMA_VERSION` and noting why below. It is versioned apart from the
report so each can change on its own.

Schema changelog:
  1  first version: sides a and b, rows, graph_diffs, bench, notes.
  2  Side.failure: the side's compile or run failed (one line); the diff compares what
     was captured before it. Version 1 diff reports still read (no failures then).
  3  DiffReport.summary: the line the diff opens with (what B changed, in counts and compile
     time); DiffReport.others: `diff A B C ...` compares A with each further variant, each
     comparison a DiffReport of its own (its `b.label` "C", "D", ...). Versions 1 and 2 still
     read: they lack both fields (a summary of "", no others).
  4  Side.grad: whether the side's forward recorded autograd (the report's Meta.grad, schema 6;
     `breaks` runs a training step's forward without its backward). Versions 1-3 still read:
     they lack it (null: not said).

Its JSON Schema, `tritoninspect/schemas/diff.schema.json`, is generated from the dataclasses
below (`json_schema()`), and `DiffReport.from_json` validates against it.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from tritoninspect.model import __version__, notebook, schema
from tritoninspect.model._json import Schema, parse_json
from tritoninspect.model.errors import ReportError

DIFF_SCHEMA_VERSION = 4
#: Versions this tritoninspect reads: versions 2 to 4 only added fields.
READABLE_DIFF_VERSIONS = (1, 2, 3, 4)

#: Sections of `DiffReport.rows`, in the order they are built and rendered.
SECTIONS = (
    "graphs",
    "kernels",
    "ops per stage",
    "clones and copies",
    "inductor kernels",
    "neighbourhood",
    "graph totals",
    "compile time",
    "torch.compile vs export",
)

#: The note of a comparison whose captures overlapped in time (the summary then gives no compile-time ratio).
PARALLEL_NOTE = ("sides compiled in parallel, sharing the CPU: compile times are not comparable "
                 "(the summary gives no ratio); use -j1 for comparable compile times")


@dataclass(frozen=True)
class Side:
    """Where one side came from and how it was captured (its report's meta)."""

    #: "A" or "B".
    label: str
    #: As given on the command line: a target spec or a saved report's path.
    source: str
    #: True when read from a saved report (nothing was compiled for it).
    saved: bool
    target: str
    mode: str
    device: str
    torch: str
    triton: str
    stage: str
    dynamic: bool | None
    backward: bool
    inputs: tuple[str, ...] = ()
    #: The side's compile or run failed: where and why, on one line (None: it completed).
    failure: str | None = None
    #: The report's Meta.grad: the forward recorded autograd (None: not said).
    grad: bool | None = None

    @property
    def forward_grad(self) -> bool:
        """Whether the forward recorded autograd (Dynamo traces an autograd.Function's backward only
        then, so two sides' graphs can differ by it); not said (an older report): when backward ran."""
        return self.backward if self.grad is None else self.grad


@dataclass(frozen=True)
class Row:
    """One compared fact: its value in A and in B (None where a side lacks it)."""

    section: str
    name: str
    a: Any
    b: Any
    #: The values differ. Never set for measurements (`unit` "s"): they are compared as a ratio.
    changed: bool
    #: "" for counts and names; "s" for seconds.
    unit: str = ""

    @property
    def is_fact(self) -> bool:
        """A compared fact, counted in "N of M facts differ" (text and HTML alike); a measurement
        (seconds) differs run to run and is compared as a ratio, not counted."""
        return self.unit != "s"


@dataclass(frozen=True)
class GraphDiff:
    """A unified diff of one stage's graph in A and in B, after name normalisation."""

    stage: str
    #: forward / backward / inference; "" for Dynamo graphs.
    part: str
    #: The compile ids paired (graphs are paired in compile-id order); None where a side has no such graph.
    compile_id_a: str | None
    compile_id_b: str | None
    #: Unified diff lines (`---`, `+++`, `@@`, then ` `/`-`/`+` lines); empty when the graphs match.
    lines: tuple[str, ...] = ()
    changed: bool = False


@dataclass(frozen=True)
class Timing:
    """Run time of one callable on the GPU, in milliseconds (CUDA events)."""

    #: Per call, the GPU idle before each call, so host overhead counts.
    median_ms: float
    p20_ms: float
    p80_ms: float
    min_ms: float
    reps: int
    #: Mean per call when calls are issued back to back (throughput: host work may overlap).
    pipelined_ms: float | None = None


@dataclass(frozen=True)
class SideBench:
    """What `--bench` measured for one side."""

    #: The model as written (None in compile-only mode).
    eager: Timing | None = None
    #: The model under a fresh `torch.compile` (default Inductor backend; None in compile-only mode).
    compiled: Timing | None = None
    #: Backend compile seconds from the capture (sum over compile ids of `Graph.compile_time_s` of Dynamo graphs).
    compile_s: float | None = None
    #: Seconds of the first call of a fresh `torch.compile` with caches off: Dynamo, AOT, Inductor, Triton, one run.
    first_call_s: float | None = None


@dataclass(frozen=True)
class Bench:
    """`--bench` for both sides, with B/A ratios."""

    mode: str
    device: str
    #: How run times were measured (warm-up, repetitions, synchronisation).
    method: str
    a: SideBench
    b: SideBench
    #: B/A per measure: "eager", "compiled", "pipelined", "compile_s", "first_call_s" (None where a side lacks it).
    ratios: dict[str, float | None] = field(default_factory=dict)
    #: Why run times are missing (compile-only mode), else None.
    note: str | None = None


@dataclass(frozen=True)
class DiffReport:
    a: Side
    b: Side
    rows: tuple[Row, ...] = ()
    graph_diffs: tuple[GraphDiff, ...] = ()
    bench: Bench | None = None
    #: Caveats about the comparison itself (different modes, stages, versions, inputs).
    notes: tuple[str, ...] = ()
    #: What B changed against A, on one line (analyse/diff_summary.py).
    summary: str = ""
    #: With more than two variants: A against each further one (C, D, ...), in order.
    others: tuple[DiffReport, ...] = ()
    tool: str = "tritoninspect"
    tool_version: str = __version__
    schema_version: int = DIFF_SCHEMA_VERSION

    @property
    def comparisons(self) -> tuple[DiffReport, ...]:
        """A against each variant: this diff (A, B), then `others`."""
        return (self, *self.others)

    @property
    def changed_rows(self) -> tuple[Row, ...]:
        return tuple(r for r in self.rows if r.changed)

    @property
    def facts(self) -> tuple[Row, ...]:
        """The rows that are compared facts (`Row.is_fact`): what "N of M facts differ" counts."""
        return tuple(r for r in self.rows if r.is_fact)

    @property
    def changed_graphs(self) -> tuple[GraphDiff, ...]:
        return tuple(g for g in self.graph_diffs if g.changed)

    def __repr__(self) -> str:
        return notebook.diff_repr(self)

    def _repr_html_(self) -> str | None:
        """Jupyter: the HTML diff, as `diff -o diff.html` writes it (without the sides' pictures:
        a `DiffPage` has them), in a frame of its own."""
        return notebook.page_html(self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able form; `schema_version` comes first."""
        body = dataclasses.asdict(self)
        return {"schema_version": body.pop("schema_version"), **body}

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=str)

    @classmethod
    def from_json(cls, text: str | bytes, source: str = "diff report") -> DiffReport:
        """A saved diff report's text, validated against the JSON Schema; `source` names it in errors."""
        data = parse_json(text, source)
        if isinstance(data, dict) and data.get("schema_version") in READABLE_DIFF_VERSIONS:
            data = {**data, "schema_version": DIFF_SCHEMA_VERSION}
        schema.validate(data, schema.DIFF_SCHEMA, source)
        try:
            return _SCHEMA.build(cls, data)
        except (TypeError, ValueError, KeyError) as exc:
            raise ReportError(f"{source} does not match schema {DIFF_SCHEMA_VERSION}: {exc}") from exc


def json_schema() -> dict[str, Any]:
    """The JSON Schema of `DiffReport.to_json()`, generated from the dataclasses (shipped as
    `tritoninspect/schemas/diff.schema.json`)."""
    return schema.generate(DiffReport, version=DIFF_SCHEMA_VERSION, title="tritoninspect diff report",
                           schema_id="urn:tritoninspect:schema:diff", optional=frozenset({"Side.failure", "DiffReport.summary", "DiffReport.others",
                                               "Side.grad"}))


def side_bench_from_dict(data: dict[str, Any]) -> SideBench:
    """A `SideBench` from its `dataclasses.asdict` form (as a capture child sends it)."""
    return _SCHEMA.build(SideBench, data)


#: How JSON maps back onto the records (see tritoninspect.model._json).
_SCHEMA = Schema(
    nested={
        (DiffReport, "a"): (Side, False),
        (DiffReport, "b"): (Side, False),
        (DiffReport, "rows"): (Row, True),
        (DiffReport, "graph_diffs"): (GraphDiff, True),
        (DiffReport, "bench"): (Bench, False),
        (DiffReport, "others"): (DiffReport, True),
        (Bench, "a"): (SideBench, False),
        (Bench, "b"): (SideBench, False),
        (SideBench, "eager"): (Timing, False),
        (SideBench, "compiled"): (Timing, False),
    },
    nullable=frozenset({(DiffReport, "bench"), (SideBench, "eager"), (SideBench, "compiled")}),
)


__all__ = [
    "DIFF_SCHEMA_VERSION",
    "SECTIONS",
    "Bench",
    "DiffReport",
    "GraphDiff",
    "Row",
    "Side",
    "SideBench",
    "Timing",
    "json_schema",
    "side_bench_from_dict",
]
