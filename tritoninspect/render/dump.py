"""`--dump DIR`: write every captured graph, the JSON report and the full graph breaks to files."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from tritoninspect.render import _format as fmt
from tritoninspect.model.report import Graph, GraphBreak, Report

#: Marks a directory as a tritoninspect dump, so a later dump may overwrite it.
MARKER = ".tritoninspect-dump"
_MARKER_HEADER = "tritoninspect dump; files written:"


def dump_artifacts(report: Report, directory: Path, extra_files: Mapping[str, str] | None = None) -> list[Path]:
    """Write the report's artifacts into `directory` and return their paths.

    `extra_files` (bare name -> text) are written and owned like the rest,
    e.g. depyf's dump under `depyf_*` names (`tritoninspect breaks --decompile`).

    Graphs go to `<compile_id>_<stage>[_<part>].py` (e.g. `0_0_dynamo.py`,
    `0_0_output_code_forward.py`), plus `report.json` and `graph_breaks.txt`.
    Raises ValueError if `directory` holds files that an earlier dump did not
    write: a dump never touches anything it did not create.
    """
    directory = Path(directory)
    previous = _previous_dump(directory)
    files = {**artifact_files(report), **{n: t for n, t in (extra_files or {}).items() if _is_bare_name(n)}}
    directory.mkdir(parents=True, exist_ok=True)
    # Claim the directory before writing, so a dump cut short can still be overwritten.
    _write_marker(directory, previous | set(files))
    written = []
    for name, text in files.items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    # Files of an earlier dump that this one does not rewrite would mix two runs.
    for name in sorted(previous - set(files)):
        stale = directory / name
        if stale.is_file() or stale.is_symlink():
            stale.unlink()
    _write_marker(directory, set(files))
    return written


def artifact_files(report: Report) -> dict[str, str]:
    """File name to contents, in the order they are written."""
    files: dict[str, str] = {}
    for graph in report.graphs:
        files[_unique(graph_file_name(graph), files)] = _with_newline(graph.code)
    files["report.json"] = report.to_json() + "\n"
    files["graph_breaks.txt"] = graph_breaks_text(report.graph_breaks)
    return files


def graph_file_name(graph: Graph) -> str:
    """`0_0_aot_forward.py`: the compile id made file-safe, then the stage and part."""
    safe_id = re.sub(r"[^\w.-]", "_", graph.compile_id.replace("/", "_"))
    return f"{safe_id}_{fmt.graph_name(graph.stage, graph.part)}.py"


def _unique(name: str, taken: dict[str, str]) -> str:
    # Two graphs can share a name (e.g. several captures of one stage); keep both.
    stem, suffix, n = name[: -len(".py")], ".py", 2
    candidate = name
    while candidate in taken:
        candidate = f"{stem}_{n}{suffix}"
        n += 1
    return candidate


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def graph_breaks_text(breaks: tuple[GraphBreak, ...]) -> str:
    """Every graph break with its full reason and user stack (the terminal shows one line)."""
    if not breaks:
        return "no graph breaks\n"
    return "\n".join(_graph_break_block(b) for b in breaks)


def _graph_break_block(b: GraphBreak) -> str:
    where = f"{b.file}:{b.line}" if b.file else "unknown location"
    skipped = "frame skipped: Dynamo ran the whole frame eagerly" if b.frame_skipped else "frame not skipped"
    lines = [f"[{b.trace_id}] {where} ({skipped})"]
    # The `breaks` analysis's findings, when the report has them.
    details = [("headline", b.headline), ("graph-break id", b.gb_id), ("library frame", b.library_frame),
               ("kernel", f"{b.kernel} ({b.kernel_relation})" if b.kernel else None),
               ("ran eagerly", ", ".join(b.eager_kernels)), ("hint", b.hint)]
    lines += [f"{label}: {value}" for label, value in details if value]
    lines.append("reason:")
    lines += [f"  {line}" for line in b.reason.splitlines()]
    if b.user_stack:
        lines.append("user stack (innermost last):")
        lines += [f"  {frame}" for frame in b.user_stack]
    return "\n".join(lines) + "\n"


def check_dump_dir(directory: Path) -> None:
    """Raise ValueError now if `dump_artifacts` would refuse `directory`."""
    _previous_dump(directory)


def _previous_dump(directory: Path) -> set[str]:
    """Names an earlier dump wrote here; raises if the directory holds anything else."""
    if not directory.exists():
        return set()
    if not directory.is_dir():
        raise ValueError(f"cannot dump to {directory}: it exists and is not a directory")
    marker = directory / MARKER
    if marker.is_file():
        return _read_marker(marker)
    if any(directory.iterdir()):
        raise ValueError(
            f"cannot dump to {directory}: it is not empty and was not written by tritoninspect; "
            "choose a new or empty directory"
        )
    return set()


def _read_marker(marker: Path) -> set[str]:
    lines = marker.read_text(encoding="utf-8").splitlines()[1:]
    # Only bare names are trusted: a tampered marker must not make us delete elsewhere.
    return {line for line in lines if _is_bare_name(line)}


def _is_bare_name(name: str) -> bool:
    return bool(name) and "/" not in name and "\\" not in name and name not in (".", "..", MARKER)


def _write_marker(directory: Path, names: set[str]) -> None:
    body = "\n".join([_MARKER_HEADER, *sorted(names)]) + "\n"
    (directory / MARKER).write_text(body, encoding="utf-8")
