"""The default `graph` text: one screen that answers "what happened to my kernels, and what should I change".

Header and counts, one row per kernel (`analyse/summary.py`), the findings ordered by
impact, then the advice (`analyse/advice.py`). The stage-by-stage tables stay in the
detailed view (`--detail`, `render/terminal.py`), and `--kernel NAME` shows one kernel's.
Words never split across lines: cells wrap at spaces, and a column is never narrower
than its longest word.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from tritoninspect.analyse.advice import advise
from tritoninspect.analyse.summary import KernelSummary, size_text, summarise
from tritoninspect.render import _format as fmt
from tritoninspect.render._console import console_text, make_console, print_blocks
from tritoninspect.render._failure import failure_section, recompile_limit_section
from tritoninspect.render._findings import advice_block, findings_block, numbered_grid
from tritoninspect.render._safe import safe_record
from tritoninspect.render.cudagraphs import cudagraph_section, epilogue_section
from tritoninspect.render._widgets import ALERT, ENTRY_STYLES, heading
from tritoninspect.render.terminal import Items, count_lines, mode_line
from tritoninspect.model.report import Report

#: Verdict words and their colours (see `KernelSummary.verdict`).
VERDICT_STYLES = {"visible": "green", "opaque": "yellow", "eager": "red", "missing": ALERT, "unseen": "dim"}
#: Shown for an unknown or not-applicable cell.
NONE = "-"


def render_overview(report: Report, *, color: bool | None = None, width: int | None = None) -> str:
    """The default text of a report."""
    console = make_console(width=width, color=color)
    report = safe_record(report)
    cwd = Path.cwd()
    kernels = summarise(report, cwd)
    advice = advise(report, kernels)
    blocks = [_header(report, cwd), failure_section(report, cwd), _kernel_block(report, kernels, console.width),
              _opaque_block(report), recompile_limit_section(report, cwd), cudagraph_section(report, cwd),
              epilogue_section(report, cwd, all_kernels=False), findings_block(advice), advice_block(advice),
              _diagnostics(report), _footer(report)]
    print_blocks(console, blocks)
    return console_text(console)


def render_summary(report: Report, *, color: bool | None = None, width: int | None = None) -> str:
    """The short summary `graph -o FILE` prints: the header and counts, one line of kernels by entry,
    and the findings (one per cause; their advice is in the file)."""
    console = make_console(width=width, color=color)
    report = safe_record(report)
    cwd = Path.cwd()
    advice = advise(report)
    blocks = [_header(report, cwd), [Text(kernels_line(report))], findings_block(advice), _diagnostics(report)]
    print_blocks(console, blocks)
    return console_text(console)


def kernels_line(report: Report) -> str:
    """`kernels: 4 (custom_op 4)`: how many, by how they entered."""
    entries: dict[str, int] = {}
    for k in report.kernels:
        for entry in k.entries or ("unseen",):
            entries[entry] = entries.get(entry, 0) + 1
    by_entry = ", ".join(f"{e} {n}" for e, n in entries.items())
    return f"kernels: {len(report.kernels)}" + (f" ({by_entry})" if by_entry else "")


def _header(report: Report, cwd: Path) -> list[RenderableType]:
    meta = report.meta
    versions = [f"torch {meta.torch}", f"triton {meta.triton or 'unknown'}"]
    inputs = [f"inputs {', '.join(meta.inputs)}"] if meta.inputs else []
    lines: list[RenderableType] = [
        Text.assemble((f"{meta.tool} {meta.tool_version}", "bold"), "  ", (meta.target, "bold")),
        mode_line(report),
        Items(versions + inputs, style="dim"),
        *count_lines(report, cwd),
    ]
    compile_line = compile_time_line(report)
    if compile_line:
        lines.append(Text(compile_line))
    return lines


def compile_time_line(report: Report) -> str:
    """`compile: AOTAutograd 1.16 s + Inductor 1.64 s = 2.80 s`, summed over every compile.

    Dynamo's graph time is the backend call (AOTAutograd and Inductor); the AOT graphs'
    time is Inductor's compile of that part. Dynamo's own tracing is not timed.
    """
    backend = [g.compile_time_s for g in report.graphs if g.stage == "dynamo" and g.compile_time_s is not None]
    inductor = [g.compile_time_s for g in report.graphs if g.stage.startswith("aot_") and g.compile_time_s is not None]
    if not backend:
        return ""
    total, lowered = sum(backend), sum(inductor)
    if not inductor:
        return f"compile: {total:.2f} s in the backend"
    return f"compile: AOTAutograd {max(total - lowered, 0.0):.2f} s + Inductor {lowered:.2f} s = {total:.2f} s"


def _kernel_block(report: Report, kernels: Sequence[KernelSummary], width: int) -> list[RenderableType]:
    title = heading("Kernels", len(kernels))
    if not kernels:
        return [title, Text(fmt.no_kernels_text(report), style="yellow")]
    by_part = _by_part(report, kernels)
    table = kernel_rows(kernels, by_part)
    if _min_width(table) <= width:
        return [title, table]
    # Too narrow for the table without splitting a word: one block per kernel instead.
    return [title, *(line for k in kernels for line in _stacked(k, by_part))]


def _opaque_block(report: Report) -> list[RenderableType]:
    """A trace's opaque custom ops: it cannot see the kernels inside them, so no kernel row shows
    them (a run shows each kernel that launched inside an op as its `custom_op` row)."""
    if report.meta.mode != "trace":
        return []
    unseen: dict[str, list[str]] = {}
    for op in report.opaque_ops:
        if not fmt.kernels_inside(report, op):
            ids = unseen.setdefault(op.op, [])
            if op.compile_id not in ids:
                ids.append(op.compile_id)
    if not unseen:
        return []
    inside = "unknown (a trace does not show them: they launch inside the op at run time)"
    grid = numbered_grid()
    for op, ids in unseen.items():
        grid.add_row(Text(op, style="yellow"), Text(f"[{', '.join(fmt.sorted_ids(ids))}] kernels inside: {inside}"))
    note = Text("custom ops Inductor calls as a black box: it cannot see, fuse or reorder the kernels inside them",
                style="dim")
    return [heading("Opaque ops", len(unseen)), grid, note]


HEADERS = ("kernel", "entry", "graphs", "clones", "before/after", "eager", "verdict")
#: Spaces between table columns.
GAP = 2


def kernel_rows(kernels: Sequence[KernelSummary], by_part: bool = False) -> Table:
    """One row per kernel: name and source, entry, graphs, clones, neighbours (`by_part`: per part of the
    program), eager launches, verdict."""
    cells = [_cells(k, by_part) for k in kernels]
    t = Table(box=None, show_edge=False, pad_edge=False, header_style="bold", padding=(0, GAP, 0, 0))
    for i, name in enumerate(HEADERS):
        longest = max([len(name)] + [_longest_word(row[i]) for row in cells])
        t.add_column(name, min_width=longest, overflow="fold", no_wrap=i in (0, 5, 6))
    for row in cells:
        t.add_row(*row)
    return t


def _by_part(report: Report, kernels: Sequence[KernelSummary]) -> bool:
    """A run with a backward compiles a forward and a backward (and, where grad is off, inference graphs):
    then every row names the part of each before/after pair. An inference-only run has one part, and says none."""
    return any(g.part == "backward" for g in report.graphs) or any(len(k.around) > 1 for k in kernels)


def _min_width(table: Table) -> int:
    return sum(c.min_width or 0 for c in table.columns) + GAP * (len(table.columns) - 1)


def _stacked(k: KernelSummary, by_part: bool) -> list[RenderableType]:
    cells = _cells(k, by_part, sep="; ")
    facts = Text()
    for i, (label, cell) in enumerate(zip(HEADERS[1:], cells[1:])):
        facts.append(" · " if i else "")
        facts.append(f"{label} ", style="dim")
        facts.append_text(cell)
    return [cells[0], Padding(facts, (0, 0, 0, 2))]


def _cells(k: KernelSummary, by_part: bool, sep: str = "\n") -> list[Text]:
    name = Text(k.name, style="bold")
    name.append("\n" + k.source, style="dim")
    entry = Text()
    for i, e in enumerate(k.entries or (NONE,)):
        entry.append((" " if i else "") + e, style=ENTRY_STYLES.get(e, ""))
    verdict = Text()
    for i, word in enumerate(k.verdict.split("+")):
        verdict.append((" " if i else "") + word, style=VERDICT_STYLES.get(word, ""))
    eager = Text("?" if k.eager_launches is None else str(k.eager_launches), style="red" if k.eager_launches else "")
    return [name, entry, Text(" ".join(k.compile_ids) or NONE), Text(clones_cell(k)),
            Text(around_cell(k, by_part, sep)), eager, verdict]


def clones_cell(k: KernelSummary) -> str:
    """What is still cloned after re-inplacing: "none", "x_ptr 128 B", "?" (not captured), "-" (not analysed)."""
    if k.clone_bytes is None and not k.cloned:
        return "?" if k.reinplaced else NONE
    if not k.cloned:
        return "none"
    size = f" {size_text(k.clone_bytes)}" if k.clone_bytes is not None else ""
    return " ".join(k.cloned) + size


def around_cell(k: KernelSummary, by_part: bool = False, sep: str = "\n") -> str:
    """The ops of the Inductor kernels just before and after its launch: `sin / cos mul`; `by_part`, a pair
    per part of the program it is launched in, joined by `sep` (`forward: - / tanh`, `backward:
    tanh_backward / -`), which one pair of a forward's and a backward's neighbours would mix."""
    fused = " (epilogue fused)" if k.epilogue == "fused" else ""
    if by_part and k.around:
        pairs = [f"{a.part}: {' '.join(a.before) or NONE} / {' '.join(a.after) or NONE}" for a in k.around]
        return sep.join(pairs) + fused
    if not k.before and not k.after:
        return NONE
    return f"{' '.join(k.before) or NONE} / {' '.join(k.after) or NONE}{fused}"


def _diagnostics(report: Report) -> list[RenderableType]:
    """Warnings and errors (what tritoninspect could not do or check) one line each; notes only counted."""
    problems = [d for d in report.diagnostics if d.severity != "note"]
    notes = len(report.diagnostics) - len(problems)
    lines: list[RenderableType] = []
    if problems:
        lines.append(heading("Diagnostics", len(problems)))
        grid = numbered_grid()
        for d in problems:
            grid.add_row(d.severity, Text(f"{d.source}: {fmt.first_line(d.message)}"))
        lines.append(grid)
    if notes:
        what = "what this mode cannot show" if report.meta.mode == "compile-only" else "details"
        lines.append(Text(f"{fmt.plural(notes, 'note')} ({what}): --detail", style="dim"))
    return lines


def _footer(report: Report) -> list[RenderableType]:
    hint = "more: --detail (every stage) · --kernel NAME · --show code"
    return [Text(hint, style="dim")]


def _longest_word(text: Text) -> int:
    return max((len(word) for word in text.plain.split()), default=0)
