"""Triton IR text: from an op to the kernel source line it came from."""

from __future__ import annotations

import re

_LOC_DEF_RE = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$", re.M)
_LOC_FILE_RE = re.compile(r'^"(?P<file>[^"]+)":(?P<line>\d+):\d+$')


def ttir_op_location(ttir: str, op: str) -> tuple[str | None, int | None]:
    """(file, line) of the first `op` in TTIR text, following its `loc(#locN)`
    through named locations (`#loc22 = loc("y"(#loc8))`) to a file position."""
    line = next((ln for ln in ttir.splitlines() if re.search(rf"(?<![\w.]){re.escape(op)}\b", ln)), None)
    if line is None:
        return None, None
    m = re.search(r"loc\((#loc\d*|\"[^\"]+\":\d+:\d+)\)\s*$", line)
    if m is None:
        return None, None
    defs = dict(_LOC_DEF_RE.findall(ttir))
    ref = m.group(1)
    for _ in range(16):
        target = _LOC_FILE_RE.match(ref)
        if target:
            return target["file"], int(target["line"])
        inner = re.search(r"\(?(#loc\d*)\)?\s*$", ref)
        if ref in defs:
            ref = defs[ref]
        elif inner and inner.group(1) in defs:
            ref = defs[inner.group(1)]
        else:
            return None, None
    return None, None
