"""MkDocs hooks (mkdocs.yml `hooks:`): the pages' Markdown made to read the same on the site as on GitHub.

GitHub's tables need a `|` inside a code span escaped as `\\|`; Python-Markdown's tables do not split on a
`|` inside backticks and would print the backslash. So a table row's code spans lose that backslash here.
"""

from __future__ import annotations

import re
from typing import Any

_CODE_SPAN = re.compile(r"`[^`\n]*`")


def on_page_markdown(markdown: str, **_: Any) -> str:
    """The page with `\\|` inside a table row's code spans turned into `|`."""
    return "\n".join(_unescape_row(line) if line.lstrip().startswith("|") else line for line in markdown.split("\n"))


def _unescape_row(line: str) -> str:
    return _CODE_SPAN.sub(lambda m: m.group(0).replace("\\|", "|"), line)
