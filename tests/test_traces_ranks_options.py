"""`graph RANKS_DIR` with the options of a single report: each works for every rank
(`--strict`, `--detail`, `--kernel`, `--show`, `-o x.html`) or is refused (`--dump`)."""

from __future__ import annotations

import collections
import json
import re
import shutil
from pathlib import Path

from typer.testing import CliRunner, Result

from _html_check import external_loads, parse
from _trace_expect import TRACES
from tritoninspect.cli import app
from tritoninspect.model.errors import ExitCode

RANKS = TRACES / "ranks"
KERNEL = "one_block_kernel"


def cli(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_strict_fails_when_any_rank_has_warnings(tmp_path: Path) -> None:
    assert cli("graph", str(RANKS), "--strict").exit_code == 0
    ranks = tmp_path / "ranks"
    shutil.copytree(RANKS, ranks)
    (rank1,) = ranks.glob("*_rank_1_*.log")
    # A line that does not parse: rank 1's report warns that its log may be cut off.
    rank1.write_text('V1130 08:00:58.429000 5453 torch/_dynamo/x.py:1] {"str": 5}\n' + rank1.read_text())
    plain = cli("graph", str(ranks))
    assert plain.exit_code == 0, plain.output
    strict = cli("graph", str(ranks), "--strict")
    assert strict.exit_code == ExitCode.FINDINGS, strict.output
    assert "--strict: 1 diagnostic(s) (rank 1)" in strict.stderr
    # With --json the ranks' reports stay in the workers (run/traces.py ranks_summary): the same verdict.
    strict_json = cli("graph", str(ranks), "--strict", "--json")
    assert strict_json.exit_code == ExitCode.FINDINGS, strict_json.output
    assert "--strict: 1 diagnostic(s) (rank 1)" in strict_json.stderr
    assert [r["meta"]["rank"] for r in json.loads(strict_json.stdout)["reports"]] == [0, 1]


def test_detail_kernel_and_show_apply_to_every_rank() -> None:
    summary = cli("graph", str(RANKS)).stdout
    detail = cli("graph", str(RANKS), "--detail").stdout
    code = cli("graph", str(RANKS), "--show", "code").stdout
    kernel = cli("graph", str(RANKS), "--kernel", KERNEL)
    assert kernel.exit_code == 0, kernel.output
    for text in (summary, detail, code, kernel.stdout):
        assert "Where ranks differ" in text and text.index("═ rank 0 ═") < text.index("═ rank 1 ═")
    # Each rank in the view asked for: the stage tables, the output code, not the one-screen summary.
    assert detail != summary and len(detail) > len(summary)
    assert code.count("def call(") >= 2 and "def call(" not in summary
    missing = cli("graph", str(RANKS), "--kernel", "no_such_kernel")
    assert missing.exit_code == ExitCode.USAGE and f"kernels: {KERNEL}" in missing.output


def test_dump_of_several_ranks_is_refused(tmp_path: Path) -> None:
    result = cli("graph", str(RANKS), "--dump", str(tmp_path / "d"))
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "name one rank's log" in " ".join(result.output.split())
    assert not (tmp_path / "d").exists()


def test_html_of_several_ranks_is_one_page_with_each_rank(tmp_path: Path) -> None:
    out = tmp_path / "ranks.html"
    result = cli("graph", str(RANKS), "-o", str(out))
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "Where ranks differ" in page and "recompiles" in page
    assert page.index('id="r0"') < page.index('id="r1"')
    assert page.count(f"{KERNEL}") >= 2
    # Two ranks' kernels, figures and code lines never share an id; every link has its target.
    ids = re.findall(r'\bid="([^"]*)"', page)
    assert [i for i, n in collections.Counter(ids).items() if n > 1] == []
    refs = re.findall(r'href="#([^"]*)"', page) + re.findall(r"url\(#([^)]*)\)", page)
    assert refs and set(refs) <= set(ids)
    # Well formed (each rank's header block closed where it opened) and self-contained.
    root, builder = parse(page)
    assert builder.mismatched == [] and external_loads(root) == []
    # The JSON of the same folder is unchanged by the HTML route.
    assert json.loads(cli("graph", str(RANKS), "--json").stdout)["ranks"] == ["rank 0", "rank 1"]
