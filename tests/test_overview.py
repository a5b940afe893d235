"""The default `graph` text (render/overview.py) and its kernel summaries, from saved reports only.

Gold files: tests/gold/overview/<sample>.<width>.txt for every stored GPU report
(tests/fixtures/gpu/, see tests/fixtures/README.md) and the hand-written report_small.json,
at 80 and 120 columns. Rewrite them with TRITONINSPECT_UPDATE_GOLD=1.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
from pathlib import Path, PurePath

import pytest

from tritoninspect.analyse.summary import short_location, short_path, summarise
from tritoninspect.render.overview import clones_cell, render_overview
from tritoninspect.model.report import Report, read_report

TESTS = Path(__file__).parent
REPO = TESTS.parent
GOLD = TESTS / "gold" / "overview"
MISMATCH = TESTS / "gold" / "_mismatch"
UPDATE_GOLD = os.environ.get("TRITONINSPECT_UPDATE_GOLD") == "1"
SAMPLES = sorted(p.stem for p in (TESTS / "fixtures" / "gpu").glob("*.json"))
WIDTHS = (80, 120)


def load(name: str) -> Report:
    """A stored report, its sample paths moved under this checkout (they hold the GPU machine's)."""
    path = TESTS / "fixtures" / ("report_small.json" if name == "report_small" else f"gpu/{name}.json")
    report = read_report(path)
    kernels = tuple(dataclasses.replace(k, file=_here(k.file)) for k in report.kernels)
    breaks = tuple(dataclasses.replace(b, file=_here(b.file)) for b in report.graph_breaks)
    meta = dataclasses.replace(report.meta, tool_version="<tool_version>", torch="<torch>", triton="<triton>",
                               python="<python>")
    return dataclasses.replace(report, meta=meta, kernels=kernels, graph_breaks=breaks)


def _here(file: str | None) -> str | None:
    if file is None or "/samples/" not in file:
        return file
    return str(REPO / "samples" / file.rsplit("/samples/", 1)[1])


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(REPO)
    return REPO


def compare_gold(name: str, actual: str) -> None:
    gold = GOLD / name
    if UPDATE_GOLD:
        gold.parent.mkdir(parents=True, exist_ok=True)
        gold.write_text(actual, encoding="utf-8")
        return
    assert gold.exists(), f"missing {gold}; create it with TRITONINSPECT_UPDATE_GOLD=1"
    expected = gold.read_text(encoding="utf-8")
    if actual != expected:
        MISMATCH.mkdir(parents=True, exist_ok=True)
        (MISMATCH / name).write_text(actual, encoding="utf-8")
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), name, "actual"))
        pytest.fail(f"{name} differs from its gold file:\n{diff[:4000]}")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", [*SAMPLES, "report_small"])
