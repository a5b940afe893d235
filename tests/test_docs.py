"""The docs (tier a): the generated CLI reference matches the app, and every link between the README and
the pages of docs/ reaches a file and a heading, on GitHub as on the MkDocs site.

`mkdocs build --strict` (CI, `.ci/run`) checks the site's links too, but needs the `docs` extra and never
reads the README; these run with the tests. Set TRITONINSPECT_UPDATE_GOLD=1 to rewrite
docs/reference/cli.md after changing a command, an option or its help (or run `python -m tools.cli_reference`).
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path

import pytest

from tools import cli_reference

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = sorted([REPO / "README.md", *DOCS.rglob("*.md")])
UPDATE_GOLD = os.environ.get("TRITONINSPECT_UPDATE_GOLD") == "1"

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def test_the_cli_reference_is_what_the_app_generates() -> None:
    generated = cli_reference.generate()
    if UPDATE_GOLD:
        cli_reference.PAGE.write_text(generated, encoding="utf-8")
    assert cli_reference.PAGE.read_text(encoding="utf-8") == generated, (
        "docs/reference/cli.md is stale: run `python -m tools.cli_reference` and commit it"
    )


def test_the_cli_reference_lists_every_command_and_option() -> None:
    page = cli_reference.PAGE.read_text(encoding="utf-8")
    for heading in ("## graph", "## diff", "## breaks", "## check", "## export"):
        assert f"\n{heading}\n" in page
    for option in ("`--device <auto\\|cpu\\|cuda>`", "`-j, --jobs N`", "`--entry KERNEL=ENTRY`", "`--non-strict`",
                   "`--trace DIR`", "`--decompile`", "`--version`"):
        assert option in page, option
    assert "`default: inductor`" in page and "`default: 3; x>=0`" in page
    assert "[bold]" not in page and "[/]" not in page  # the epilogs' Rich markup is read, not copied


def _text(path: Path) -> str:
    return _FENCE.sub("", path.read_text(encoding="utf-8"))  # links in code blocks are not links


def _slugs(heading: str) -> tuple[str, str]:
    """A heading's anchor on the MkDocs site (Python-Markdown's toc) and on GitHub."""
    text = re.sub(r"[`*]", "", re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)).strip()
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    mkdocs = re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_text).strip().lower())
    github = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
    return mkdocs, github


def _anchors(path: Path) -> dict[str, tuple[str, str]]:
    headings = re.findall(r"^#{1,6} (.+?)\s*$", _text(path), re.M)
    return {heading: _slugs(heading) for heading in headings}


def _links(page: Path) -> list[str]:
    prose = re.sub(r"`[^`\n]*`", "", _text(page))  # nor in code spans: `kernel[grid](...)`
    return [t for t in _LINK.findall(prose) + _IMAGE.findall(prose) if not re.match(r"[a-z]+:", t)]


def _problem(page: Path, target: str) -> str | None:
    """Why `target`, linked from `page`, is broken on GitHub or on the site; None when it is not."""
    file_part, _, anchor = target.partition("#")
    path = (page.parent / file_part).resolve() if file_part else page
    if not path.exists():
        return f"{target}: no such file"
    if page.is_relative_to(DOCS) and not path.is_relative_to(DOCS):
        return f"{target}: leaves docs/, which is all the site holds (mkdocs --strict fails)"
    if not anchor:
        return None
    slugs = _anchors(path)
    found = [h for h, (site, github) in slugs.items() if anchor in (site, github)]
    if not found:
        return f"{target}: no heading with that anchor"
    site, github = slugs[found[0]]
    if not site == github == anchor:
        return (f"{target}: '{found[0]}' is #{site} on the site but #{github} on GitHub; link a heading "
                "whose anchor is the same on both (no punctuation)")
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_reaches_its_file_and_heading(page: Path) -> None:
    links = _links(page)
    problems = [problem for target in links if (problem := _problem(page, target))]
    assert not problems, "\n".join(problems)
    if page.name == "README.md":
        assert len(links) >= 10  # the landing page links into the docs


#: A repository path as the pages name it (`tritoninspect/report.py`, `tests/reallib/*.py`, `scripts/gpu-tests`).
_REPO_PATH = re.compile(r"(?<![\w/.-])((?:tritoninspect|tools|tests|samples|scripts|benchmarks|docs|\.ci)/[\w./*-]*)")
#: Named but made on demand (git-ignored).
_MADE_ON_DEMAND = {"tests/gold/_mismatch/"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_repository_path_a_page_names_exists(page: Path) -> None:
    """Modules move (issue 21): a page that names a file which is gone fails here, not in a reader's hands."""
    named = {m.rstrip(".,;:)") for m in _REPO_PATH.findall(page.read_text(encoding="utf-8"))}
    gone = sorted(p for p in named - _MADE_ON_DEMAND if not list(REPO.glob(p)))
    assert not gone, f"{page.relative_to(REPO)} names paths that do not exist: {gone}"


def test_the_readme_is_a_landing_page() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode()) <= 20_000
    # The two commands stay at the very top, as written (the fresh-machine check and CI run them).
    first, second = re.findall(r"```sh\n(.+?)\n```", readme)[:2]
    assert first == ("python -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 'triton==3.7.*' "
                     "-e . && tritoninspect graph samples/triton_op.py:Net")
    assert second == ("python -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 "
                      "'triton==3.7.*' -e '.[test]' && python -m pytest -q -n auto --dist loadfile")
    # CI calls the README's test command.
    assert f"\n{second.rsplit(' && ', 1)[1]} || {{" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert readme.index(first) < readme.index("## ")
