"""Graph and output-code text normalised for diffs: what two compiles of the same program name
differently (buffers, graph inputs, numbered names, kernel names, side-table indices, hashes,
temp paths) made equal, so a diff shows only real changes. Pure text functions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

# --- normalisation -------------------------------------------------------------------

_BUF = re.compile(r"\bbuf\d+\b")
_ARG = re.compile(r"\barg\d+_\d+\b")
_SIDE_TABLE_INDEX = re.compile(r"\b(kernel_idx|constant_args_idx)(\s*=\s*)\d+")
#: FX's "free these values now" trailer: `;  sin = l_x_ = None`.
_FX_RELEASE = re.compile(r";\s+(?:\w+ = )+None\s*$")
#: An inline comment after code (`buf3 = buf1; del buf1  # reuse`).
_INLINE_COMMENT = re.compile(r"\s{2,}# .*$")
#: The name an assignment defines: `add_3: "f32[64]" = ...`, `buf0 = ...`, `add_kernel_0 = ...`.
_ASSIGNED = re.compile(r'^\s*(?P<name>[A-Za-z_]\w*)\s*(?::\s*"[^"]*"\s*)?=(?!=)')
_CLASS = re.compile(r"^\s*class (?P<name>[A-Za-z_]\w*)\(")
_NUMBERED = re.compile(r"^(?P<base>\w*?[A-Za-z]\w*?)_\d+$")
_HASH = re.compile(r"\b[0-9a-fA-F]{32,}\b")
_TMP_PATH = re.compile(r"/(?:tmp|var/folders)/[^\s'\",)]+")
#: A module-level kernel definition in Inductor's output code.
_KERNEL_DEF = re.compile(r"^(?P<name>\w+) = async_compile\.(?P<kind>\w+)\((?P<rest>.*)$")
_SOURCE_START = re.compile(r"r?'''|r?\"\"\"")
_CALL_DEF = re.compile(r"^(?P<indent>\s*)def call\(")


def canonical_name(name: str) -> str:
    """The name with its renumbering removed: buf12 -> buf#, arg0_1 -> arg#, add_3 -> add."""
    if _BUF.fullmatch(name):
        return "buf#"
    if _ARG.fullmatch(name):
        return "arg#"
    numbered = _NUMBERED.match(name)
    return numbered["base"] if numbered else name


def defined_names(lines: Iterable[str]) -> set[str]:
    """Names the text defines (assignments, classes): only these lose a `_N` suffix,
    so `torch.ops.aten.add.Tensor` or a shape is never touched."""
    names = set()
    for line in lines:
        match = _ASSIGNED.match(line) or _CLASS.match(line)
        if match:
            names.add(match["name"])
    return names


def normalise_line(line: str, names: set[str]) -> str:
    """One cleaned line with every renumbered name, index, hash and temp path made canonical."""
    line = _SIDE_TABLE_INDEX.sub(r"\1\2#", line)
    line = _HASH.sub("<hash>", line)
    line = _TMP_PATH.sub("<tmp>", line)
    line = _BUF.sub("buf#", line)
    line = _ARG.sub("arg#", line)
    if names:
        line = re.sub(r"\b\w+\b", lambda m: canonical_name(m[0]) if m[0] in names else m[0], line)
    return line


def clean_lines(code: str) -> list[str]:
    """Code lines without comments, blank lines and FX release trailers."""
    lines = []
    for line in code.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        line = _INLINE_COMMENT.sub("", _FX_RELEASE.sub("", line)).rstrip()
        lines.append(line)
    return lines


def output_code_skeleton(code: str) -> str:
    """Inductor's output code reduced to what a diff can read: one line per kernel
    definition (its source omitted) and the body of `call()`."""
    lines = code.splitlines()
    defs = [_kernel_header(m) for line in lines if (m := _KERNEL_DEF.match(line))]
    body = _call_body(lines)
    if body is None:  # not the layout we know: compare the whole module
        return code
    return "\n".join([*defs, *body])


def _kernel_header(match: re.Match[str]) -> str:
    head = _SOURCE_START.split(match["rest"], maxsplit=1)
    args = head[0].rstrip(", ") + ", ..." if len(head) > 1 else match["rest"].rstrip(")")
    return f"{match['name']} = async_compile.{match['kind']}({args})"


def _call_body(lines: Sequence[str]) -> list[str] | None:
    for i, line in enumerate(lines):
        found = _CALL_DEF.match(line)
        if found:
            indent = len(found["indent"])
            body = []
            for rest in lines[i + 1:]:
                if rest.strip() and len(rest) - len(rest.lstrip()) <= indent:
                    break
                body.append(rest)
            return body
    return None


def normalise_graph(code: str, stage: str) -> list[str]:
    """The lines a graph diff compares: cleaned, with names made canonical."""
    text = output_code_skeleton(code) if stage == "output_code" else code
    lines = clean_lines(text)
    names = defined_names(lines)
    return [normalise_line(line, names) for line in lines]


def normalise_value(value: Any) -> str:
    """A field value (e.g. a neighbourhood) as compact text, names made canonical."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    text = _BUF.sub("buf#", _ARG.sub("arg#", text))
    # Generated names carry a running index: triton_poi_fused_sin_0, add_kernel_0, add_3.
    return re.sub(r"\b([A-Za-z]\w*?)_\d+\b", r"\1", text)


# --- output code ---------------------------------------------------------------------

_EXTERN_CALL = re.compile(r"\bextern_kernels\.\w+\(")
_OP_CALL = re.compile(r"\btorch\.ops\.(?P<ns>\w+)\.\w+\.\w+\(")
_CLONE_OR_COPY = re.compile(r"\b(?:clone|copy_?)\b(?:\.\w+)?\(")


def output_code_stats(code: str) -> dict[str, int]:
    """Kernels an output-code module defines and what its `call()` calls."""
    lines = code.splitlines()
    user, generated = [], []
    for i, line in enumerate(lines):
        match = _KERNEL_DEF.match(line)
        if match:
            is_user = i > 0 and lines[i - 1].startswith("# Original path:")
            (user if is_user else generated).append(match["name"])
    body = "\n".join(clean_lines("\n".join(_call_body(lines) or [])))
    calls = sum(len(re.findall(rf"\b{re.escape(name)}(?:\.run)?\(", body)) for name in user + generated)
    ops = [m["ns"] for m in _OP_CALL.finditer(body)]
    return {
        "Inductor kernels": len(generated),
        "user Triton kernels": len(user),
        "kernel calls": calls,
        "extern kernel calls": len(_EXTERN_CALL.findall(body)),
        "aten op calls": sum(ns == "aten" for ns in ops),
        "custom op calls": sum(ns != "aten" for ns in ops),
    }


def clone_copy_count(code: str, stage: str) -> int:
    """clone / copy / copy_ calls in a graph (in `call()` for output code)."""
    text = output_code_skeleton(code) if stage == "output_code" else code
    return sum(len(_CLONE_OR_COPY.findall(line)) for line in clean_lines(text))
