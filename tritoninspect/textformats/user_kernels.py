"""What Inductor's output code says about each user kernel it compiled: the `user_autotune` metadata
(its configs, the `triton_meta` signature, `restore_value` / `reset_to_zero`) and the line it is
defined at. Torch-free: read from the output-code text.

The layout (torch/_inductor/codegen/wrapper.py `define_user_defined_triton_kernel`, torch 2.11-2.14):

    # Original path: /path/model.py:10
    add_kernel_0 = async_compile.triton('add_kernel', '''
    ...
    @triton_heuristics.user_autotune(
        configs=[{'BLOCK': 16, 'num_warps': 4, 'num_stages': 3}, ...],
        inductor_meta={...},
        triton_meta={'signature': {'x_ptr': '*fp32', 'scale': 'fp64', ...}, 'device': ..., 'constants': {...},
                     'configs': [...], 'restore_value': ('x_ptr',), 'reset_to_zero': ('sum_ptr',)},
        ...
    )
    @triton.jit
    def add_kernel(...):
    ''', device_str='cuda')
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

_DEF_RE = re.compile(r"^(?P<iname>\w+) = async_compile\.triton\('(?P<name>\w+)', '''", re.M)
_END = "''', device_str="


@dataclass(frozen=True)
class UserKernelMeta:
    """One user kernel's definition in an output module."""

    inductor_name: str
    name: str
    #: 1-based line of `name = async_compile.triton(...)` in the output code.
    line: int
    #: `triton_meta["signature"]`: parameter -> Triton type ("*fp32", "fp64", "i32", "constexpr").
    signature: dict[str, str] = field(default_factory=dict)
    #: `user_autotune(configs=[...])`: how many configs Inductor may benchmark (None: not read).
    configs: int | None = None
    restore_value: tuple[str, ...] = ()
    reset_to_zero: tuple[str, ...] = ()


def user_kernel_metas(code: str) -> dict[str, UserKernelMeta]:
    """Inductor name -> its metadata, for every user kernel defined in `code`."""
    found = {}
    for m in _DEF_RE.finditer(code):
        end = code.find(_END, m.end())
        body = code[m.end():end if end >= 0 else len(code)]
        triton_meta = _section(body, "triton_meta=")
        found[m["iname"]] = UserKernelMeta(
            inductor_name=m["iname"], name=m["name"], line=code.count("\n", 0, m.start()) + 1,
            signature=_literal(_dict_item(triton_meta, "signature"), dict) or {},
            configs=_count(_section(body, "configs=")),
            restore_value=tuple(_literal(_dict_item(triton_meta, "restore_value"), (tuple, list)) or ()),
            reset_to_zero=tuple(_literal(_dict_item(triton_meta, "reset_to_zero"), (tuple, list)) or ()),
        )
    return found


def _section(body: str, keyword: str) -> str:
    """The balanced bracket expression after `keyword` on the decorator's line ("" when absent)."""
    start = body.find(keyword)
    if start < 0:
        return ""
    return _balanced(body, start + len(keyword))


def _dict_item(text: str, key: str) -> str:
    """The value text of `'key': <value>` in a dict's source text ("" when absent)."""
    start = text.find(f"'{key}': ")
    if start < 0:
        return ""
    return _balanced(text, start + len(key) + 4)


def _balanced(text: str, start: int) -> str:
    """From `text[start]`, an opening bracket, to its closing bracket (quotes respected)."""
    if start >= len(text) or text[start] not in "[({":
        return ""
    depth, quote, i = 0, None, start
    while (found := _BRACKETS_RE.search(text, i)) is not None:  # jumps over the characters that change nothing
        i = found.start()
        ch = text[i]
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "[({":
            depth += 1
        elif ch in "])}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
        i += 1
    return ""


#: What `_balanced` looks at: brackets and quotes.
_BRACKETS_RE = re.compile(r"""[()\[\]{}'"]""")


def _literal(text: str, kind: Any) -> Any:
    if not text:
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, kind) else None


def _count(text: str) -> int | None:
    """The number of items of a list literal of dicts ("[{...}, {...}]")."""
    value = _literal(text, list)
    return len(value) if value is not None else None
