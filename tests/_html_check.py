"""Reading our HTML pages back for tests: a small DOM from html.parser, and what it loads.

Shared by tests/test_html.py (structure, escaping) and tests/test_html_browser.py (Chromium).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

#: Elements that never have a closing tag.
_VOID = {"meta", "br", "img", "input", "link", "hr", "area", "base", "col", "embed", "source", "track", "wbr"}
#: Attributes that make a browser fetch something.
LOADING_ATTRIBUTES = {"src", "srcset", "data", "poster", "background", "action", "formaction"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    parent: Element | None = None
    children: list[Element] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def all_text(self) -> str:
        return "".join(self.text) + "".join(c.all_text() for c in self.children)

    def iter(self, tag: str | None = None):  # type: ignore[no-untyped-def]
        for child in self.children:
            if tag is None or child.tag == tag:
                yield child
            yield from child.iter(tag)

    def ancestors(self) -> list[str]:
        out, node = [], self.parent
        while node is not None:
            out.append(node.tag)
            node = node.parent
        return out


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.current = self.root
        self.doctype = ""
        self.mismatched: list[str] = []

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(element)
        if tag not in _VOID:
            self.current = element

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.current.children.append(Element(tag, {k: v or "" for k, v in attrs}, self.current))

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        if self.current.tag != tag:
            self.mismatched.append(f"</{tag}> closes <{self.current.tag}>")
            node = self.current
            while node is not None and node.tag != tag:
                node = node.parent
            if node is None:
                return
            self.current = node
        self.current = self.current.parent or self.root

    def handle_data(self, data: str) -> None:
        self.current.text.append(data)


def parse(page: str) -> tuple[Element, _Builder]:
    builder = _Builder()
    builder.feed(page)
    builder.close()
    return builder.root, builder


def external_loads(root: Element) -> list[str]:
    """Everything in the page that would make a browser fetch something."""
    found = []
    for el in root.iter():
        for name, value in el.attrs.items():
            if name in LOADING_ATTRIBUTES:
                found.append(f"<{el.tag} {name}={value!r}>")
        if el.tag == "link":
            found.append(f"<link {el.attrs}>")
        if el.tag in ("style", "script") or "style" in el.attrs:
            body = el.all_text() + el.attrs.get("style", "")
            for marker in ("@import", "url(http", "url(//", "url('http", 'url("http', "fetch(", "XMLHttpRequest"):
                if marker in body:
                    found.append(f"{marker} in <{el.tag}>")
    return found
