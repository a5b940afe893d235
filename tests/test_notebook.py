"""Reports in a notebook (issue 25, item 3): the short `__repr__`, `_repr_html_` (the page `-o x.html`
writes, in a frame of its own so it restyles nothing), and the notebook-friendly progress.

The HTML is parsed here; a headless Chromium renders the fragment inside a notebook-like host page
(skipped without Chromium, as tests/test_html_browser.py is).
"""

from __future__ import annotations

import html
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from _expect import REPO
from _html_check import parse
from test_html_browser import CHROMIUM, chromium, screenshot
from tritoninspect.analyse.diff import diff_reports
from tritoninspect.capture.progress import stage
from tritoninspect.model.diff_report import DiffReport
from tritoninspect.model.report import Report, read_report
from tritoninspect.render import render_as
from tritoninspect.render.html_diff import DiffPage
from tritoninspect.run.progress import showing_progress

GPU = REPO / "tests" / "fixtures" / "gpu"


def gpu_report(name: str) -> Report:
    return read_report(GPU / f"{name}.json")


def frame_page(fragment: str) -> str:
    """The page a `_repr_html_` frame holds (its `srcdoc`), and that the fragment is that one frame."""
    root, _ = parse(fragment)
    (frame,) = root.children
    assert frame.tag == "iframe" and frame.attrs["class"] == "tritoninspect-report"
    assert not list(root.iter("style")) and not list(root.iter("script"))  # nothing outside the frame
    return frame.attrs["srcdoc"]


# --- __repr__ -----------------------------------------------------------------------------------


def test_a_report_repr_is_one_short_line() -> None:
    text = repr(gpu_report("graph_break"))
    assert text.startswith("<Report samples/graph_break.py:Net · gpu · stage ") and text.endswith(">")
    assert "\n" not in text and len(text) < 300 and "graph break" in text
    assert repr(gpu_report("triton_op")).count("add_kernel (triton_op)") == 1


def test_a_diff_repr_names_the_sides_and_the_summary() -> None:
    diff = diff_reports(gpu_report("triton_op"), gpu_report("custom_op"),
                        sources=("samples/triton_op.py:Net", "samples/custom_op.py:Net"))
    text = repr(diff)
    assert text.startswith("<DiffReport A: samples/triton_op.py:Net vs B: samples/custom_op.py:Net · ")
    assert "\n" not in text and "changed fact" in text
    assert repr(DiffReport.from_json(diff.to_json())) == text


# --- _repr_html_ --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["triton_op", "graph_break"])
def test_repr_html_is_the_html_page_in_a_frame(name: str) -> None:
    report = gpu_report(name)
    page = frame_page(report._repr_html_() or "")
    # html.parser unescaped the attribute: it is the -o x.html page, with a <base> for its #links.
    assert page == render_as(report, "html").replace("<head>\n", '<head>\n<base href="about:srcdoc">\n', 1)
    inner, _ = parse(page)
    assert list(inner.iter("svg")) and list(inner.iter("style")) and len(list(inner.iter("script"))) == 1


def test_a_report_read_back_from_json_renders_too() -> None:
    # Made anywhere (here: read from a file): the package root registered the page.
    report = Report.from_json(gpu_report("triton_op").to_json())
    assert "add_kernel" in frame_page(report._repr_html_() or "")


def test_the_frame_escapes_what_the_page_holds() -> None:
    fragment = gpu_report("triton_op")._repr_html_() or ""
    srcdoc = fragment.split('srcdoc="', 1)[1].split('" style=', 1)[0]
    assert '"' not in srcdoc and "<" not in srcdoc and html.unescape(srcdoc).startswith("<!DOCTYPE html>")


