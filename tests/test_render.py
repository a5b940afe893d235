"""Renderer tests: golden files over one fixed report, plus format guessing, --show, --dump and imports.

Gold files live in tests/gold/. Set TRITONINSPECT_UPDATE_GOLD=1 to rewrite them; a mismatch
is saved to tests/gold/_mismatch/ (ignored by git) for a diff.
"""

from __future__ import annotations

import dataclasses
import difflib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from tritoninspect.analyse.advice import with_advice
from tritoninspect.render.overview import render_overview
from tritoninspect.render import (
    JSONRenderer,
    TerminalRenderer,
    available_stages,
    dump_artifacts,
    guess_format_from_path,
    render,
    render_stage,
)
from tritoninspect.render.dump import MARKER
from tritoninspect.render.stage import MARK, SHOW_STAGES
from tritoninspect.model.report import Meta, OpaqueOp, Report, read_report, with_meta

TESTS = Path(__file__).parent
REPO = TESTS.parent
FIXTURE = TESTS / "fixtures" / "report_small.json"
GOLD = TESTS / "gold"
MISMATCH = GOLD / "_mismatch"
UPDATE_GOLD = os.environ.get("TRITONINSPECT_UPDATE_GOLD") == "1"
ANSI = "\x1b["


@pytest.fixture
def report() -> Report:
    return Report.from_json(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from an empty directory, so file:line columns do not depend on where pytest started."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- golden-file machinery ---------------------------------------------------------------------


def scrub(text: str, report: Report) -> str:
    """Replace what differs between machines and releases with placeholders."""
    meta = report.meta
    values = {
        meta.tool_version: "<tool_version>",
        meta.torch: "<torch>",
        meta.triton: "<triton>",
        meta.python: "<python>",
        str(REPO): "<repo>",
        str(Path.home()): "<home>",
    }
    # Longest first, so "2.13.0+cpu" is not half-replaced by a shorter version string.
    for value in sorted((v for v in values if len(v) >= 3), key=len, reverse=True):
        text = text.replace(value, values[value])
    return re.sub(r"/tmp/[\w.-]+(/[\w.-]+)*", "<tmp>", text)


def compare_gold(name: str, actual: str, report: Report) -> None:
    """Compare with tests/gold/<name>, or rewrite it when TRITONINSPECT_UPDATE_GOLD=1."""
    actual = scrub(actual, report)
    gold = GOLD / name
    if UPDATE_GOLD:
        gold.write_text(actual, encoding="utf-8")
        return
    if not gold.exists():
        pytest.fail(f"missing gold file {gold}; create it with TRITONINSPECT_UPDATE_GOLD=1")
    expected = gold.read_text(encoding="utf-8")
    if actual == expected:
        return
    MISMATCH.mkdir(parents=True, exist_ok=True)
    (MISMATCH / name).write_text(actual, encoding="utf-8")
    diff = "".join(
        difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True), f"gold/{name}", "actual"
        )
    )
    pytest.fail(f"{name} differs from its gold file (actual saved in {MISMATCH / name}):\n{diff[:4000]}")


# --- golden files ------------------------------------------------------------------------------


def test_terminal_gold(report: Report, in_tmp: Path) -> None:
    compare_gold("terminal.txt", TerminalRenderer(width=100, color=False).render(report) + "\n", report)


def test_json_gold(report: Report) -> None:
    compare_gold("report.json", JSONRenderer().render(report) + "\n", report)


@pytest.mark.parametrize("stage", list(SHOW_STAGES))
def test_show_stage_gold(report: Report, stage: str) -> None:
    compare_gold(f"show_{stage}.txt", render_stage(report, stage, color=False, width=100) + "\n", report)


# --- the report model, as the renderers rely on it ---------------------------------------------


def test_fixture_round_trips(report: Report) -> None:
    assert Report.from_json(report.to_json()) == report


def test_opaque_op_kernels_round_trip(report: Report) -> None:
    op = OpaqueOp("1/0", "aot_forward", "tisample::opaque_scale", "opaque_scale", ("scale_kernel",))
    with_kernels = dataclasses.replace(report, opaque_ops=(op,))
    assert Report.from_json(with_kernels.to_json()) == with_kernels


