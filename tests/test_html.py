"""The HTML report (tier a/b): pages from saved GPU reports, parsed back, never grepped.

Structure (sections, one figure per picture, every internal link resolves), no external
loads, escaping of hostile names, the diff page's side-by-side pictures, and the CLI's
`-o x.html` for graph, breaks and diff on saved reports (torch never imported).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from _expect import REPO, cli_env
from _zygote import run as zygote_run
from _html_check import external_loads, parse
from tritoninspect.analyse.diff import diff_reports
from tritoninspect.analyse.pictures import PEdge, Picture, PNode, kernel_pictures
from tritoninspect.model.diff_report import SideBench, Timing
from tritoninspect.render import render_as
from tritoninspect.render._html_assets import JS
from tritoninspect.render._safe import safe_text
from tritoninspect.render._svg import picture_svg
from tritoninspect.render.emit import written_by_tritoninspect
from tritoninspect.render.html import HIGHLIGHT_BUDGET
from tritoninspect.render.html_diff import DiffPage, differences, fact_rows
from tritoninspect.children.side import SideResult, build_diff
from tritoninspect.model.report import Failure, Report, read_report

GPU = REPO / "tests" / "fixtures" / "gpu"
SAMPLES = sorted(p.stem for p in GPU.glob("*.json"))
#: A kernel name no browser may run or be confused by: markup, quotes, an SVG end, control characters.
HOSTILE = "</svg><script>alert(1)</script>\"'><img src=x onerror=alert(2)>\x1b[2J\x00</title>"
SVG_TAGS = {"svg", "title", "defs", "marker", "path", "g", "a", "rect", "text", "circle"}


def page_of(document: object) -> str:
    return render_as(document, "html")


@pytest.fixture(scope="module")
def pages() -> dict[str, tuple[Report, str]]:
    return {name: (r := read_report(GPU / f"{name}.json"), page_of(r)) for name in SAMPLES}


def hostile_report(sample: str = "triton_op", **replace: str) -> Report:
    """A saved report with the kernel renamed (everywhere, graph code included) and more strings replaced."""
    text = (GPU / f"{sample}.json").read_text()
    for old, new in {"add_kernel": HOSTILE, **replace}.items():
        text = text.replace(old, json.dumps(new)[1:-1])
    return Report.from_json(text)


# --- structure ---------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLES)
def test_page_structure(pages: dict[str, tuple[Report, str]], name: str) -> None:
    report, page = pages[name]
    root, builder = parse(page)
    assert builder.doctype.lower() == "doctype html" and not builder.mismatched
    (html,) = root.iter("html")
    assert [c.tag for c in html.children] == ["head", "body"]
    generator = [m for m in root.iter("meta") if m.attrs.get("name") == "generator"]
    assert generator and generator[0].attrs["content"].startswith("tritoninspect ")
    assert {"kernels", "breaks", "recompiles", "graphs"} <= {s.attrs.get("id") for s in root.iter("section")}
    articles = [a for a in root.iter("article") if "kernel" in a.attrs.get("class", "")]
    assert len(articles) == len(report.kernels)
    pictures = [p for k in report.kernels for p in kernel_pictures(report, k)]
    figures = list(root.iter("figure"))
    assert len(figures) == len(pictures)
    for figure, picture in zip(figures, pictures):
        (svg,) = figure.iter("svg")
        assert {el.tag for el in svg.iter()} <= SVG_TAGS
        nodes = [g for g in svg.iter("g") if g.attrs.get("class", "").startswith("n ")]
        assert len(nodes) == len(picture.nodes)
        assert [g.attrs["data-node"] for g in nodes if "focus" in g.attrs["class"]] == [picture.focus]


@pytest.mark.parametrize("name", SAMPLES)
def test_every_internal_link_resolves_and_ids_are_unique(pages: dict[str, tuple[Report, str]], name: str) -> None:
    root, _ = parse(pages[name][1])
    ids = [el.attrs["id"] for el in root.iter() if "id" in el.attrs]
    assert len(ids) == len(set(ids))
    targets = [a.attrs["href"][1:] for a in root.iter("a") if a.attrs.get("href", "").startswith("#")]
    assert targets and set(targets) <= set(ids)
    refs = [el.attrs["marker-end"][5:-1] for el in root.iter("path") if "marker-end" in el.attrs]
    assert set(refs) <= set(ids)


@pytest.mark.parametrize("name", SAMPLES)
def test_no_external_loads(pages: dict[str, tuple[Report, str]], name: str) -> None:
    root, _ = parse(pages[name][1])
    assert external_loads(root) == []
    (script,) = root.iter("script")
    assert script.all_text().strip() == JS.strip() and "src" not in script.attrs
    policy = [m.attrs["content"] for m in root.iter("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert policy and policy[0].startswith("default-src 'none'")
    outward = [a.attrs["href"] for a in root.iter("a") if not a.attrs.get("href", "#").startswith("#")]
    assert all(h.startswith("https://") for h in outward)  # documentation links: followed, never loaded


def test_pages_stay_small(pages: dict[str, tuple[Report, str]]) -> None:
    sizes = {name: len(page.encode()) for name, (_, page) in pages.items()}
    assert max(sizes.values()) < 2_000_000, sizes


def test_the_kernel_lines_are_marked_and_post_grad_graphs_open(pages: dict[str, tuple[Report, str]]) -> None:
    root, _ = parse(pages["triton_op"][1])
    final = [d for d in root.iter("details") if d.attrs.get("data-stage") == "post_grad_final"]
    assert final and all("open" in d.attrs for d in final)
    hits = [s for d in final for s in d.iter("span") if "hit" in s.attrs.get("class", "").split()]
    assert any("triton_kernel_wrapper" in s.all_text() for s in hits)


def test_a_large_model_stays_a_few_megabytes() -> None:
    """Output code past the highlighting budget is shown plain: the page grows about as the code does."""
    report = read_report(GPU / "autograd_function.json")
    code = next(g for g in report.graphs if g.stage == "output_code")
    copies = 1 + 4 * HIGHLIGHT_BUDGET // len(code.code)
    big = tuple(dataclasses.replace(code, compile_id=f"{i}/0") for i in range(copies))
    large = dataclasses.replace(report, graphs=report.graphs + big)
    total = sum(len(g.code) for g in large.graphs)
    page = page_of(large)
    root, builder = parse(page)
    assert not builder.mismatched and total > 3 * HIGHLIGHT_BUDGET
    assert len(page) < 1.5 * total + 4 * HIGHLIGHT_BUDGET, (len(page), total)
    plain = [d for d in root.iter("details") if d.attrs.get("data-stage") == "output_code"
             and not any("tk-" in s.attrs.get("class", "") for s in d.iter("span"))]
    assert len(plain) > copies // 2
    assert all(any("hit" in s.attrs.get("class", "") for s in d.iter("span")) for d in plain)


def test_findings_and_advice_lead_the_page() -> None:
    """The default view's findings and advice, in the page: one per cause, a merged one listing each finding
    it holds, the library tagged, links made links (moe-ops: tests/fixtures/advice/moe_ops_layer.json)."""
    from tritoninspect.analyse.advice import advise

    report = read_report(REPO / "tests" / "fixtures" / "advice" / "moe_ops_layer.json")
    page = page_of(report)
    root, builder = parse(page)
    assert not builder.mismatched
    sections = [s for s in root.iter("section")]
    assert sections[0].attrs["id"] == "findings"
    (a,) = advise(report)
    (ol,) = [o for o in sections[0].iter("ol") if "findings" in o.attrs.get("class", "")]
    text = ol.all_text()
    assert a.finding in text and a.action.split(" (https")[0] in text and a.because in text
    assert all(d in text for d in a.details) and "moe-ops 0.1.0" in text
    links = [x.attrs.get("href") for x in ol.iter("a")]
    assert "https://docs.pytorch.org/docs/stable/library.html" in links
    assert "https://github.com/echogujy/moe_ops/issues" in links
    assert '<a href="#findings">' in page  # in the navigation
    empty = page_of(read_report(GPU / "add_raw.json"))
    assert "Nothing to change was found." in empty


def test_mode_banner_on_top() -> None:
    report = read_report(REPO / "tests" / "fixtures" / "gpu-compile-only" / "triton_op.json")
    root, _ = parse(page_of(report))
    (header,) = root.iter("header")
    banners = [d for d in header.iter("div") if "banner" in d.attrs.get("class", "")]
    assert "compile-only" in banners[0].attrs["class"] and "compile-only" in banners[0].all_text()


def test_failure_record_and_banner() -> None:
    report = read_report(GPU / "triton_op.json")
    failure = Failure("kernel_compile", "0/0", "inference", "CompilationError", "at 5:24:\n  x = tl.load(p)\nbad <op>",
                      user_frame="samples/triton_op.py:30 in forward", kernel="add_kernel")
    root, _ = parse(page_of(dataclasses.replace(report, failure=failure)))
    (header,) = root.iter("header")
    (banner,) = [a for a in header.iter("a") if "failed" in a.attrs.get("class", "")]
    assert banner.attrs["href"] == "#failure" and "bad <op>" in banner.all_text()
    (section,) = [s for s in root.iter("section") if s.attrs.get("id") == "failure"]
    assert "CompilationError" in section.all_text() and "x = tl.load(p)" in section.all_text()


# --- escaping ----------------------------------------------------------------------


def test_hostile_kernel_and_file_names_stay_text() -> None:
    report = hostile_report(**{"samples/triton_op.py": "samples/\"><script>alert(3)</script>.py"})
    page = page_of(report)
    root, builder = parse(page)
    assert not builder.mismatched
    assert len(list(root.iter("script"))) == 1 and not list(root.iter("img"))
    assert not [(el.tag, k) for el in root.iter() for k in el.attrs if k.startswith("on")]
    assert "\x1b" not in page and "\x00" not in page
    (article,) = [a for a in root.iter("article")]
    # Shown as text, whole: only the escape sequence is dropped and the NUL shown escaped (safe_text).
    assert safe_text(HOSTILE) == HOSTILE.replace("\x1b[2J", "").replace("\x00", "\\x00")
    assert safe_text(HOSTILE) in article.all_text()
    assert external_loads(root) == []
    for svg in root.iter("svg"):
        assert {el.tag for el in svg.iter()} <= SVG_TAGS


def test_kernels_whose_names_differ_only_in_markup_get_distinct_ids() -> None:
    report = read_report(GPU / "graph_break.json")
    twins = tuple(dataclasses.replace(k, name=n) for k, n in zip(report.kernels, ("k<1>", "k>1<")))
    root, _ = parse(page_of(dataclasses.replace(report, kernels=twins)))
    ids = [a.attrs["id"] for a in root.iter("article")]
    assert len(ids) == len(set(ids)) == 2


def test_a_javascript_doc_url_is_not_a_link() -> None:
    text = (GPU / "graph_break.json").read_text()
    data = json.loads(text)
    data["graph_breaks"][0]["doc_url"] = "javascript:alert(1)"
    root, _ = parse(page_of(Report.from_dict(data)))
    assert not [a for a in root.iter("a") if a.attrs.get("href", "").startswith("javascript")]
    assert any("javascript:alert(1)" in el.all_text() for el in root.iter("td"))


def test_hostile_diff_page() -> None:
    a, b, c = hostile_report("custom_op"), hostile_report("triton_op"), hostile_report("add_raw")
    sides = [SideResult(r, None, source, True) for r, source in ((a, HOSTILE), (b, "b.json"), (c, HOSTILE + ".json"))]
    for view in (DiffPage(diff_reports(a, b, sources=(HOSTILE, "b.json")), (a, b)),
                 DiffPage(build_diff(*sides), (a, b, c))):
        root, builder = parse(page_of(view))
        assert not builder.mismatched and len(list(root.iter("script"))) == 1 and not list(root.iter("img"))
        assert safe_text(HOSTILE) in root.all_text()
        assert not [(el.tag, k) for el in root.iter() for k in el.attrs if k.startswith("on")]


# --- diff -----------------------------------------------------------------------------


def diff_page(a: Report, b: Report) -> str:
    return page_of(DiffPage(diff_reports(a, b, sources=("a.json", "b.json"), saved=(True, True)), (a, b)))


def marked(root) -> list[str]:  # type: ignore[no-untyped-def]
    return [g.attrs["data-node"] for g in root.iter("g") if "marked" in g.attrs.get("class", "").split()]


def test_diff_shows_both_sides_with_differences_marked() -> None:
    a, b = read_report(GPU / "custom_op.json"), read_report(GPU / "triton_op.json")
    root, _ = parse(diff_page(a, b))
    (section,) = [s for s in root.iter("section") if s.attrs.get("id") == "kernels"]
    rows = [d for d in section.iter("div") if "side-by-side" in d.attrs.get("class", "")]
    assert rows and all(len(r.children) == 2 for r in rows)
    figures = [[f for f in cell.iter("figure")] for r in rows for cell in r.children]
    assert all(len(f) == 1 for f in figures)  # both variants have each picture: post-grad and output code
    # custom_op's black box and triton_op's kernel node differ; the ops around them (sin, cos) do not.
    flagged = {t.all_text() for g in root.iter("g") if "marked" in g.attrs.get("class", "").split()
               for t in g.iter("text") if t.attrs.get("class") == "nl"}
    assert any("⊃ add_kernel" in t for t in flagged) and any(t.startswith("add_kernel") for t in flagged)
    assert not any("aten.sin" in t or "aten.cos" in t for t in flagged)
    changed = [r for r in root.iter("tr") if "changed" in r.attrs.get("class", "")]
    assert changed


def test_text_and_html_count_the_same_facts() -> None:
    """The text said "29 of 71 facts differ" where the page said "29 of 74": the page counted the
    compile times (measurements, compared as ratios) as facts. One count, `DiffReport.facts`."""
    import re

    from tritoninspect.render.diff import DiffRenderer

    a, b = read_report(GPU / "custom_op.json"), read_report(GPU / "triton_op.json")
    diff = diff_reports(a, b, sources=("a.json", "b.json"), saved=(True, True))
    assert any(r.unit == "s" for r in diff.rows) and all(not r.changed for r in diff.rows if r.unit == "s")
    text = re.search(r"(\d+) of (\d+) facts differ", DiffRenderer(width=200, color=False).render(diff))
    root, _ = parse(diff_page(a, b))
    html = re.search(r"Summary: (\d+) of (\d+) compared facts differ", root.all_text())
    assert text and html and text.groups() == html.groups()
    assert int(html[2]) == len(diff.facts) == len([r for r in diff.rows if r.unit != "s"])
    assert "compile times (wall; measurements" in root.all_text()


def test_diff_of_a_report_with_itself_marks_nothing() -> None:
    a = read_report(GPU / "autograd_function.json")
    root, _ = parse(diff_page(a, a))
    assert marked(root) == [] and len(list(root.iter("figure"))) == 2 * len(kernel_pictures(a, a.kernels[0]))


def three_way(*names: str) -> DiffPage:
    """`diff A B C -o x.html` on saved reports, built as the command builds it."""
    sides = [SideResult(read_report(GPU / f"{n}.json"), None, f"{n}.json", True) for n in names]
    return DiffPage(build_diff(*sides), tuple(s.report for s in sides))


def section(root, name: str):  # type: ignore[no-untyped-def]
    (found,) = [s for s in root.iter("section") if s.attrs.get("id") == name]
    return found


def classes(el) -> list[str]:  # type: ignore[no-untyped-def]
    return el.attrs.get("class", "").split()


def test_three_variant_diff_header_and_facts() -> None:
    """Every variant against A: a summary line each on top, a column each in the facts, each marked on its own."""
    view = three_way("add_raw", "triton_op", "custom_op")
    root, builder = parse(page_of(view))
    assert not builder.mismatched
    (header,) = root.iter("header")
    (summaries,) = [u for u in header.iter("ul") if "summaries" in classes(u)]
    assert [li.all_text() for li in summaries.iter("li")] == [p.summary for p in view.diff.comparisons]
    assert [li.all_text()[0] for li in summaries.iter("li")] == ["B", "C"]
    heads = [d.all_text() for d in header.iter("div") if "side-head" in classes(d)]
    assert [h.split(":")[0] for h in heads] == ["A", "B", "C"]
    (table, every, timings) = section(root, "summary").iter("table")
    assert [th.all_text().split(" ")[0] for th in table.iter("th")] == ["section", "what", "A", "B", "C"]
    facts = {(f.section, f.name): f for f in fact_rows(view.diff) if f.unit != "s"}
    measured = [f for f in fact_rows(view.diff) if f.unit == "s"]
    assert measured and len(list(timings.iter("tr"))) - 1 == len(measured)  # compile times apart, not facts
    body = [[td for td in tr.children if td.tag == "td"] for tr in every.iter("tr")]
    shown = [(tr, cells) for tr, cells in zip(every.iter("tr"), body) if cells]
    assert len(shown) == len(facts) and all(len(cells) == 5 for _, cells in shown)
    for tr, cells in shown:
        fact = facts[(cells[0].all_text(), cells[1].all_text())]
        marks = [any("ne" in classes(s) for s in td.iter("span")) for td in cells[3:]]
        assert marks == list(fact.changed) and ("changed" in classes(tr)) == fact.differs
    assert sum(f.differs for f in facts.values()) == len(list(table.iter("tr"))) - 1
    entries = facts[("kernels", "add_kernel: entries")]
    assert (entries.a, entries.values, entries.changed) == ("hop", ("triton_op", "custom_op"), (True, True))
    extern = facts[("graph totals", "inference: extern_calls")]
    assert extern.changed == (False, True)  # only the custom op adds an extern call


def test_three_variant_diff_pictures_graph_diffs_and_code() -> None:
    view = three_way("add_raw", "triton_op", "custom_op")
    page = page_of(view)
    root, _ = parse(page)
    rows = [d for d in section(root, "kernels").iter("div") if "side-by-side" in classes(d)]
    pictures = [kernel_pictures(r, r.kernels[0]) for r in view.reports]
    assert len(rows) == max(map(len, pictures)) and all(len(r.children) == 3 for r in rows)
    assert [len(list(c.iter("figure"))) for r in rows for c in r.children] == [1] * 3 * len(rows)
    # Against A: B (triton_op) draws the same graph as A (no node marked); C's custom op is a difference,
    # and so are A's kernel and buffer that C lacks (A is marked against every variant).
    (post_grad,) = [r for r in rows if "post-grad" in r.children[0].all_text()]
    marked_per_side = [[g for g in c.iter("g") if "marked" in classes(g)] for c in post_grad.children]
    assert marked_per_side[1] == [] and marked_per_side[0] and marked_per_side[2]
    assert all("not in C" in g.all_text() for g in marked_per_side[0])
    assert any("custom_op::add" in g.all_text() and "not in A" in g.all_text() for g in marked_per_side[2])
    heads = [h.all_text() for h in section(root, "graph-diffs").iter("h3")]
    assert [h.split(" (")[0] for h in heads] == ["A vs B", "A vs C"]
    spans = [s.all_text() for s in section(root, "graph-diffs").iter("span")]
    assert any(t.startswith("+++ C ") for t in spans) and any(t.startswith("+++ B ") for t in spans)
    columns = [d for d in section(root, "code").iter("div") if "side-by-side" in classes(d)]
    assert len(columns) == 1 and len(columns[0].children) == 3
    ids = [el.attrs["id"] for el in root.iter() if "id" in el.attrs]
    assert len(ids) == len(set(ids))
    targets = [a.attrs["href"][1:] for a in root.iter("a") if a.attrs.get("href", "").startswith("#")]
    assert targets and set(targets) <= set(ids) and external_loads(root) == []


def test_three_variant_timings_have_a_column_and_ratio_per_variant() -> None:
    timing = lambda ms: Timing(ms, ms, ms, ms, 10)  # noqa: E731
    benches = {"add_raw": 1.0, "triton_op": 0.5, "custom_op": 2.0}
    sides = [SideResult(read_report(GPU / f"{n}.json"), SideBench(timing(ms), timing(ms / 2)), n, True, "events")
             for n, ms in benches.items()]
    root, _ = parse(page_of(DiffPage(build_diff(*sides), tuple(s.report for s in sides))))
    timings = list(section(root, "summary").iter("table"))[-1]
    assert [th.all_text() for th in timings.iter("th")] == ["", "A", "B", "B/A", "C", "C/A"]
    eager = [td.all_text() for td in next(timings.iter("tbody")).children[0].children]
    assert eager == ["eager", "1.0000 ms", "0.5000 ms", "0.50×", "2.0000 ms", "2.00×"]


def two_pictures() -> tuple[Picture, Picture]:
    """x feeds z directly in one, through y in the other; `w` only in the first."""
    nodes = (PNode("x", "aten.sin", "op"), PNode("y", "aten.cos", "op"), PNode("z", "k", "kernel"))
    direct = Picture("k", "hop", "0/0", "post_grad_final", "inference", "z", nodes + (PNode("w", "aten.mul", "op"),),
                     (PEdge("x", "z"), PEdge("y", "z"), PEdge("z", "w")))
    through = Picture("k", "hop", "0/0", "post_grad_final", "inference", "z", nodes,
                      (PEdge("x", "y"), PEdge("y", "z")))
    return direct, through


def test_edges_that_join_shared_nodes_differently_are_marked() -> None:
    direct, through = two_pictures()
    found = differences(direct, {"B": through})
    assert found.nodes == {"w": "not in B"}
    assert set(found.edges) == {0}  # x→z; not z→w: its node is the difference
    assert differences(through, {"A": direct}).edges.keys() == {0}  # x→y
    assert len(differences(direct, {"B": direct})) == 0
    root, builder = parse(picture_svg(direct, "p", marked=found.nodes, marked_edges=found.edges))
    assert not builder.mismatched
    paths = [p for p in root.iter("path") if "e" in classes(p)]
    assert ["marked" in classes(p) for p in paths] == [True, False, False]
    assert paths[0].all_text() == found.edges[0]
    ids = {el.attrs["id"] for el in root.iter() if "id" in el.attrs}
    assert {p.attrs["marker-end"][5:-1] for p in paths} <= ids


def test_a_bare_diff_report_renders_without_pictures() -> None:
    a, b = read_report(GPU / "custom_op.json"), read_report(GPU / "triton_op.json")
    root, _ = parse(page_of(diff_reports(a, b)))
    assert not list(root.iter("figure")) and list(root.iter("table"))


# --- the command line --------------------------------------------------------------------

NO_TORCH = """
import sys
from tritoninspect.cli import app
try:
    app(sys.argv[1:], prog_name="tritoninspect")
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
print(sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "triton")), file=sys.stderr)
"""


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", NO_TORCH, *args], cwd=cwd, env=cli_env(), capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("command", ["graph", "breaks"])
def test_saved_report_to_html_without_torch(tmp_path: Path, command: str) -> None:
    out = tmp_path / "report.html"
    proc = run_cli(command, str(GPU / "graph_break.json"), "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "[]"  # neither torch nor triton imported
    assert written_by_tritoninspect(out)
    if command == "graph":  # the short summary; the findings and advice are in the page
        assert proc.stdout.startswith("tritoninspect ") and "Findings, by impact" in proc.stdout
    else:
        assert proc.stdout == ""
    root, _ = parse(out.read_text())
    sections = [s.attrs["id"] for s in root.iter("section")]
    if command == "graph":
        assert sections[0] == "findings" and "Findings, by impact" in out.read_text()
    assert sections.index("breaks") < sections.index("kernels") if command == "breaks" else \
        sections.index("kernels") < sections.index("breaks")
    again = run_cli(command, str(GPU / "graph_break.json"), "-o", str(out), cwd=tmp_path)
    assert again.returncode == 0, again.stderr  # our own page: replaced without --force


@pytest.mark.slow
def test_the_readme_command_compiles_a_sample_to_html(tmp_path: Path) -> None:
    """The HTML report's one command for a new user (docs/reading-the-report.md), past the install: a bundled sample compiled to a page."""
    proc = zygote_run([sys.executable, "-m", "tritoninspect", "graph", str(REPO / "samples" / "inplace.py") + ":Net",
                       "-o", "report.html"], cwd=tmp_path, env=cli_env(), capture_output=True, text=True,
                      timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines()[-1] == "wrote report.html (HTML report: 1 kernel, 1 finding)"
    assert proc.stdout.startswith("tritoninspect ") and "clone_input_view" not in proc.stdout
    assert "a view of a graph input" in proc.stdout  # samples/inplace.py's finding, in the short summary
    root, builder = parse((tmp_path / "report.html").read_text())
    assert not builder.mismatched and external_loads(root) == []
    svgs = list(root.iter("svg"))
    assert svgs and any("add_inplace_kernel" in t.all_text() for s in svgs for t in s.iter("text"))


def test_html_output_refuses_a_file_it_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "index.html"
    out.write_text("<!DOCTYPE html><html><body>mine</body></html>")
    proc = zygote_run([sys.executable, "-m", "tritoninspect", "graph", str(GPU / "triton_op.json"), "-o", str(out)],
                      cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "did not write" in proc.stderr
    assert out.read_text().endswith("mine</body></html>")


def test_three_way_diff_to_html(tmp_path: Path) -> None:
    out = tmp_path / "diff.html"
    reports = [str(GPU / f"{n}.json") for n in ("add_raw", "triton_op", "custom_op")]
    proc = run_cli("diff", *reports, "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "[]"
    root, _ = parse(out.read_text())
    (header,) = root.iter("header")
    assert len([d for d in header.iter("div") if "side-head" in classes(d)]) == 3
    assert len(list(root.iter("figure"))) == sum(len(kernel_pictures(r, r.kernels[0])) for r in map(read_report, reports))


def test_diff_to_html(tmp_path: Path) -> None:
    out = tmp_path / "diff.html"
    proc = run_cli("diff", str(GPU / "custom_op.json"), str(GPU / "triton_op.json"), "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "[]"
    assert "add_kernel" in proc.stdout  # the text diff still goes to stdout
    root, _ = parse(out.read_text())
    assert marked(root) and written_by_tritoninspect(out)


def test_compile_ids_of_a_custom_op_kernel_agree_with_text_and_json() -> None:
    """A kernel inside a custom_op: the page names the graph calling the op, as the text and JSON do."""
    from tritoninspect.analyse.summary import summarise_kernel

    report = read_report(GPU / "custom_op.json")
    kernel = report.kernel("add_kernel")
    ids = sorted({o.compile_id for o in kernel.occurrences})
    assert ids == ["0/0"] and list(summarise_kernel(kernel).compile_ids) == ids
    text = render_as(report, "text", width=200)
    html = page_of(report)
    assert "<th>compile ids</th><td>0/0</td>" in html
    assert "<th>compile ids</th><td>-</td>" not in html
    row = next(line for line in text.splitlines() if line.startswith("add_kernel") or " add_kernel " in line)
    assert "0/0" in row
