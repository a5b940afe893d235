"""The one line a diff opens with: what the variant changed for the kernels, in counts and time.

`summary_line(a, b, label="B")` reads two reports (no torch), e.g. "B hides add_kernel from
Inductor; +1 extern call, -1 user kernel launch, compile time 0.81x".
"""

from __future__ import annotations

from tritoninspect.model.report import Entry, Kernel, Report

#: Output-code totals compared, with their words (singular, plural).
TOTALS = (
    ("user_kernels", "user kernel launch", "user kernel launches"),
    ("inductor_kernels", "Inductor kernel", "Inductor kernels"),
    ("extern_calls", "extern call", "extern calls"),
    ("copies", "copy", "copies"),
)
VISIBLE = (Entry.HOP.value, Entry.TRITON_OP.value)


def summary_line(a: Report, b: Report, label: str = "B", *, compile_ratio: bool = True) -> str:
    """What `b` (the variant called `label`) changed against `a`, on one line; the compile-time
    ratio only with `compile_ratio` (not when the captures ran at once, sharing the CPU)."""
    kernel_facts = [fact for name, ka, kb in _pairs(a, b) if (fact := _kernel_change(name, ka, kb, label))]
    counts = [*_total_changes(a, b), *_count_change("graph break", len(a.graph_breaks), len(b.graph_breaks)),
              *_count_change("recompile", len(a.recompiles), len(b.recompiles))]
    time = _compile_ratio(a, b) if compile_ratio else ""
    head = "; ".join(kernel_facts) if kernel_facts else f"{label} keeps every kernel's entry"
    tail = ", ".join([*counts, *([time] if time else [])])
    if b.failure is not None:
        head = f"{label} FAILED ({b.failure.summary()}); " + head
    return f"{head}; {tail}" if tail else head


def _pairs(a: Report, b: Report) -> list[tuple[str, Kernel | None, Kernel | None]]:
    names = list(dict.fromkeys([k.name for k in a.kernels] + [k.name for k in b.kernels]))
    return [(n, a.kernel(n), b.kernel(n)) for n in names]


def _state(kernel: Kernel | None) -> str:
    if kernel is None:
        return "absent"
    if kernel.missing_from_output_code:
        return "dropped"
    entries = set(kernel.entries)
    if entries & set(VISIBLE):
        return "visible"
    if Entry.CUSTOM_OP.value in entries:
        return "hidden"
    if Entry.EAGER.value in entries:
        return "eager"
    return "unseen"


#: (state in A, state in B) -> what B did, with {label} and {name}.
_CHANGES = {
    "hidden": "{label} hides {name} from Inductor (custom_op)",
    "visible": "{label} shows {name} to Inductor",
    "eager": "{label} launches {name} eagerly, outside the graph",
    "dropped": "{label} drops {name} from the compiled code",
    "absent": "{label} does not launch {name}",
}


def _kernel_change(name: str, ka: Kernel | None, kb: Kernel | None, label: str) -> str | None:
    before, after = _state(ka), _state(kb)
    if before == after:
        if ka is not None and kb is not None and ka.entries != kb.entries and after == "visible":
            return f"{label} enters {name} as {', '.join(kb.entries)} (was {', '.join(ka.entries)})"
        return None
    if before == "absent":
        return f"{label} adds {name} ({after})"
    return _CHANGES.get(after, f"{label}: {name} is {after}").format(label=label, name=name)


def _total(report: Report, key: str) -> int | None:
    values = [getattr(g, key) for g in report.graphs if g.stage == "output_code" and getattr(g, key) is not None]
    return sum(values) if values else None


def _total_changes(a: Report, b: Report) -> list[str]:
    changes = []
    for key, one, many in TOTALS:
        va, vb = _total(a, key), _total(b, key)
        if va is not None and vb is not None and va != vb:
            delta = vb - va
            changes.append(f"{delta:+d} {one if abs(delta) == 1 else many}")
    return changes


def _count_change(word: str, va: int, vb: int) -> list[str]:
    if va == vb:
        return []
    delta = vb - va
    return [f"{delta:+d} {word}{'' if abs(delta) == 1 else 's'}"]


def _backend_seconds(report: Report) -> float | None:
    """As analyse.diff.backend_seconds (which imports this module): the Dynamo graphs' compile times."""
    times = [g.compile_time_s for g in report.graphs if g.stage == "dynamo" and g.compile_time_s is not None]
    return sum(times) if times else None


def _compile_ratio(a: Report, b: Report) -> str:
    sa, sb = _backend_seconds(a), _backend_seconds(b)
    if not sa or sb is None:
        return ""
    return f"compile time {sb / sa:.2f}x"
