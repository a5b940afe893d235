"""The HTML report in a real headless Chromium: it opens from file://, logs nothing to the
console (no script error, no blocked load: the page's Content-Security-Policy reports any
fetch as a console message), runs its script, and renders; screenshots are taken.

Chromium is Debian's `chromium` package (`.ci/run` installs it when missing). Where it is
not installed the tests skip and say so. `TRITONINSPECT_UPDATE_SCREENSHOTS=1` also writes
the screenshots in docs/ (kernel neighbourhood, diff, breaks; the README shows the first).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from _expect import REPO
from _html_check import parse
from tritoninspect.analyse.diff import diff_reports
from tritoninspect.render import render_as
from tritoninspect.render.html_diff import DiffPage
from tritoninspect.model.report import read_report
from tritoninspect.children.side import SideResult, build_diff

GPU = REPO / "tests" / "fixtures" / "gpu"
DOCS = REPO / "docs"
CHROMIUM = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome") if shutil.which(name)),
                None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium: install Debian's `chromium` package (apt-get install -y chromium)")

#: Quiet, offline, throwaway: no sandbox (root in CI), no GPU, no network of its own.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0", "--force-device-scale-factor=1"]
_CONSOLE = re.compile(r":CONSOLE[:(]\d+\)?\] (?P<message>.*)")


def chromium(page: Path, profile: Path, *extra: str) -> tuple[str, list[str]]:
    """Open `page`; its DOM after scripts ran (with --dump-dom) and every console message."""
    args = [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *extra, page.resolve().as_uri()]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    console = [m["message"] for m in map(_CONSOLE.search, proc.stderr.splitlines()) if m]
    return proc.stdout, console


def screenshot(page: Path, png: Path, profile: Path, size: str = "1280,900") -> list[str]:
    _, console = chromium(page, profile, f"--screenshot={png}", f"--window-size={size}")
    return console


def write_page(path: Path, document: object) -> Path:
    path.write_text(render_as(document, "html") + "\n", encoding="utf-8")
    return path


def report_page(tmp_path: Path, name: str) -> Path:
    return write_page(tmp_path / f"{name}.html", read_report(GPU / f"{name}.json"))


def diff_page(tmp_path: Path, a: str, b: str) -> Path:
    ra, rb = read_report(GPU / f"{a}.json"), read_report(GPU / f"{b}.json")
    diff = diff_reports(ra, rb, sources=(f"samples/{a}.py:Net", f"samples/{b}.py:Net"))
    return write_page(tmp_path / "diff.html", DiffPage(diff, (ra, rb)))


def three_way_page(tmp_path: Path, *names: str) -> Path:
    """`diff A B C -o diff3.html` on saved reports, built as the command builds it."""
    sides = [SideResult(read_report(GPU / f"{n}.json"), None, f"samples/{n}.py:Net", False) for n in names]
    return write_page(tmp_path / "diff3.html", DiffPage(build_diff(*sides), tuple(s.report for s in sides)))


def breaks_page(tmp_path: Path) -> Path:
    path = tmp_path / "breaks.html"
    path.write_text(render_as(read_report(GPU / "graph_break.json"), "html:breaks") + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["triton_op", "custom_op", "autograd_function", "graph_break", "recompile_constexpr"])
def test_report_opens_without_console_messages(tmp_path: Path, name: str) -> None:
    page = report_page(tmp_path, name)
    dom, console = chromium(page, tmp_path / "profile", "--dump-dom")
    assert console == []
    root, _ = parse(dom)
    (html,) = root.iter("html")
    assert "js" in html.attrs.get("class", "").split()  # the script ran to its first line
    assert len(list(root.iter("figure"))) >= 1
    png = tmp_path / f"{name}.png"
    assert screenshot(page, png, tmp_path / "profile") == [] and png.stat().st_size > 10_000


def test_a_console_error_is_seen(tmp_path: Path) -> None:
    """The check above can fail: a page with a script error and a blocked load logs both."""
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" "
                    "content=\"default-src 'none'; script-src 'unsafe-inline'\"></head><body>"
                    "<img src=\"https://example.invalid/x.png\"><script>missing()</script></body></html>")
    _, console = chromium(page, tmp_path / "profile", "--dump-dom")
    assert any("missing is not defined" in m for m in console)
    assert any("Content Security Policy" in m for m in console)


def test_hostile_names_run_nothing(tmp_path: Path) -> None:
    from test_html import HOSTILE, hostile_report

    page = write_page(tmp_path / "hostile.html", hostile_report())
    dom, console = chromium(page, tmp_path / "profile", "--dump-dom")
    assert console == []  # alert() would need a script; an <img onerror> a load: neither happened
    root, _ = parse(dom)
    assert len(list(root.iter("script"))) == 1 and not list(root.iter("img"))
    assert HOSTILE[:30] in root.all_text()


def test_readable_without_javascript(tmp_path: Path) -> None:
    """With its script blocked (a stricter policy) the page still holds and shows everything."""
    page = report_page(tmp_path, "triton_op")
    strict = page.read_text().replace("script-src 'unsafe-inline'", "script-src 'none'")
    assert strict != page.read_text()
    page.write_text(strict)
    dom, console = chromium(page, tmp_path / "profile", "--dump-dom")
    assert len(console) == 1 and "Content Security Policy" in console[0]  # the blocked script, nothing else
    root, _ = parse(dom)
    (html,) = root.iter("html")
    assert "js" not in html.attrs.get("class", "").split()
    assert list(root.iter("svg")) and any("add_kernel" in a.all_text() for a in root.iter("article"))
    png = tmp_path / "nojs.png"
    screenshot(page, png, tmp_path / "profile")
    assert png.stat().st_size > 10_000


def test_search_and_expand_all_work(tmp_path: Path) -> None:
    """The script's conveniences: the filter box hides what does not match; "expand all" opens every block."""
    page = report_page(tmp_path, "graph_break")
    drive = ("<script>addEventListener('DOMContentLoaded',()=>{const box=document.getElementById('search');"
             "box.value='scale_kernel';box.dispatchEvent(new Event('input'));"
             "document.getElementById('expand-all').click();})</script>")
    page.write_text(page.read_text().replace("</body>", drive + "</body>"))
    dom, console = chromium(page, tmp_path / "profile", "--dump-dom")
    assert console == []
    root, _ = parse(dom)
    hidden = {el.attrs.get("id", el.tag) for el in root.iter() if "hidden-by-search" in el.attrs.get("class", "")}
    shown = [el for el in root.iter("article") if "hidden-by-search" not in el.attrs.get("class", "")]
    assert "k0-add_kernel" in hidden and [a.attrs["id"] for a in shown] == ["k1-scale_kernel"]
    assert all("open" in d.attrs for d in root.iter("details"))


