"""`diff A B [C ...]`: the summary line per variant, N sides against the first, parallel captures.

Pure tests read the stored GPU reports (tests/fixtures/gpu/); the slow one compiles the three
entry variants of one model on CPU, in parallel child processes.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import threading
import time
from pathlib import Path

import pytest

from _expect import REPO, cli_env
from _zygote import run as zygote_run
from tritoninspect.analyse.diff_summary import summary_line
from tritoninspect.model.diff_report import DiffReport
from tritoninspect.run.pipeline import CaptureOptions
from tritoninspect.source.parse import parse_source
from tritoninspect.render.diff import DiffRenderer
from tritoninspect.model.report import Report, read_report
from tritoninspect.children import side as parent
from tritoninspect.children.side import SideResult, build_diff, save_reports, side_labels

GPU = REPO / "tests" / "fixtures" / "gpu"


def gpu(name: str) -> Report:
    return read_report(GPU / f"{name}.json")


def seconds(report: Report) -> float:
    return sum(g.compile_time_s or 0 for g in report.graphs if g.stage == "dynamo")


def test_summary_of_custom_op_against_raw() -> None:
    raw, custom = gpu("add_raw"), gpu("custom_op")
    ratio = seconds(custom) / seconds(raw)
    assert summary_line(raw, custom) == (f"B hides add_kernel from Inductor (custom_op); -1 user kernel launch, "
                                         f"+1 extern call, compile time {ratio:.2f}x")


def test_summary_of_triton_op_and_back() -> None:
    raw, op, custom = gpu("add_raw"), gpu("triton_op"), gpu("custom_op")
    assert summary_line(raw, op).startswith("B enters add_kernel as triton_op (was hop); compile time ")
    assert summary_line(custom, op, "C").startswith("C shows add_kernel to Inductor; +1 user kernel launch")


def test_summary_counts_breaks_and_eager_kernels() -> None:
    line = summary_line(gpu("add_raw"), gpu("graph_break"))
    assert "B adds scale_kernel (eager)" in line and "+2 graph breaks" in line


def test_summary_of_identical_reports() -> None:
    raw = gpu("add_raw")
    assert summary_line(raw, raw) == "B keeps every kernel's entry; compile time 1.00x"


def side(name: str) -> SideResult:
    return SideResult(gpu(name), None, f"{name}.json", saved=True)


def test_three_sides_compare_each_with_the_first(tmp_path: Path) -> None:
    diff = build_diff(side("add_raw"), side("triton_op"), side("custom_op"))
    assert [(p.a.label, p.b.label) for p in diff.comparisons] == [("A", "B"), ("A", "C")]
    assert diff.others[0].summary.startswith("C hides add_kernel from Inductor")
    again = DiffReport.from_json(diff.to_json())
    assert again == diff
    text = DiffRenderer(width=100, color=False).render(diff)
    lines = text.splitlines()
    assert lines[1].startswith("B enters add_kernel as triton_op") and lines[2].startswith("C hides add_kernel")
    assert "A vs B" in lines and "A vs C" in lines
    assert [p.name for p in save_reports(tmp_path, *(side(n) for n in ("add_raw", "triton_op", "custom_op")))] == \
        ["A.json", "B.json", "C.json"]


def test_two_sides_keep_the_old_shape() -> None:
    diff = build_diff(side("add_raw"), side("custom_op"))
    assert diff.others == () and json.loads(diff.to_json())["others"] == []
    assert "A vs B" not in DiffRenderer(width=100, color=False).render(diff).splitlines()


def test_side_labels() -> None:
    assert side_labels(4) == ("A", "B", "C", "D")


def test_sides_are_captured_at_the_same_time(monkeypatch: pytest.MonkeyPatch) -> None:
    running, most = [0], [0]
    lock = threading.Lock()

    def fake_get_side(label: str, source: str, **_: object) -> SideResult:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.2)
        with lock:
            running[0] -= 1
        return SideResult(gpu("add_raw"), None, f"{label}:{source}", saved=False)

    monkeypatch.setattr(parent, "get_side", fake_get_side)
    opts = [CaptureOptions()] * 3
    results = parent.get_sides(["a", "b", "c"], opts, jobs=3)
    assert [r.source for r in results] == ["A:a", "B:b", "C:c"] and most[0] == 3
    most[0] = 0
    parent.get_sides(["a", "b", "c"], opts, jobs=1)
    assert most[0] == 1


def test_the_first_failing_side_in_order_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_get_side(label: str, source: str, **_: object) -> SideResult:
        if source != "ok":
            time.sleep(0.1 if label == "B" else 0)
            raise ValueError(label)
        return SideResult(gpu("add_raw"), None, source, saved=False)

    monkeypatch.setattr(parent, "get_side", fake_get_side)
    with pytest.raises(ValueError, match="B"):
        parent.get_sides(["ok", "bad", "bad"], [CaptureOptions()] * 3, jobs=3)


def test_diff_needs_two_targets() -> None:
    proc = zygote_run([sys.executable, "-m", "tritoninspect", "diff", str(GPU / "add_raw.json")],
                      capture_output=True, text=True, env=cli_env(), cwd=REPO, timeout=120)
    assert proc.returncode == 2 and proc.stderr.startswith("error: diff needs two or more targets")


def test_diff_of_three_saved_reports_on_the_command_line() -> None:
    args = [str(GPU / f"{n}.json") for n in ("add_raw", "triton_op", "custom_op")]
    proc = zygote_run([sys.executable, "-m", "tritoninspect", "diff", *args, "--json"],
                      capture_output=True, text=True, env=cli_env(), cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    diff = DiffReport.from_json(proc.stdout)
    assert [p.b.label for p in diff.comparisons] == ["B", "C"]


@pytest.mark.slow
def test_three_samples_compiled_in_parallel_on_cpu(tmp_path: Path) -> None:
    targets = [f"samples/{n}.py:Net" for n in ("add_raw", "triton_op", "custom_op")]
    proc = zygote_run([sys.executable, "-m", "tritoninspect", "diff", *targets, "--device", "cpu",
                       "--save", str(tmp_path)], capture_output=True, text=True, env=cli_env(), cwd=REPO,
                      timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[1].startswith("B enters add_kernel as triton_op (was hop)")
    assert lines[2].startswith("C hides add_kernel from Inductor (custom_op); -1 user kernel launch, +1 extern call")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["A.json", "B.json", "C.json"]
    # Piped stderr: a line per side per stage, as the children go; each side says when it is done.
    progress = proc.stderr.splitlines()
    for label in "ABC":
        assert any(re.fullmatch(rf"\[ *\d+\.\d s\] {label}: Dynamo: tracing the first call", p) for p in progress)
        assert any(re.fullmatch(rf"\[ *\d+\.\d s\] {label}: done \(\d+\.\d s\)", p) for p in progress)


def test_overlapping_captures_give_no_compile_time_ratio() -> None:
    """A and B compiled at once (sharing the CPU), C alone: no ratio where a side was contended."""
    raw, op, custom = gpu("add_raw"), gpu("triton_op"), gpu("custom_op")
    a = SideResult(raw, None, "a.py:A", saved=False, span=(0.0, 10.0))
    b = SideResult(op, None, "b.py:B", saved=False, span=(1.0, 9.0))
    c = SideResult(custom, None, "c.py:C", saved=False, span=(20.0, 25.0))
    assert parent.contended([a, b, c]) == [True, True, False]
    diff = build_diff(a, b, c)
    for pair in diff.comparisons:  # A was contended: neither ratio is honest
        assert "compile time" not in pair.summary
        assert any("-j1" in note for note in pair.notes)
    text = DiffRenderer(width=100, color=False).render(diff)
    assert "no compile-time ratio: sides compiled in parallel; use -j1" in text
    # One after the other (-j1): the ratio is back, with no note.
    alone = build_diff(a, dataclasses.replace(b, span=(11.0, 19.0)))
    assert "compile time" in alone.summary and not alone.notes
    # Saved reports have no span: contended only when saved so.
    assert parent.contended([side("add_raw"), side("custom_op")]) == [False, False]


def test_saved_reports_of_parallel_sides_give_no_compile_time_ratio_either(tmp_path: Path) -> None:
    """`diff X Y --save DIR` withheld the ratio (the sides shared the CPU), but `diff DIR/A.json
    DIR/B.json` printed one: the saved sides now say they were contended."""
    def load(label: str, path: Path) -> SideResult:
        return parent.get_side(label, parse_source(str(path)), options=CaptureOptions())

    raw, op = gpu("add_raw"), gpu("triton_op")
    a = SideResult(raw, None, "a.py:A", saved=False, span=(0.0, 10.0))
    b = SideResult(op, None, "b.py:B", saved=False, span=(1.0, 9.0))
    live = build_diff(a, b)
    assert "compile time" not in live.summary
    paths = parent.save_reports(tmp_path, a, b)
    again = build_diff(*(load(label, p) for label, p in zip("AB", paths)))
    assert "compile time" not in again.summary and any("-j1" in note for note in again.notes)
    assert all(parent.was_contended(read_report(p)) for p in paths)
    # Captured one after the other: saved as they are, and the ratio stays.
    alone = parent.save_reports(tmp_path / "alone", a, dataclasses.replace(b, span=(11.0, 19.0)))
    assert not any(parent.was_contended(read_report(p)) for p in alone)
    assert "compile time" in build_diff(*(load(label, p) for label, p in zip("AB", alone))).summary


def test_child_stages_reach_the_display_as_the_child_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """run_child passes on the stages a child writes, while it runs, labelled by SidesDisplay."""
    import io

    from rich.console import Console

    from tritoninspect.commands._progress import SidesDisplay

    script = tmp_path / "child.py"
    script.write_text(
        "import json, sys, time\n"
        "request = json.load(open(sys.argv[1]))\n"
        "with open(request['stages'], 'a') as f:\n"
        "    for stage in ('importing torch and Triton', 'Dynamo: tracing the first call'):\n"
        "        f.write(stage + '\\n'); f.flush(); time.sleep(0.3)\n"
        "open(sys.argv[2], 'w').write(json.dumps({'ok': 1}))\n")
    monkeypatch.setattr(parent, "child_command", lambda request, out: [sys.executable, str(script), str(request), str(out)])
    out = io.StringIO()
    ticks = iter(range(100))
    display = SidesDisplay(Console(file=out, width=100), "compiling", ["A", "B"], clock=lambda: float(next(ticks)))
    seen: list[tuple[str, float]] = []
    with display:
        payload, code, _ = parent.run_child({"target": "x"}, on_stage=lambda m: (display("B", m),
                                                                                  seen.append((m, time.monotonic()))))
    assert payload == {"ok": 1} and code == 0
    assert out.getvalue().splitlines() == ["[  1.0 s] B: importing torch and Triton",
                                           "[  2.0 s] B: Dynamo: tracing the first call"]
    assert seen[1][1] - seen[0][1] > 0.1  # passed on as written, not all at the end
    quiet = io.StringIO()
    with SidesDisplay(Console(file=quiet), "compiling", ["A"], lines=False) as shown:
        shown("A", "Dynamo: tracing")
    assert quiet.getvalue() == ""


def test_sides_display_on_a_terminal_shows_each_side_and_the_time() -> None:
    from rich.text import Text

    from tritoninspect.commands._progress import SidesDisplay

    display = SidesDisplay(None, "compiling 2 targets", ["A", "B"], clock=lambda: 12.0)
    display._status = object()  # a live status: no lines
    display("A", "Inductor: compiling 0/0 inference")
    text = display.__rich__()
    assert isinstance(text, Text)
    assert text.plain.splitlines() == ["compiling 2 targets · 0 s", "  A: Inductor: compiling 0/0 inference",
                                       "  B: waiting"]


def test_get_sides_tells_progress_which_side(monkeypatch: pytest.MonkeyPatch) -> None:
    heard: list[tuple[str, str]] = []

    def fake_get_side(label: str, source: str, *, progress: object = None, **_: object) -> SideResult:
        progress(label, f"compiling {source}")
        return SideResult(gpu("add_raw"), None, source, saved=False)

    monkeypatch.setattr(parent, "get_side", fake_get_side)
    parent.get_sides(["a", "b"], [CaptureOptions()] * 2, jobs=1, progress=lambda *a: heard.append(a))
    assert heard == [("A", "compiling a"), ("B", "compiling b")]