def test_overview_gold(name: str, width: int, in_repo: Path) -> None:
    compare_gold(f"{name}.{width}.txt", render_overview(load(name), color=False, width=width) + "\n")


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", [*SAMPLES, "report_small"])
def test_overview_fits_and_never_splits_a_name(name: str, width: int, in_repo: Path) -> None:
    report = load(name)
    text = render_overview(report, color=False, width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    words = set(text.split())
    for k in summarise(report):
        # Each kernel's name and short source location stand whole on some line.
        assert k.name in words and k.source in words, (k.name, k.source)


def test_overview_is_one_screen_for_every_sample(in_repo: Path) -> None:
    for name in SAMPLES:
        lines = render_overview(load(name), color=False, width=120).splitlines()
        assert len(lines) <= 50, (name, len(lines))


def test_custom_op_row_says_opaque_not_missing(in_repo: Path) -> None:
    text = render_overview(load("custom_op"), color=False, width=120)
    row = next(line for line in text.splitlines() if line.startswith("add_kernel"))
    assert row.split()[1:3] == ["custom_op", "0/0"] and row.rstrip().endswith("opaque")
    assert "in output code: no" not in text and "MISSING" not in text
    assert "torch.library.triton_op" in text and "wrap_triton" in text


def test_inplace_row_shows_the_clone_left_after_reinplacing(in_repo: Path) -> None:
    (k,) = summarise(load("inplace"))
    # The n=64 launch is re-inplaced; the launch on the x[:32] view still clones 32 floats.
    assert (k.cloned, k.clone_bytes) == (("x_ptr",), 128)
    assert clones_cell(k) == "x_ptr 128 B"
    (raw,) = summarise(load("add_raw"))
    assert (raw.cloned, raw.reinplaced, clones_cell(raw)) == ((), ("out_ptr",), "none")
    assert (raw.before, raw.after) == (("sin",), ("cos", "mul"))


def test_eager_kernel_row(in_repo: Path) -> None:
    kernels = {k.name: k for k in summarise(load("graph_break"))}
    assert (kernels["scale_kernel"].verdict, kernels["scale_kernel"].eager_launches) == ("eager", 1)
    assert kernels["add_kernel"].compile_ids == ("0/0", "2/0") and kernels["add_kernel"].verdict == "visible"


def test_missing_kernel_verdict(in_repo: Path) -> None:
    kernels = {k.name: k for k in summarise(load("report_small"))}
    assert kernels["sub_kernel"].verdict == "missing" and kernels["sub_kernel"].missing == ("1/1",)


def test_a_triton_version_the_report_does_not_know_is_said_unknown(in_repo: Path) -> None:
    """A TORCH_TRACE of a CPU run names no Triton version (its compilation_metrics hold none): the header read
    "triton ·"."""
    from tritoninspect.render.terminal import TerminalRenderer

    report = load("add_raw")
    unknown = dataclasses.replace(report, meta=dataclasses.replace(report.meta, triton=""))
    assert f"triton {report.meta.triton} " in render_overview(report, color=False, width=120)
    assert "· triton unknown" in render_overview(unknown, color=False, width=120)
    assert "· triton unknown ·" in TerminalRenderer(color=False, width=120).render(unknown)


def test_compile_time_per_stage_in_the_text(in_repo: Path) -> None:
    report = load("add_raw")
    backend = sum(g.compile_time_s or 0 for g in report.graphs if g.stage == "dynamo")
    inductor = sum(g.compile_time_s or 0 for g in report.graphs if g.stage.startswith("aot_"))
    text = render_overview(report, color=False, width=120)
    assert f"Inductor {inductor:.2f} s = {backend:.2f} s" in text


@pytest.mark.parametrize(("file", "expected"), [
    ("/x/.venv/lib/python3.11/site-packages/liger_kernel/ops/rms_norm.py", "liger_kernel/ops/rms_norm.py"),
    ("/usr/lib/python3/dist-packages/pkg/mod.py", "pkg/mod.py"),
    ("/elsewhere/deep/dir/model.py", "dir/model.py"),
    ("samples/add_raw.py", "samples/add_raw.py"),
])
def test_short_path(file: str, expected: str) -> None:
    assert short_path(file, cwd=Path("/work/checkout")) == expected


def test_short_path_relative_to_cwd() -> None:
    assert short_location("/work/checkout/samples/a.py", 3, cwd=Path("/work/checkout")) == "samples/a.py:3"
    assert short_location(None, None) == "-"
    assert PurePath(short_path(str(REPO / "samples" / "a.py"), cwd=REPO)) == PurePath("samples/a.py")


def test_no_word_is_split_at_80_columns_in_the_stacked_layout(in_repo: Path) -> None:
    text = render_overview(load("recompile_constexpr"), color=False, width=80)
    assert "samples/recompile_constexpr.py:20" in text.split()
    assert not re.search(r"\bvisib$", text, re.M)


@pytest.mark.slow
def test_graph_of_a_file_alone_prints_the_summary_and_progress() -> None:
    import sys

    from _expect import cli_env
    from _zygote import run as zygote_run

    proc = zygote_run([sys.executable, "-m", "tritoninspect", "graph", "samples/custom_op.py", "--device", "cpu"],
                      capture_output=True, text=True, env=cli_env(), cwd=REPO, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("samples/custom_op.py:Net")
    row = next(line for line in lines if line.startswith("add_kernel"))
    assert row.split()[1:3] == ["custom_op", "0/0"] and row.endswith("opaque")
    assert "torch.library.triton_op" in proc.stdout
    stages = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert any("Inductor: compiling 0/0 inference" in line for line in stages), proc.stderr


def test_kernel_option_narrows_the_detail_to_one_kernel(in_repo: Path) -> None:
    from typer.testing import CliRunner

    from tritoninspect.cli import app

    saved = str(TESTS / "fixtures" / "gpu" / "graph_break.json")
    result = CliRunner().invoke(app, ["graph", saved, "--kernel", "scale_kernel"])
    assert result.exit_code == 0, result.output
    assert "User-defined Triton kernels (1)" in result.stdout and "add_kernel  " not in result.stdout
    # Spelled in another Unicode form of the same identifier (fullwidth "ａ": NFKC makes it "a", as Python does
    # with the name in a `def`), it is the same kernel.
    other_form = CliRunner().invoke(app, ["graph", saved, "--kernel", "scale_kernel".replace("a", "\uff41")])
    assert other_form.exit_code == 0 and other_form.stdout == result.stdout, other_form.output
    wrong = CliRunner().invoke(app, ["graph", saved, "--kernel", "nope"])
    assert wrong.exit_code == 2
    assert "--kernel nope: no such kernel in this report; kernels: add_kernel, scale_kernel" in wrong.stderr
    empty = CliRunner().invoke(app, ["graph", saved, "--kernel", ""])  # was the whole report, exit 0
    assert empty.exit_code == 2 and "no such kernel in this report" in empty.stderr
    detail = CliRunner().invoke(app, ["graph", saved, "--detail"])
    assert "Verdict" in detail.stdout and "Findings, by impact" in detail.stdout  # --detail keeps every finding


def test_kernel_option_leaves_out_the_breaks_of_other_kernels_as_it_does_their_findings(in_repo: Path) -> None:
    """`graph --kernel add_kernel` left out the break scale_kernel's eager launch follows from the findings,
    but kept it in the graph-break table, under a count that read as this kernel's (hostile, finding H). The
    table now holds the run's breaks tied to no kernel and those tied to this one, and its title says how many
    it leaves out; the counts line stays the run's."""
    from typer.testing import CliRunner

    from tritoninspect.cli import app

    saved = str(TESTS / "fixtures" / "gpu" / "graph_break.json")
    report = read_report(saved)
    assert [(b.kernel, b.eager_kernels) for b in report.graph_breaks] == [("scale_kernel", ("scale_kernel",)), (None, ())]
    tied, untied = report.graph_breaks
    add = CliRunner().invoke(app, ["graph", saved, "--kernel", "add_kernel"])
    assert add.exit_code == 0, add.output
    assert "graph breaks: 2 · recompiles: 0" in add.stdout
    assert "Graph breaks (1 of the run's 2): 1 tied only to other kernels left out" in add.stdout
    table = add.stdout.split("Graph breaks (1 of", 1)[1].split("\n\n", 1)[0]
    assert f":{untied.line} " in table and f":{tied.line} " not in table
    scale = CliRunner().invoke(app, ["graph", saved, "--kernel", "scale_kernel"])
    assert "Graph breaks (2)\n" in scale.stdout and "left out" not in scale.stdout
    whole = CliRunner().invoke(app, ["graph", saved, "--detail"])
    assert "Graph breaks (2)\n" in whole.stdout
    assert report.breaks_shown() == report.graph_breaks
    assert report.narrowed("add_kernel").breaks_shown() == (untied,)


def test_clone_bytes_are_per_call_not_summed_over_recompiles(in_repo: Path) -> None:
    """A recompile (0/1) replaces its frame's first compile (0/0) for the calls after it: a call
    copies one compile's bytes, not both. A frame after a graph break (1/0) runs in the same call."""
    report = load("inplace")
    (kernel,) = report.kernels
    aot = [o for o in kernel.occurrences if o.clones is not None]
    assert sum(o.clones.bytes for o in aot) == 128
    again = tuple(dataclasses.replace(o, compile_id="0/1") for o in aot)
    recompiled = dataclasses.replace(kernel, occurrences=(*kernel.occurrences, *again))
    (k,) = summarise(dataclasses.replace(report, kernels=(recompiled,)))
    assert k.clone_bytes == 128 and clones_cell(k) == "x_ptr 128 B"
    after_break = tuple(dataclasses.replace(o, compile_id="1/0") for o in aot)
    both = dataclasses.replace(kernel, occurrences=(*kernel.occurrences, *again, *after_break))
    (k,) = summarise(dataclasses.replace(report, kernels=(both,)))
    assert k.clone_bytes == 256


def test_a_library_model_fits_one_screen_and_detail_keeps_every_finding(in_repo: Path) -> None:
    """moe-ops (4 kernels in the library's own custom ops; tests/fixtures/advice/moe_ops_layer.json): one finding
    for one cause, at most 45 lines at 120 columns; `--detail` still lists each kernel's finding."""
    from tritoninspect.render.terminal import TerminalRenderer

    report = read_report(TESTS / "fixtures" / "advice" / "moe_ops_layer.json")
    text = render_overview(report, width=120, color=False)
    assert len(text.splitlines()) <= 45, text
    assert "Findings, by impact (1)" in text and text.count("why:") == 1
    assert "moe-ops 0.1.0" in text and "samples/" not in text
    detail = " ".join(TerminalRenderer(width=120, color=False).render(report).split())
    for kernel in ("_fused_topk_softmax_fwd_kernel_2d", "_group_offsets_kernel", "_permute_countsort_kernel",
                   "_unpermute_kernel"):
        assert f"hides {kernel} from Inductor" in detail
