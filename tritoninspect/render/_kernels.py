"""Terminal sections about kernels: the summary table, one detail block each, and verdicts."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from tritoninspect.render import _format as fmt
from tritoninspect.render._resources import resource_table
from tritoninspect.render._widgets import ALERT, add_row, entries_text, heading, table
from tritoninspect.model.report import Kernel, Occurrence, Report

#: Stages whose occurrences are launches (named by Inductor or counted at run time), not graph nodes.
LAUNCH_STAGES = ("output_code", "runtime")


def kernel_table(report: Report, cwd: Path) -> list[RenderableType]:
    """The one-row-per-kernel summary; never omitted, so "no kernels" is said out loud."""
    title = heading("User-defined Triton kernels", len(report.kernels))
    if not report.kernels:
        unseen = " in the traced graphs (kernels inside opaque custom ops do not show in a trace)" \
            if report.meta.mode == "trace" else ""
        return [title, Text(f"{fmt.no_kernels_text(report)}{unseen}", style="yellow")]
    t = table("kernel", "entries", "compile ids", "source", "in output code", "mutation fallback")
    t.columns[0].no_wrap = True  # a name cut in two is not searchable; the source column folds instead
    for k in report.kernels:
        status = fmt.output_code_status(k)
        add_row(
            t,
            Text(k.name, style="bold"),
            entries_text(k.entries),
            ", ".join(fmt.compile_ids(k)) or fmt.NONE,
            fmt.location(k.file, k.line, cwd=cwd),
            Text(status, style=ALERT if status.startswith("MISSING") else ""),
            Text("yes", style=ALERT) if fmt.fallback_occurrences(k) else "unknown" if report.meta.mode == "trace" else "no",
        )
    return [title, t]


def kernel_details(report: Report, cwd: Path) -> list[RenderableType]:
    """A block per kernel, separated by blank lines."""
    blocks: list[RenderableType] = []
    for i, kernel in enumerate(report.kernels):
        if i:
            blocks.append(Text())
        blocks.append(kernel_detail(kernel, cwd))
    return blocks


def kernel_detail(kernel: Kernel, cwd: Path) -> RenderableType:
    """Decorators, constexprs, autotune configs, then every occurrence."""
    where = fmt.location(kernel.file, kernel.line, cwd=cwd)
    title = Text.assemble((kernel.name, "bold"), f"  {where}  ", entries_text(kernel.entries))
    parts: list[RenderableType] = [title, Padding(_facts(kernel), (0, 0, 0, 2))]
    if kernel.resources:
        parts.append(Padding(resource_table(kernel), (1, 0, 0, 2)))
    if kernel.occurrences:
        parts.append(Padding(occurrence_table(kernel), (1, 0, 0, 2)))
    parts += [Padding(note, (0, 0, 0, 2)) for note in _fallback_notes(kernel)]
    return Group(*parts)


def _facts(kernel: Kernel) -> Table:
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="dim", no_wrap=True)
    facts.add_column(overflow="fold")
    add_row(facts, "decorators", fmt.decorators_text(kernel))
    add_row(facts, "constexprs", ", ".join(kernel.constexpr_params) or fmt.NONE)
    if kernel.autotune_configs:
        add_row(facts, "configs", "\n".join(fmt.config_text(c) for c in kernel.autotune_configs))
    for guard in kernel.guards:
        add_row(facts, "guard", Text(fmt.guard_text(guard), style=ALERT))
    for arg in kernel.symbolic_args:
        add_row(facts, "symbolic", fmt.symbolic_arg_text(arg))
    return facts


def occurrence_table(kernel: Kernel) -> Table:
    """One row per occurrence; the last cell stacks node, launch parameters and status.

    Eleven fields side by side cannot fit 100 columns without folding every
    node name, so they are stacked in one cell instead.
    """
    t = table("compile id", "stage", "entry", "node / launch")
    for column in t.columns[:3]:
        column.no_wrap = True
    for o in kernel.occurrences:
        add_row(t, o.compile_id or fmt.NONE, o.stage, entries_text([o.entry]), occurrence_cell(o, kernel.name))
    return t


def occurrence_cell(o: Occurrence, kernel_name: str) -> Text:
    """Node (or launch name), then grid/constexprs/clones, then output-code and launch status."""
    lines = [_what_line(o, kernel_name), _params_line(o), _status_line(o)]
    return Text("\n").join(line for line in lines if line.plain)


def _what_line(o: Occurrence, kernel_name: str) -> Text:
    if o.stage in LAUNCH_STAGES:
        # Inductor renames the kernels it launches (add_kernel_0); eager launches keep the user's name.
        name = o.inductor_name or o.node or kernel_name
    else:
        name = f"{o.subgraph}.{o.node}" if o.subgraph and o.node else (o.node or fmt.NONE)
    text = Text(name)
    if o.custom_op:
        text.append(f" in {o.custom_op}", style="dim")
    return text


def _params_line(o: Occurrence) -> Text:
    parts = []
    if o.grid:
        label = "grid" if len(fmt.distinct_grids(o.grid)) == 1 else "grids"
        parts.append(f"{label} {fmt.grids_text(o.grid)}")
    if o.constexprs:
        parts.append(f"constexprs {fmt.kv_text(o.constexprs)}")
    if o.scalars:
        parts.append(f"scalars {fmt.kv_text(o.scalars)}")
    if o.tensors_to_clone:
        parts.append(f"tensors_to_clone {', '.join(o.tensors_to_clone)}")
    return Text(" · ".join(parts), style="dim")


def _status_line(o: Occurrence) -> Text:
    text = Text()
    if o.in_output_code is True and o.stage == "output_code":
        text.append(f"launched{' in the ' + o.part + ' code' if o.part else ''}", style="green")
    elif o.in_output_code is True:
        named = f" ({o.inductor_name})" if o.inductor_name else ""
        text.append(f"in output code{named}", style="green")
    elif o.in_output_code is False:
        text.append("MISSING from output code", style=ALERT)
    if o.launches is not None:
        text.append(("; " if text.plain else "") + fmt.plural(o.launches, "launch", "launches"))
    where = fmt.subgraph_place(o)
    if where:
        text.append(("; " if text.plain else "") + where)
    if o.mutation_analysis_fallback:
        text.append(("; " if text.plain else "") + "mutation fallback", style=ALERT)
    return text


def _fallback_notes(kernel: Kernel) -> list[Text]:
    # The cause is long and repeats across stages of one compile: say it once per compile id.
    fallbacks = fmt.fallback_occurrences(kernel)
    causes = dict.fromkeys((o.compile_id or fmt.NONE, o.mutation_analysis_fallback) for o in fallbacks)
    return [Text.assemble(("mutation fallback", ALERT), f" [{cid}]: {cause}") for cid, cause in causes]


def verdicts(report: Report, cwd: Path) -> list[RenderableType]:
    """One sentence per kernel; omitted when there are no kernels (the table already says so)."""
    if not report.kernels:
        return []
    return [heading("Verdict"), *(Text(fmt.verdict(k)) for k in report.kernels)]
