"""Recompile guards as text: the failed guard on one readable line, and what it compared.

torch's guard-failure text is code (`___check_type_id(args[0], 9431...)`, a size expression hundreds of
characters long) or, for a few failures, Dynamo's own prose; the report says each in words a line holds.
"""

from __future__ import annotations

import re

_SIZE_RE = re.compile(r"expected (?P<old>-?\d+), actual (?P<new>-?\d+)")
_COMPARE_RE = re.compile(r"(?P<op>==|!=|<=|>=|<|>)\s*(?P<value>-?\d+)\s*$")
#: Symbols torch prints for sizes: s77 (backed), u0 (unbacked), ps0.
_SYMBOL_RE = re.compile(r"\b(?:s|u|ps)\d+\b")
_SIZE_EXPR_RE = re.compile(r"\b\w+\.size\(\)\[\d+\]")
#: Guard expressions longer than this are shortened for the one-line form.
GUARD_WIDTH = 80
#: A sentence of prose (words, a colon, more words, a full stop), as Dynamo writes when it names no guard.
_SENTENCE_RE = re.compile(r"^(?P<first>[A-Z][a-z]+(?: [a-z]+)*: [a-z][\w -]*?)\.(?: |$)")


def is_size_mismatch(guard: str) -> bool:
    """The failed guard is Dynamo's check of a tensor's static size (`tensor 'x' size mismatch ...`)."""
    return "size mismatch" in guard and _SIZE_RE.search(guard) is not None


#: Dynamo's identity guards, with the object's id (a number that says nothing) and, for a type, its class
#: (torch/_dynamo/guards.py TYPE_MATCH and ID_MATCH, `___check_type_id(x, id), type=<class '...'>`, 2.11-2.14).
_TYPE_ID_RE = re.compile(r"^___check_type_id\((?P<x>.+?),\s*\d+\)(?:,\s*type=<class '(?:[\w.]+\.)?(?P<cls>\w+)'>)?")
_OBJ_ID_RE = re.compile(r"^___check_obj_id\((?P<x>.+?),\s*\d+\)(?:,\s*type=<class '(?:[\w.]+\.)?(?P<cls>\w+)'>)?")


def short_guard(guard: str) -> str:
    """A guard on one readable line: a long expression over sizes becomes `<expression over
    x.size()[0]> == 128`, an identity check `type(args[0]) is LlamaModel` or `args[0] is <the object
    compiled for>`, any other long one its start; the source comment torch appends is kept."""
    expr, sep, comment = guard.partition("  # ")
    expr = expr.strip()
    if len(expr) > GUARD_WIDTH and _SENTENCE_RE.match(expr):
        # Dynamo's own words, not a guard (2.13 "Unexpected recompilation: runtime guards failed even though
        # they passed during recompilation-reason analysis. Please open an issue ..."): its first sentence
        return _SENTENCE_RE.match(expr)["first"]  # type: ignore[index]
    if m := _TYPE_ID_RE.match(expr):
        expr = f"type({m['x']}) is {m['cls'] or '<the type compiled for>'}"
    elif m := _OBJ_ID_RE.match(expr):
        expr = f"{m['x']} is <the {m['cls'] or 'object'} compiled for>"
    elif len(expr) > GUARD_WIDTH and (_SIZE_EXPR_RE.search(expr) or _SYMBOL_RE.search(expr)):
        compare = _COMPARE_RE.search(expr)
        over = ", ".join(dict.fromkeys(_SIZE_EXPR_RE.findall(expr))) or "sizes"
        tail = f" {compare['op']} {compare['value']}" if compare else ""
        expr = f"<expression over {over}>{tail}"
    elif len(expr) > GUARD_WIDTH:
        expr = expr[:GUARD_WIDTH - 1].rstrip() + "…"
    comment = comment.split("  # ", 1)[0].strip()
    return f"{expr}  # {comment}" if sep and comment else expr


def guarded_value(guard: str) -> str | None:
    """The value the failed guard held for the old compile, as text."""
    size = _SIZE_RE.search(guard)
    if size:
        return size["old"]
    compare = _COMPARE_RE.search(guard.partition("  # ")[0].strip())
    return compare["value"] if compare and compare["op"] == "==" else None


def is_symbolic(text: str) -> bool:
    """Does a value's text name a size symbol (`s77`, `u0`)?"""
    return bool(_SYMBOL_RE.search(text))
