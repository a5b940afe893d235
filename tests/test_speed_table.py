"""The README's speed table is what benchmarks/speed_table.py makes of the outputs kept in
benchmarks/results/, and that script reads what the benchmarks print (benchmarks/_common.py
`report_ratio`, bench_traces' table)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
from pathlib import Path
from types import ModuleType

from _expect import REPO


def _module(name: str) -> ModuleType:
    sys.path.insert(0, str(REPO / "benchmarks"))  # speed_table and _common import their siblings
    try:
        spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # a dataclass looks its module up there
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(REPO / "benchmarks"))


speed_table = _module("speed_table")


def test_the_readme_holds_the_table_made_from_the_kept_results() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    held = readme[readme.index(speed_table.BEGIN) + len(speed_table.BEGIN):readme.index(speed_table.END)]
    made = speed_table.table([p for p in speed_table.RESULTS.iterdir() if p.is_dir()])
    assert held == "\n" + made, "run: python benchmarks/speed_table.py --write README.md"


def test_every_kept_output_gives_rows_and_every_folder_names_its_machine() -> None:
    for folder in (p for p in speed_table.RESULTS.iterdir() if p.is_dir()):
        assert speed_table.machine_of(folder).count("torch") == 1, folder
        for path in folder.glob("*.txt"):
            if path.name not in ("versions.txt", "summary.txt", "pip.txt"):
                assert speed_table.rows_of(path, "m"), path


def _printed(tmp_path: Path, lines: list[tuple[str, list[float], list[float], float]], cpu: bool) -> Path:
    common = _module("_common")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print("sample benchmarks/models/stack.py · device cuda · median of 3 fresh processes")
        for label, measured, baseline, target in lines:
            common.report_ratio(label, measured, baseline, target)
        if cpu:
            print("\nthe same ratios in CPU time (user+sys of each process and its children; steadier on a busy machine):")
            common.report_ratio(lines[0][0], [2.0, 2.0, 2.0], [4.0, 4.0, 4.0], lines[0][3])
    path = tmp_path / "out.txt"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def test_a_ratio_as_report_ratio_prints_it_is_read_back_with_the_benchmark_s_verdict(tmp_path: Path) -> None:
    # 0.9004 prints as "0.900" (three digits at the target) and is over: the verdict is the benchmark's.
    path = _printed(tmp_path, [("graph / plain torch.compile, cold caches", [9.004, 9.004, 9.004], [10.0] * 3, 0.90),
                               ("graph / plain torch.compile, peak RSS", [100.0] * 3, [100.0] * 3, 1.30)], cpu=True)
    cold, rss = speed_table.rows_of(path, "H200")
    assert (cold.what, cold.wall, cold.cpu, cold.target, cold.met) == (
        "`graph` / plain torch.compile, cold caches, `stack`", 0.9, 0.5, 0.9, False)
    assert (rss.wall, rss.cpu, rss.met, rss.runs) == (1.0, None, True, "median of 3")
    assert "**not met**" in cold.markdown() and "| met |" in rss.markdown()


def test_a_trace_table_row_is_read_and_judged_against_its_target(tmp_path: Path) -> None:
    path = tmp_path / "traces.txt"
    path.write_text("| what | tritoninspect | tlparse | ratio (wall) | ratio (CPU) | peak RSS | tlparse peak RSS | target |\n"
                    "|---|---|---|---|---|---|---|---|\n"
                    "| the same, one log of 100 MiB | 5.51 s | 69.44 s | 0.08 | 0.08 | 157 MiB | 437 MiB | ≤ 1.00 |\n"
                    "| 64 ranks | 7.00 s | 6.00 s | 1.17 | 1.20 | 120 MiB | 20 MiB | ≤ 1.00 |\n", encoding="utf-8")
    small, ranks = speed_table.rows_of(path, "CPU")
    assert (small.what, small.wall, small.met) == ("the same, one log of 100 MiB", 0.08, True)
    assert (ranks.cpu, ranks.met) == (1.2, False)


def test_the_latest_sitting_wins(tmp_path: Path) -> None:
    for day, ratio in (("2026-01-01-x", [8.0] * 3), ("2026-02-01-x", [9.5] * 3)):
        folder = tmp_path / day
        folder.mkdir()
        (folder / "versions.txt").write_text("python 3.12 · torch 2.11.0 · triton 3.6.0\ngpu: NVIDIA H200\n")
        _printed(folder, [("graph / plain torch.compile, cold caches", ratio, [10.0] * 3, 0.90)], cpu=False)
    text = speed_table.table([tmp_path / "2026-02-01-x", tmp_path / "2026-01-01-x"])
    assert "| 0.95 |" in text and "| 0.80 |" not in text and "H200, torch 2.11.0, triton 3.6.0" in text


def test_a_trace_s_peak_memory_on_its_largest_log_is_set_against_its_smallest(tmp_path: Path) -> None:
    folder = tmp_path / "2026-12-02-cpu"
    folder.mkdir()
    (folder / "versions.txt").write_text("python 3.11 · torch 2.13.0+cpu · triton 3.7.1\ngpu: none\n")
    row = "| `graph LOG --json` vs `tlparse LOG`, one log of {} MiB | 1.00 s | 2.00 s | 0.50 | 0.50 | {} MiB | 20 MiB | ≤ 1.00 |\n"
    (folder / "small.txt").write_text(row.format("1.5", 40), encoding="utf-8")
    (folder / "big.txt").write_text(row.format("100", 157), encoding="utf-8")
    growth = speed_table.table([folder]).splitlines()[-1]
    assert "one log of 100 MiB / one of 1.5 MiB (flat in the log's size) | 3.92 |  | ≤ 1.10 | **not met**" in growth
    (folder / "big.txt").write_text(row.format("100", 42), encoding="utf-8")
    assert "| 1.05 |  | ≤ 1.10 | met |" in speed_table.table([folder]).splitlines()[-1]


def test_a_later_sitting_s_small_log_replaces_an_earlier_one_of_another_size(tmp_path: Path) -> None:
    """The generated small log went from 1.5 to 1.4 MiB (make_traces.py interns file names once): one small-log
    row, the later sitting's, and the growth row set against it."""
    row = "| `graph LOG --json` vs `tlparse LOG`, one log of {} MiB | 1.00 s | 2.00 s | {} | 0.50 | {} MiB | 20 MiB | ≤ 1.00 |\n"
    for day, small, rss in (("2026-12-02-cpu", "1.5", 40), ("2026-12-03-cpu", "1.4", 41)):
        folder = tmp_path / day
        folder.mkdir()
        (folder / "versions.txt").write_text("python 3.11 · torch 2.13.0+cpu · triton 3.7.1\ngpu: none\n")
        (folder / "traces.txt").write_text(row.format(small, "0.5" + small[-1], rss) + row.format("100", "0.10", 44),
                                           encoding="utf-8")
    text = speed_table.table([tmp_path / "2026-12-02-cpu", tmp_path / "2026-12-03-cpu"])
    assert "one log of 1.5 MiB |" not in text and "one log of 1.4 MiB | 0.54 |" in text
    assert "one log of 100 MiB / one of 1.4 MiB (flat in the log's size) | 1.07 |" in text
