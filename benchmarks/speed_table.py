"""The README's speed table, made from the benchmark outputs kept in benchmarks/results/.

Each folder there is one sitting on one machine: `versions.txt` (what `benchmarks/versions.py` prints:
Python, torch, Triton, the GPU, the tree) and the outputs of `bench_graph.py`, `bench_breaks.py` and
`bench_traces.py` as they printed them (`*.txt`). This script reads the ratio lines those scripts print
(`_common.report_ratio`) and the trace benchmark's table rows, and prints one Markdown table: the latest
figure of every row, machine by machine. `--write README.md` puts it between the README's
`<!-- speed-table -->` markers; tests/test_speed_table.py checks that the README holds what this prints.

    python benchmarks/speed_table.py                  # print the table
    python benchmarks/speed_table.py --write README.md
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
BEGIN, END = "<!-- speed-table -->", "<!-- /speed-table -->"

#: bench_graph / bench_breaks: "sample benchmarks/models/stack.py · device cuda · median of 3 fresh processes"
_HEADER = re.compile(r"^sample (?P<sample>\S+) · device (?P<device>\w+) · median of (?P<n>\d+) fresh processes$")
#: `_common.report_ratio`: "graph / plain torch.compile, cold caches: 0.92 (target <= 0.90) OVER; best of 3: 0.897"
_RATIO = re.compile(r"^(?P<label>[^:]+): (?P<ratio>\d+\.\d+)(?: \(target <= (?P<target>\d+\.\d+)\) (?P<verdict>OK|OVER))?;")
#: bench_breaks' CPU line: "breaks / explain (cpu): 0.86"
_CPU_LINE = re.compile(r"^breaks / explain \(cpu\): (?P<ratio>\d+\.\d+)$")
_CPU_BLOCK = "the same ratios in CPU time"
_RSS_BLOCK = "peak RSS"
#: bench_traces' table: | what | tritoninspect | tlparse | ratio (wall) | ratio (CPU) | peak RSS | tlparse peak RSS | target |
_TRACE_ROW = re.compile(r"^\| (?P<what>[^|]+) \| [^|]+ \| [^|]+ \| (?P<wall>\d+\.\d+) \| (?P<cpu>\d+\.\d+) \| "
                        r"(?P<rss>\d+) MiB \| [^|]+ \| ≤ (?P<target>\d+\.\d+) \|$")
#: A single log's size in a trace row's name: "..., one log of 100 MiB".
_ONE_LOG = re.compile(r"one log of (?P<mib>\d+(?:\.\d+)?) MiB$")
#: Issue 26: a trace's peak memory should not grow with the log's size; "flat" within a tenth.
FLAT_TARGET = 1.10


@dataclass(frozen=True)
class Row:
    machine: str
    what: str
    wall: float
    cpu: float | None
    target: float
    runs: str
    #: As the benchmark judged it (the median's ratio unrounded); the trace table's rows are judged here.
    met: bool
    #: Trace rows: tritoninspect's peak RSS (MiB).
    rss: float | None = None

    def markdown(self) -> str:
        cpu = "" if self.cpu is None else f"{self.cpu:.2f}"
        verdict = "met" if self.met else "**not met**"
        return (f"| {self.machine} | {self.what} | {self.wall:.2f} | {cpu} | ≤ {self.target:.2f} | {verdict} | "
                f"{self.runs} |")


def machine_of(folder: Path) -> str:
    """"H200, torch 2.11.0+cu130, triton 3.6.0" from the folder's versions.txt."""
    text = (folder / "versions.txt").read_text(encoding="utf-8")
    versions = re.search(r"torch (\S+) · triton (\S+)", text)
    gpu = re.search(r"^gpu: (.+)$", text, re.M)
    where = gpu.group(1).replace("NVIDIA ", "") if gpu and gpu.group(1) != "none" else "CPU"
    return f"{where}, torch {versions.group(1)}, triton {versions.group(2)}" if versions else where


