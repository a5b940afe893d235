"""FX graph code (`GraphModule.print_readable` / `Graph.code` text): its nodes and their inputs.

Reports keep each graph as readable FX code (`Graph.code`). To draw the graph around a
kernel without torch, this reads that text back into nodes: one per assignment line
`name: "f32[64]" = torch.ops.aten.sin.default(x);  x = None`, plus the `forward` parameters
(inputs) and the `return` (output). Layout as torch 2.11-2.14 print it (fx/graph.py
`_python_code`); an unknown line is skipped, never an exception.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["FxGraph", "FxNode", "parse_fx"]

#: `name: "type" = expression` or `name = expression`, at any indentation.
_ASSIGN_RE = re.compile(r"^(?P<indent>\s*)(?P<name>[A-Za-z_]\w*)(?:\s*:\s*(?P<type>\"[^\"]*\"|'[^']*'|[\w.\[\], ]+))?"
                        r"\s*=\s*(?P<expr>.+)$")
_DEF_RE = re.compile(r"^\s*def forward\(self,?(?P<params>.*)\):\s*$")
_PARAM_RE = re.compile(r"(?P<name>[A-Za-z_]\w*)\s*(?::\s*(?P<type>\"[^\"]*\"|'[^']*'|[^,=]+))?")
_RETURN_RE = re.compile(r"^\s*return\b(?P<expr>.*)$")
_CLASS_RE = re.compile(r"^\s*class (?P<name>\S+?)\(")
#: A node's source comment, maybe after its annotations and activation-checkpoint tags (torch 2.11-2.14,
#: fx/graph.py `append_stacktrace_summary`: `# ac_graph_id: 2 - PREFER_RECOMPUTE File: ...`).
_FILE_RE = re.compile(r"^\s*#(?:.*? )?File: (?P<where>.+?), code: (?P<code>.*)$")
_IDENT_RE = re.compile(r"(?<![\w.'\"])[A-Za-z_]\w*(?![\w'\"])")
#: The call target: `torch.ops.aten.sin.default(`, `operator.getitem(`, or `x[...]` indexing.
_TARGET_RE = re.compile(r"^(?P<target>[A-Za-z_][\w.]*)\s*(?P<open>[(\[])")
_BINDING_RE = re.compile(r"'(?P<key>\w+)': (?P<value>[A-Za-z_]\w*)\b")
#: Python keywords and builtins that can appear inside a node's arguments.
_NOT_NODES = frozenset({"None", "True", "False", "torch", "device", "inf", "nan", "self"})


@dataclass(frozen=True)
class FxNode:
    """One node: a parameter (`placeholder`), an assignment (`call`) or the `return` (`output`)."""

    name: str
    #: "placeholder", "call" or "output".
    op: str
    #: What it calls, e.g. "torch.ops.aten.sin.default", "getitem"; "" for placeholders.
    target: str = ""
    #: Earlier nodes it reads, in order of appearance, each once.
    inputs: tuple[str, ...] = ()
    #: The annotated type, e.g. "f32[64]" ("" when not printed).
    type: str = ""
    #: 1-based line in the graph code.
    line: int = 0
    #: The user's source the node came from, from the `# File: ...` comment above it.
    source: str = ""
    #: The subgraph module (class) it sits in; "" for the outermost.
    module: str = ""
    #: `'key': node` pairs of dict arguments (a kernel HOP's `kwargs`: parameter -> node).
    bindings: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class FxGraph:
    nodes: tuple[FxNode, ...] = ()

    def node(self, name: str, module: str | None = None) -> FxNode | None:
        """The node named `name` (in `module`, when given; else the first of that name)."""
        return next((n for n in self.nodes if n.name == name and (module is None or n.module == module)), None)

    def users(self, node: FxNode) -> list[FxNode]:
        """Nodes of the same module that read `node`, in order."""
        return [n for n in self.nodes if n.module == node.module and node.name in n.inputs]


@functools.lru_cache(maxsize=256)
def parse_fx(code: str) -> FxGraph:
    """The nodes of every module in `code`, in order (see the module docstring).

    Cached: a page draws each kernel's pictures from the same graphs several times (pure, immutable result)."""
    nodes: list[FxNode] = []
    known: dict[str, set[str]] = {}
    module, outer_seen, source = "", False, ""
    for number, line in enumerate(code.splitlines(), start=1):
        cls = _CLASS_RE.match(line)
        if cls:
            module = cls["name"] if outer_seen and line[:1].isspace() else ""
            outer_seen = True
            continue
        names = known.setdefault(module, set())
        node = _parse_line(line, number, module, names, source)
        if node is None:
            comment = _FILE_RE.match(line)
            if comment:
                source = f"{comment['where']}: {comment['code']}"
            continue
        for n in node:
            names.add(n.name)
            nodes.append(n)
    return FxGraph(tuple(nodes))


def _parse_line(line: str, number: int, module: str, names: set[str], source: str) -> list[FxNode] | None:
    definition = _DEF_RE.match(line)
    if definition:
        return [FxNode(m["name"], "placeholder", type=_unquote(m["type"] or ""), line=number, module=module)
                for m in _PARAM_RE.finditer(definition["params"]) if m["name"] != "self"]
    ret = _RETURN_RE.match(line)
    if ret:
        return [FxNode("output", "output", inputs=_refs(ret["expr"], names), line=number, module=module)]
    if line.lstrip().startswith("#"):
        return None
    assign = _ASSIGN_RE.match(line)
    if not assign:
        return None
    expr = _strip_deletes(assign["expr"])
    target = _target(expr)
    bindings = tuple((m["key"], m["value"]) for m in _BINDING_RE.finditer(expr) if m["value"] in names)
    return [FxNode(assign["name"], "call", target, _refs(expr, names), _unquote(assign["type"] or ""), number,
                   source, module, bindings)]


def _strip_deletes(expr: str) -> str:
    # FX appends `;  a = b = None` to free values no later node reads.
    return expr.split(";  ", 1)[0].strip()


def _target(expr: str) -> str:
    match = _TARGET_RE.match(expr)
    if not match:
        return ""
    return "getitem" if match["open"] == "[" else match["target"]


def _refs(expr: str, names: set[str]) -> tuple[str, ...]:
    """Known node names read by `expr`, each once; string literals (dict keys) are skipped."""
    without_strings = re.sub(r"'[^']*'|\"[^\"]*\"", "''", expr)
    found: list[str] = []
    for match in _IDENT_RE.finditer(without_strings):
        name = match[0]
        if name in names and name not in _NOT_NODES and name not in found:
            found.append(name)
    return tuple(found)


def _unquote(text: str) -> str:
    text = text.strip()
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" else text