def test_diff_reports_render_as_diff_pages() -> None:
    a, b = gpu_report("triton_op"), gpu_report("custom_op")
    diff = diff_reports(a, b, sources=("samples/triton_op.py:Net", "samples/custom_op.py:Net"))
    assert "custom_op" in frame_page(diff._repr_html_() or "")
    with_pictures = frame_page(DiffPage(diff, (a, b))._repr_html_() or "")
    assert with_pictures == render_as(DiffPage(diff, (a, b)), "html").replace(
        "<head>\n", '<head>\n<base href="about:srcdoc">\n', 1)


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium: install Debian's `chromium` package")
def test_the_fragment_renders_in_a_notebook_like_page_without_restyling_it(tmp_path: Path) -> None:
    """The fragment inside a host page with its own styles, as Jupyter shows an output: the frame's
    script ran (it fitted the frame to the page), nothing logged, the host's styles untouched."""
    host = ("<!DOCTYPE html><html><head><meta charset='utf-8'><style>body{font-family:serif;margin:8px}"
            ".cell{border-left:4px solid #f70;padding:4px}</style></head><body>"
            "<div class='cell'><pre>In [1]: report</pre></div><div class='output' id='out'>"
            f"{gpu_report('graph_break')._repr_html_()}</div><p id='after'>the next cell</p></body></html>")
    page = tmp_path / "notebook.html"
    page.write_text(host, encoding="utf-8")
    dom, console = chromium(page, tmp_path / "profile", "--dump-dom", "--virtual-time-budget=3000")
    assert console == []
    root, _ = parse(dom)
    (frame,) = root.iter("iframe")
    assert "height:640px" not in frame.attrs["style"].replace(" ", "")  # onload fitted it to its page
    styles = [s.all_text() for s in root.iter("style")]
    assert len(styles) == 1 and "font-family:serif" in styles[0]  # only the host's own style is outside
    png = tmp_path / "notebook.png"
    assert screenshot(page, png, tmp_path / "profile", "1280,1000") == [] and png.stat().st_size > 10_000


# --- progress -----------------------------------------------------------------------------------


def test_no_progress_outside_a_notebook_unless_asked(capsys: pytest.CaptureFixture[str]) -> None:
    with showing_progress(None, "tritoninspect: Net"):
        stage("Dynamo: tracing the first call")
    assert capsys.readouterr().err == ""
    with showing_progress(True, "tritoninspect: Net"):
        stage("Dynamo: tracing \x1b[31mred\x1b[0m")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].endswith("] Dynamo: tracing red") and err[1].endswith("tritoninspect: Net: done")
    assert "\x1b" not in "".join(err)


class FakeHandle:
    def __init__(self, bundle: dict[str, str]) -> None:
        self.bundles = [bundle]

    def update(self, bundle: dict[str, str], raw: bool = False) -> None:
        assert raw
        self.bundles.append(bundle)


def test_in_a_notebook_one_output_updated_in_place(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """In a Jupyter kernel: one display, updated per stage, HTML and plain text, no escape codes."""
    handles: list[FakeHandle] = []

    def display(bundle: dict[str, str], raw: bool = False, display_id: bool = False) -> FakeHandle:
        assert raw and display_id
        handles.append(FakeHandle(bundle))
        return handles[-1]

    shell = types.SimpleNamespace(kernel=object())
    ipython: Any = types.ModuleType("IPython")
    ipython.get_ipython = lambda: shell
    display_module: Any = types.ModuleType("IPython.display")
    display_module.display = display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display_module)

    with showing_progress(None, "tritoninspect: <Net>"):
        stage("Dynamo: tracing the first call")
        stage("analysing \x1b[2Kthe capture")
    (handle,) = handles
    texts = [b["text/plain"] for b in handle.bundles]
    assert [t.split(" · ")[1] for t in texts] == ["starting", "Dynamo: tracing the first call",
                                                 "analysing the capture", "done"]
    assert "<progress></progress>" in handle.bundles[1]["text/html"]
    assert "<progress" not in handle.bundles[-1]["text/html"] and "&lt;Net&gt;" in handle.bundles[-1]["text/html"]
    assert not any("\x1b" in value for b in handle.bundles for value in b.values())
    assert capsys.readouterr().err == ""