def rows_of(path: Path, machine: str) -> list[Row]:
    """The rows one benchmark output holds."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if any(_TRACE_ROW.match(line) for line in lines):
        return [Row(machine, m["what"].strip(), float(m["wall"]), float(m["cpu"]), float(m["target"]), "",
                    float(m["wall"]) <= float(m["target"]), float(m["rss"]))
                for m in map(_TRACE_ROW.match, lines) if m]
    header = next((m for m in map(_HEADER.match, lines) if m), None)
    if header is None:
        return []
    model = Path(header["sample"]).stem
    runs = f"median of {header['n']}"
    wall: dict[str, tuple[float, float, bool]] = {}
    cpu: dict[str, float] = {}
    block = "wall"
    for line in lines:
        if line.startswith(_CPU_BLOCK):
            block = "cpu"
        elif line.startswith(_RSS_BLOCK):
            block = "rss"
        elif (m := _CPU_LINE.match(line)) is not None:
            cpu["breaks / explain (wall)"] = float(m["ratio"])
        elif (m := _RATIO.match(line)) is not None and m["target"] is not None:
            if block == "cpu":
                cpu[m["label"]] = float(m["ratio"])
            else:
                wall[m["label"]] = (float(m["ratio"]), float(m["target"]), m["verdict"] == "OK")
    return [Row(machine, _what(label, model), ratio, None if "RSS" in label else cpu.get(label), target, runs,
                met) for label, (ratio, target, met) in wall.items()]


def _what(label: str, model: str) -> str:
    """A ratio line's label as the table names its row."""
    if label.startswith("--help"):
        return "`tritoninspect --help` / `import torch`"
    label = label.replace(" (wall)", "").replace("graph / ", "`graph` / ")
    return f"{label.replace('breaks / explain', '`breaks` / `torch._dynamo.explain`')}, `{model}`"


def table(folders: list[Path]) -> str:
    """The latest figure of each row, folders in name order (dates first, so the last one wins)."""
    latest: dict[tuple[str, str], Row] = {}
    for folder in sorted(folders):
        machine = machine_of(folder)
        for path in sorted(folder.glob("*.txt")):
            if path.name != "versions.txt":
                for row in rows_of(path, machine):
                    latest[_key(row)] = row
    rows = list(latest.values())
    rows += [row for machine in dict.fromkeys(r.machine for r in rows) if (row := _growth(rows, machine))]
    lines = ["| machine | what | ratio (wall) | ratio (CPU) | target | | runs |", "|---|---|---|---|---|---|---|"]
    lines += [row.markdown() for row in rows]
    return "\n".join(lines) + "\n"


def _key(row: Row) -> tuple[str, str]:
    """A row's place in the table: its machine and what it measures. A single trace log's row is the small
    or the big log's, whatever size the generated log had in that sitting (`make_traces.py` changed it)."""
    match = _ONE_LOG.search(row.what)
    if match is None:
        return row.machine, row.what
    return row.machine, row.what[:match.start()] + ("small log" if float(match["mib"]) < _SMALL_MIB else "big log")


#: A generated trace log under this size is the benchmark's small one.
_SMALL_MIB = 10.0


def _growth(rows: list[Row], machine: str) -> Row | None:
    """Peak memory on the largest single log over that on the smallest, the latest row of each (the trace
    benchmark's "peak RSS" column; its small and big logs are timed in one sitting): 1.00 is flat in the
    log's size."""
    logs = sorted((float(m["mib"]), row) for row in rows if row.machine == machine and row.rss is not None
                  and (m := _ONE_LOG.search(row.what)))
    if len(logs) < 2:
        return None
    (small, low), (big, high) = logs[0], logs[-1]
    ratio = high.rss / low.rss
    what = f"peak RSS of `graph LOG --json`, one log of {big:g} MiB / one of {small:g} MiB (flat in the log's size)"
    return Row(machine, what, ratio, None, FLAT_TARGET, "", ratio <= FLAT_TARGET)


def write_into(readme: Path, text: str) -> None:
    body = readme.read_text(encoding="utf-8")
    start, end = body.index(BEGIN) + len(BEGIN), body.index(END)
    readme.write_text(body[:start] + "\n" + text + body[end:], encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, metavar="README", help="put the table between its markers there")
    args = parser.parse_args()
    text = table([p for p in RESULTS.iterdir() if p.is_dir()])
    if args.write:
        write_into(args.write, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
