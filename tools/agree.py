"""Compare the device-independent parts of reports: the GPU run against compile-only mode.

    python -m tools.agree GPU_REPORTS CPU_REPORTS   # two reports, or two folders of <sample>.json

Prints `N fields compared, M differ`, then each difference; exit 0 when every pair
agrees or differs only as `tools/agreement.py` explains, 1 when a pair differs or
could not be compared, 2 for paths that are not reports. Run by scripts/gpu-tests on
the GPU machine and by scripts/gpu-fixtures here (a maintainer tool: not installed).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tools.agreement import Comparison, compare
from tritoninspect.model.errors import ExitCode, ReportError, TritonInspectError, UsageError
from tritoninspect.model.report import Report, read_report


def load_report(path: Path) -> Report:
    """`read_report`, naming the file in every error (agreement reads many)."""
    try:
        return read_report(path)
    except ReportError as exc:
        message = exc.message if str(path) in exc.message else f"{path}: {exc.message}"
        raise ReportError(message) from exc


def pair_reports(a: Path, b: Path) -> list[tuple[str, Path | None, Path | None]]:
    """(name, report in a, report in b) for two files, or for the *.json of two folders."""
    if a.is_file() and b.is_file():
        return [(a.stem, a, b)]
    if not (a.is_dir() and b.is_dir()):
        raise UsageError(f"give two report files or two folders of reports: {a}, {b}")
    in_a = {p.stem: p for p in a.glob("*.json")}
    in_b = {p.stem: p for p in b.glob("*.json")}
    if not in_a and not in_b:
        raise UsageError(f"no *.json reports in {a} or {b}")
    return [(name, in_a.get(name), in_b.get(name)) for name in sorted(set(in_a) | set(in_b))]


def compare_paths(a: Path, b: Path) -> list[tuple[str, Comparison | str]]:
    """Compare every pair; where there is nothing to compare, say why instead
    (a report on one side only, or one that cannot be read: a failed run)."""
    results: list[tuple[str, Comparison | str]] = []
    for name, pa, pb in pair_reports(a, b):
        if pa is None or pb is None:
            results.append((name, f"only in {a if pb is None else b}"))
            continue
        try:
            results.append((name, compare(load_report(pa), load_report(pb))))
        except ReportError as exc:
            results.append((name, exc.message))
    return results


def format_results(results: list[tuple[str, Comparison | str]]) -> str:
    """One line per pair (and one per difference), then the totals."""
    lines = []
    compared = differ = known = 0
    for name, result in results:
        if isinstance(result, str):
            lines.append(f"{name}: not compared: {result}")
            continue
        compared += result.compared
        differ += len(result.differences)
        known += len(result.differences) - len(result.unexplained)
        lines.append(f"{name}: {result.summary()}")
        lines.extend(f"  note: {note}" for note in result.notes)
        lines.extend(f"  {d.describe()}" for d in result.differences)
    tail = f" ({known} explained: version differences or documented compile-only limitations)" if known else ""
    skipped = sum(isinstance(r, str) for _, r in results)
    not_compared = f"; {skipped} not compared" if skipped else ""
    lines.append(f"{compared} fields compared, {differ} differ{tail}{not_compared}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Exit 0 when every pair agrees (or differs only as known); 1 when a pair
    differs or could not be compared; 2 for paths that are not reports."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.agree",
        description="Compare the device-independent parts of reports: GPU run vs compile-only mode.",
    )
    parser.add_argument("a", type=Path, help="a report, or a folder of <sample>.json (e.g. the GPU reports)")
    parser.add_argument("b", type=Path, help="the same for the other mode (e.g. compile-only reports)")
    args = parser.parse_args(argv)
    try:
        results = compare_paths(args.a, args.b)
    except TritonInspectError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return int(exc.exit_code)
    print(format_results(results))
    bad = any(isinstance(r, str) or r.unexplained for _, r in results)
    return int(ExitCode.FINDINGS if bad else ExitCode.OK)


if __name__ == "__main__":
    sys.exit(main())