def test_diff_and_breaks_pages(tmp_path: Path) -> None:
    three = three_way_page(tmp_path, "add_raw", "triton_op", "custom_op")
    for page in (diff_page(tmp_path, "custom_op", "triton_op"), three, breaks_page(tmp_path)):
        dom, console = chromium(page, tmp_path / "profile", "--dump-dom")
        assert console == [], page.name
        assert list(parse(dom)[0].iter("section"))


@pytest.mark.skipif(not os.environ.get("TRITONINSPECT_UPDATE_SCREENSHOTS"),
                    reason="set TRITONINSPECT_UPDATE_SCREENSHOTS=1 to rewrite docs/*.png")
def test_update_readme_screenshots(tmp_path: Path) -> None:
    """docs/html-kernel.png, html-diff.png, html-breaks.png: one view each."""
    DOCS.mkdir(exist_ok=True)
    shots = {
        "html-kernel.png": (report_page(tmp_path, "inplace"), "#kernels", "1200,1060"),
        "html-diff.png": (diff_page(tmp_path, "custom_op", "triton_op"), "#kernels", "1200,1000"),
        "html-breaks.png": (breaks_page(tmp_path), "#breaks", "1200,900"),
    }
    for name, (page, section, size) in shots.items():
        # The page with only its header and that section shown (--screenshot cannot scroll).
        shown = page.with_name(f"shot-{page.name}")
        hide = f"<style>main>section:not({section}),main>.hint,footer{{display:none}}</style>"
        shown.write_text(page.read_text().replace("</head>", hide + "</head>"))
        assert screenshot(shown, DOCS / name, tmp_path / "profile", size) == []