# --- format selection --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [("out.json", "json"), ("OUT.JSON", "json"), ("report.txt", "text"), ("report", "text"), (None, "text")],
)
def test_guess_format_from_path(path: str | None, expected: str) -> None:
    assert guess_format_from_path(path) == expected


def test_guess_format_html() -> None:
    assert guess_format_from_path(Path("report.html")) == guess_format_from_path(Path("r.HTM")) == "html"


def test_render_dispatches(report: Report, in_tmp: Path) -> None:
    # A report without its advice (saved before Report.advice) gets it in the JSON.
    assert not report.advice and render(report, "json") == with_advice(report).to_json()
    assert with_advice(report).advice and render(with_advice(report), "json") == with_advice(report).to_json()
    assert render(report, "text", color=False) == render_overview(report, color=False)
    assert render(report, "detail", color=False) == TerminalRenderer(color=False).render(report)
    assert render(report, "text", show="aot", color=False) == render_stage(report, "aot", color=False)
    # Like to_json(), text comes without a final newline; the CLI adds one.
    assert not render(report, "text", color=False).endswith("\n")


@pytest.mark.parametrize(("fmt", "message"), [("xml", "unknown output format")])
def test_render_rejects_formats(report: Report, fmt: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render(report, fmt)


def test_render_show_needs_text(report: Report) -> None:
    with pytest.raises(ValueError, match="--show"):
        render(report, "json", show="dynamo")


# --- terminal details --------------------------------------------------------------------------


def test_plain_output_is_fixed_width_and_uncoloured(report: Report, in_tmp: Path) -> None:
    text = TerminalRenderer(color=False).render(report)
    assert ANSI not in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_colour_output_has_ansi(report: Report, in_tmp: Path) -> None:
    assert ANSI in TerminalRenderer(width=120, color=True).render(report)


def test_gpu_mode_header(report: Report, in_tmp: Path) -> None:
    gpu = with_meta(report, mode="gpu", device="NVIDIA H200")
    text = TerminalRenderer(color=False).render(gpu)
    assert "mode: gpu (NVIDIA H200)" in text
    assert "compile-only" not in text


def test_empty_report_keeps_only_the_kernel_table(report: Report) -> None:
    text = TerminalRenderer(color=False).render(Report(meta=report.meta))
    assert "no user-defined Triton kernels were seen" in text
    for section in ("Opaque ops", "Graph breaks", "Recompiles", "Diagnostics", "Verdict"):
        assert section not in text


def test_source_is_relative_to_cwd(report: Report, in_tmp: Path) -> None:
    kernel = dataclasses.replace(report.kernels[0], file=str(in_tmp / "pkg" / "kernels.py"))
    moved = dataclasses.replace(report, kernels=(kernel,))
    text = TerminalRenderer(color=False).render(moved)
    assert f"pkg{os.sep}kernels.py:12" in text
    assert str(in_tmp) not in text


# --- --show ------------------------------------------------------------------------------------


def _marked(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(MARK)]


def test_show_marks_kernel_lines(report: Report) -> None:
    code = render_stage(report, "code", color=False)
    marked = _marked(code)
    assert any("add_kernel_0.run(" in line for line in marked)
    assert any("def sub_kernel(" in line for line in marked)
    # An opaque op ("tisample::opaque_scale") appears in code as tisample.opaque_scale.
    assert any("buf0 = torch.ops.tisample.opaque_scale.default" in line for line in marked)
    assert not any("del arg0_1" in line for line in marked)


def test_show_marks_hops_and_triton_ops(report: Report) -> None:
    marked = _marked(render_stage(report, "dynamo", color=False))
    assert any("triton_kernel_wrapper_mutation(" in line for line in marked)
    assert any("torch.ops.tisample.mul.default" in line for line in marked)
    assert not any("torch.empty_like" in line for line in marked)


def test_show_headings(report: Report) -> None:
    text = render_stage(report, "aot", color=False)
    assert "== aot_forward [0/0] ==" in text
    assert "== post_grad forward [0/0] ==" in render_stage(report, "post-grad", color=False)


def test_show_colour_uses_syntax_pointer(report: Report) -> None:
    text = render_stage(report, "code", color=True, width=120)
    assert ANSI in text and "❱" in text


def test_show_missing_stage_lists_available(report: Report) -> None:
    only_dynamo = dataclasses.replace(report, graphs=tuple(g for g in report.graphs if g.stage == "dynamo"))
    assert available_stages(only_dynamo) == ["dynamo"]
    message = render_stage(only_dynamo, "code", color=False)
    assert "no code graphs" in message and "dynamo" in message
    with pytest.raises(ValueError, match="stages it has: dynamo"):
        render(only_dynamo, "text", show="code")


def test_show_unknown_stage(report: Report) -> None:
    with pytest.raises(ValueError, match="unknown stage"):
        render_stage(report, "inductor-ir")


# --- --dump ------------------------------------------------------------------------------------

EXPECTED_DUMP = {
    "0_0_dynamo.py",
    "0_0_aot_forward.py",
    "0_0_post_grad_forward.py",
    "0_0_output_code_forward.py",
    "1_0_dynamo.py",
    "1_0_aot_forward.py",
    "1_0_output_code_forward.py",
    "1_1_dynamo.py",
    "1_1_aot_forward.py",
    "report.json",
    "graph_breaks.txt",
}


def test_dump_writes_expected_files(report: Report, tmp_path: Path) -> None:
    target = tmp_path / "nested" / "dump"
    written = dump_artifacts(report, target)
    assert {p.name for p in written} == EXPECTED_DUMP
    assert {p.name for p in target.iterdir()} == EXPECTED_DUMP | {MARKER}
    assert (target / "0_0_dynamo.py").read_text() == report.graphs[0].code
    assert Report.from_json((target / "report.json").read_text()) == report
    breaks = (target / "graph_breaks.txt").read_text()
    assert "Hint: Set `torch._dynamo.config.capture_scalar_outputs = True`" in breaks
    assert "/src/model.py:52 in log_launch" in breaks


def test_dump_refuses_foreign_directory(report: Report, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not written by tritoninspect"):
        dump_artifacts(report, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_dump_refuses_a_file(report: Report, tmp_path: Path) -> None:
    path = tmp_path / "report.txt"
    path.write_text("x")
    with pytest.raises(ValueError, match="not a directory"):
        dump_artifacts(report, path)


def test_dump_overwrites_its_own_directory(report: Report, tmp_path: Path) -> None:
    dump_artifacts(report, tmp_path)
    (tmp_path / "notes.txt").write_text("added by the user")
    smaller = dataclasses.replace(report, graphs=report.graphs[:1])
    written = dump_artifacts(smaller, tmp_path)
    names = {p.name for p in tmp_path.iterdir()}
    # Graph files of the first dump are gone; the user's file is untouched.
    assert names == {p.name for p in written} | {MARKER, "notes.txt"}
    assert "1_0_dynamo.py" not in names
    assert (tmp_path / "notes.txt").read_text() == "added by the user"


# --- layering ----------------------------------------------------------------------------------


def test_render_does_not_import_torch() -> None:
    code = "import tritoninspect.render, sys; assert 'torch' not in sys.modules, 'torch was imported'"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_meta_fields_are_all_rendered(report: Report, in_tmp: Path) -> None:
    # A new Meta field should make someone decide whether the header shows it.
    shown = {"tool", "tool_version", "mode", "device", "torch", "triton", "target", "python", "stage", "dynamic",
             "backward", "inputs", "calls", "rank", "unknown",  # rank: in trace mode's line; unknown: as notes
             "backward_skipped_calls", "params_without_grad",  # with backward; the parameters in the advice
             "grad"}  # with backward: "no (forward with grad on; ...)"
    assert {f.name for f in dataclasses.fields(Meta)} == shown


def test_print_to_a_markup_console(report: Report, in_tmp: Path) -> None:
    # A caller's Console may parse markup; brackets in report text must survive it.
    console = Console(file=io.StringIO(), width=100, color_system=None, markup=True)
    TerminalRenderer().print_to(console, report)
    text = console.file.getvalue()
    assert "@autotune(configs=2, key=[n_elements])" in text
    assert "1/0: tensor 'L['x']' size mismatch" in text


def test_a_break_is_named_by_what_torchs_explanation_names_in_every_format(report: Report, in_tmp: Path) -> None:
    """`--detail`'s table, `breaks`, HTML and `check` said "Failed to trace builtin operator" for a
    `print`; the advice alone said which builtin. Every place now says "(`print`)"."""
    from tritoninspect.analyse.checks import check_report
    from tritoninspect.model.report import GraphBreak
    from tritoninspect.render import render_as

    reason = ("Failed to trace builtin operator\n  Explanation: Dynamo does not know how to trace builtin operator "
              "`print` with argument types ['str'] (has_kwargs False)\n  Hint: Avoid calling builtin `print`")
    brk = GraphBreak("0/0", reason, "m.py", 3, headline="Failed to trace builtin operator")
    broken = dataclasses.replace(report, graph_breaks=(brk,))
    named = "Failed to trace builtin operator (`print`)"
    assert brk.title() == named
    for fmt in ("detail", "breaks"):
        assert named in render_as(broken, fmt, color=False, width=160), fmt
    html = render_as(broken, "html")
    assert named in html[html.index('<section id="breaks">'):], "HTML's breaks section"
    (failed,) = check_report(broken, no_breaks=True)
    assert named in failed, failed
    assert GraphBreak("0/0", reason, "m.py", 3, headline="Unsupported call to `print`").title() == "Unsupported call to `print`"


def test_a_break_title_names_only_what_torch_names_as_a_callable() -> None:
    """torch's explanations backtick more than names: an example (`if my_tensor.sum() > 0:`), a
    function's repr with its address, a user's own message. Only a builtin, function, method or
    operator's name is appended, a repr's name without its address."""
    from tritoninspect.model.report import GraphBreak

    def title(explanation: str, headline: str = "Head") -> str:
        return GraphBreak("0/0", f"{headline}\n  Explanation: {explanation}", "m.py", 3, headline=headline).title()

    assert title("Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). Dynamo does not "
                 "support tracing dynamic control flow.") == "Head"
    assert title("Skip calling function `<function launch at 0x7f9672be6c00>` since it was wrapped with "
                 "`torch.compiler.disable` (reason: None)") == "Head (`launch`)"
    assert title("User-inserted graph break. Message: see function `helper` and `x`") == "Head"
    assert title("Dynamo does not know how to trace the builtin `posix.getpid.` This function is either "
                 "a Python builtin") == "Head (`posix.getpid`)"
    assert title("Dynamo does not know how to trace method `item` of class `Tensor`") == "Head (`item`)"
    assert title("Operator `aten.nonzero.default`'s output shape depends on input Tensor data.") \
        == "Head (`aten.nonzero.default`)"
    assert title(f"Skip calling function `<function {'f' * 120} at 0x1>` since") == "Head"
    # A short name is said though its letters are in the headline; an example's name is not a name;
    # an "Explanation:" in the user's own message (after torch's) is not torch's.
    assert title("Skip calling function `<function f at 0x1>` since", "Failed") == "Failed (`f`)"
    assert title("Skip calling function `launch` since", "Skipped `launch`") == "Skipped `launch`"
    assert title("This particular method call (x) is not supported (e.g. calling `__setattr__`).") == "Head"
    assert title("User-inserted graph break. Message: hi\nExplanation: the function `os.system`") == "Head"


def test_a_file_is_spelled_the_same_in_every_view(tmp_path: Path) -> None:
    """The overview said `liger_kernel/ops/rms_norm.py:67`, `--detail`'s tables and the findings'
    evidence `rms_norm.py:67` (the basename): one file, two spellings. Every view now uses the overview's."""
    from tritoninspect.analyse.summary import short_location
    from tritoninspect.render import _format as fmt

    installed = "/venv/lib/python3.11/site-packages/liger_kernel/ops/rms_norm.py"
    for file in (installed, str(tmp_path / "own.py"), "/elsewhere/src/model.py", "rel/model.py"):
        assert fmt.location(file, 67, cwd=tmp_path) == short_location(file, 67, tmp_path)
    assert fmt.location(installed, 67, cwd=tmp_path) == "liger_kernel/ops/rms_norm.py:67"
    assert fmt.location(str(tmp_path / "own.py"), None, cwd=tmp_path) == "own.py"
    assert fmt.location(None, 3) == fmt.NONE


def test_a_counts_line_wraps_between_items_never_inside_one() -> None:
    """At 80 columns the overview said "... · post-grad: 2 · output" and "code: 2" on the next line."""
    from rich.console import Console

    from tritoninspect.render.terminal import Items

    items = ["Dynamo graphs: 1", "AOT forward: 1", "AOT backward: 1", "post-grad: 2", "output code: 2"]
    for width in (20, 40, 66, 80, 200):
        console = Console(width=width, record=True, color_system=None)
        console.print(Items(items))
        lines = console.export_text().splitlines()
        assert [x.strip() for line in lines for x in line.split(" · ")] == items, (width, lines)
        assert all(len(line) <= width for line in lines)
    assert len(lines) == 1


def test_a_findings_why_is_said_once_and_then_as_above() -> None:
    """--detail printed fp64_scalar_math's six-line why for each of six kernels."""
    from tritoninspect.model.report import read_report
    from tritoninspect.render import render_as

    report = read_report(Path(__file__).parent / "fixtures" / "gpu" / "hazard_fp64_scalar.json")
    # Notes: the section says their why (an error's or warning's is said under Advice, with its action).
    f = dataclasses.replace(next(f for f in report.findings if f.basis), severity="note")
    twice = dataclasses.replace(report, findings=(f, dataclasses.replace(f, kernel="other_kernel"),
                                                  dataclasses.replace(f, basis=f.basis + " Another.")))
    text = render_as(twice, "detail", color=False, width=4000)
    section = text[text.index("Evidence for each finding"):]
    whys = [line.strip() for line in section.splitlines() if line.strip().startswith("why:")][:3]
    assert whys[0].startswith(f"why: {f.basis}") and whys[1] == f"why: as above ({f.rule})", whys
    assert whys[2].startswith(f"why: {f.basis} Another."), whys


def test_one_cause_logged_inside_and_outside_a_higher_order_op_shows_one_reason() -> None:
    """Liger's import failure was logged from inside the autograd.Function (with a "Higher Order
    Operator:" line) and from the outer frame: `breaks` printed the reason block twice."""
    from tritoninspect.model.report import GraphBreak
    from tritoninspect.render import render_as

    cause = "  Explanation: Failure when attempting to import.\n  Hint: check eager."
    inside = GraphBreak("0/0", f"Import failure\n  Higher Order Operator: autograd.Function\n{cause}", "m.py", 3,
                        headline="Import failure")
    outside = GraphBreak("1/0", f"Import failure\n{cause}", "m.py", 3, headline="Import failure")
    report = read_report(Path(__file__).parent / "fixtures" / "gpu" / "add_raw.json")
    text = render_as(dataclasses.replace(report, graph_breaks=(inside, outside)), "breaks", color=False, width=200)
    assert text.count("reason:") == 1 and "Higher Order Operator: autograd.Function" in text
    other = dataclasses.replace(outside, reason="Import failure\n  Explanation: another cause.")
    text = render_as(dataclasses.replace(report, graph_breaks=(inside, other)), "breaks", color=False, width=200)
    assert text.count("reason:") == 2


def test_a_table_too_narrow_for_its_words_becomes_one_block_per_row() -> None:
    """At 50 columns the kernel table folded its headers ("sour" / "ce") and paths into 4-letter
    pieces; each row is now a block of "header: value" lines, and wide consoles keep the table."""
    from tritoninspect.model.report import read_report
    from tritoninspect.render import render_as

    report = read_report(REPO / "tests" / "fixtures" / "gpu" / "autotune.json")
    narrow = render_as(report, "detail", color=False, width=50)
    assert "kernel scaled_add_kernel\n  entries: hop\n  compile ids: 0/0\n  source: samples/autotune.py:15" in narrow
    assert "config BLOCK=16\n    registers: 14" in narrow
    wide = render_as(report, "detail", color=False, width=120)
    assert "source: " not in wide and "samples/autotune.py:15" in wide
