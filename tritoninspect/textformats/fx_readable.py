"""FX graphs as torch prints them (`GraphModule.print_readable`) in a TORCH_TRACE: kernel nodes, op calls, sources.

The graph payloads of a TORCH_TRACE (`dynamo_output_graph`, `aot_*_graph`,
`before_post_grad_graph`, `inductor_post_grad_graph`) are `print_readable` text, the same
layout in torch 2.11-2.14 (torch/fx/graph.py `python_code`, verbose form): one class per
(sub)graph module, nested classes for subgraphs (`class fwd_body_0(torch.nn.Module):`), a
`# File: path:line in func, code: text` comment above the nodes a source line made, and
one statement per node, `name: "f32[64][1]cpu" = target(args);  dead = None`. The
user-kernel HOPs print their kwargs in full:

    triton_kernel_wrapper_mutation = torch.ops.higher_order.triton_kernel_wrapper_mutation(
        kernel_idx = 0, constant_args_idx = 0, grid = [(4, 1, 1)], tma_descriptor_metadata = {},
        kwargs = {'x_ptr': y, 'y_ptr': l_w_, 'out_ptr': out})

(on one line; `tensors_to_clone = [...]` on the functional form; torch 2.14 adds
`launch_kwargs` when non-empty). Values that are graph nodes print as bare names.
Unknown statements are skipped, never an exception.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

_CLASS_RE = re.compile(r"^(?P<indent>\s*)class (?P<name>[\w<>]+)\(torch\.nn\.Module\):")
#: A node's source comment. torch 2.11-2.14 (fx/graph.py `append_stacktrace_summary`) may put the node's
#: annotations and activation-checkpoint tags before `File:` (`# ac_graph_id: 2 - PREFER_RECOMPUTE File: ...`).
_FILE_RE = re.compile(r"^\s*#(?:.*? )?File: (?P<file>.+?):(?P<line>\d+) in (?P<func>[\w<>.]+), code: (?P<code>.*)$")
_NODE_RE = re.compile(r'^\s*(?P<name>\w+)(?:: "(?P<type>[^"]*)")? = (?P<rhs>.*)$')
_HOP_RE = re.compile(r"torch\.ops\.higher_order\.triton_kernel_wrapper_(?P<form>mutation|functional)\(")
_TARGET_RE = re.compile(r"torch\.ops\.(?P<ns>\w+)\.(?P<op>\w+)[.(]")
_STRIDED_OF_RE = re.compile(r"torch\.ops\.aten\.as_strided\.default\((?P<of>\w+),")
_OP_RE = re.compile(r"\btorch\.ops\.(?P<ns>\w+)\.(?P<op>\w+)\.(?P<overload>\w+)\(")
_ANNOTATION_RE = re.compile(r'(?P<name>\w+): "(?P<type>[^"]*)"')
#: A node that calls something (call_function, call_method, call_module), as FX prints it: `torch.`/`operator.`
#: targets, methods, builtins (`getattr(`), indexing, and the operators FX writes inline (fx/graph.py
#: `_format_target`/`magic_methods`: `s77 // 16`, `a ** 2`, `x >= 0`; `-x`, `~x`).
_CALL_RE = re.compile(r"^(?:torch\.|operator\.|\w+\.\w+\(|[A-Za-z_]\w*\(|\w+\[|[-+~][\w.]"
                      r"|[\w.]+ (?://|\*\*|<<|>>|==|!=|<=|>=|[-+*/%@&|^<>]) )")
#: Launch texts: `k[grid](`, `wrap_triton(k)[grid](`, `capture_triton(k)[grid](`, `k.run(`.
_LAUNCH_NAME_RES = (
    re.compile(r"\b(?:wrap_triton|capture_triton)\((?:\w+\.)*(?P<name>\w+)\)\s*\["),
    re.compile(r"(?:^|[^\w.])(?:\w+\.)*(?P<name>\w+)\s*\[[^\]]*\]\s*\("),
)
_DTYPES = {"f32": ("float32", 4), "f16": ("float16", 2), "bf16": ("bfloat16", 2), "f64": ("float64", 8),
           "i64": ("int64", 8), "i32": ("int32", 4), "i16": ("int16", 2), "i8": ("int8", 1), "u8": ("uint8", 1),
           "b8": ("bool", 1), "f8e4m3fn": ("float8_e4m3fn", 1), "f8e5m2": ("float8_e5m2", 1)}
_TYPE_RE = re.compile(r"^(?P<dtype>[a-z]\w*)\[(?P<shape>[^\]]*)\]")


@dataclass(frozen=True)
class Ref:
    """A graph node named where a value was expected (a tensor, a SymInt)."""

    name: str


@dataclass(frozen=True)
class SourceLine:
    """The `# File:` comment above a node: the user's (or library's) line that made it."""

    file: str
    line: int
    function: str
    code: str


@dataclass(frozen=True)
class HopNode:
    """A `triton_kernel_wrapper_mutation/functional` node, its kwargs as printed."""

    name: str
    form: str
    subgraph: str
    kernel_idx: int | None
    constant_args_idx: int | None
    grid: tuple[tuple[Any, ...], ...]
    kwargs: dict[str, Any]
    tensors_to_clone: tuple[str, ...] | None
    source: SourceLine | None = None


@dataclass(frozen=True)
class OpCall:
    """A call of a non-torch op (`torch.ops.ns.op.overload(...)`): a custom op."""

    name: str
    op: str
    subgraph: str
    source: SourceLine | None = None


@dataclass(frozen=True)
class ParsedGraph:
    """What one printed graph holds that tritoninspect reads. Immutable (tuples, read-only mappings):
    the parse of a text is shared by every event that carries the same text (textformats/memo.py)."""

    hops: tuple[HopNode, ...] = ()
    ops: tuple[OpCall, ...] = ()
    #: node name -> its printed type, e.g. "f32[64][1]cpu" or "Sym(s77)".
    types: Mapping[str, str] = field(default_factory=dict)
    #: node name -> its op as an `Original ATen` comment names it: "sin", "mylib.op",
    #: "triton_kernel_wrapper_mutation" (torch.ops.* calls only).
    targets: Mapping[str, str] = field(default_factory=dict)
    subgraphs: tuple[str, ...] = ()
    op_count: int = 0
    #: `aten.as_strided` node -> the node it is a view of (its first argument): Inductor's clone of a kernel
    #: argument is `as_strided(clone(as_strided(x)))` in the final post-grad graph.
    strided: Mapping[str, str] = field(default_factory=dict)


@dataclass
class _Graph:
    """A graph as it is being parsed."""

    hops: list[HopNode] = field(default_factory=list)
    ops: list[OpCall] = field(default_factory=list)
    types: dict[str, str] = field(default_factory=dict)
    targets: dict[str, str] = field(default_factory=dict)
    subgraphs: list[str] = field(default_factory=list)
    op_count: int = 0
    strided: dict[str, str] = field(default_factory=dict)


def parse_graph(code: str, torch_namespaces: frozenset[str] = frozenset()) -> ParsedGraph:
    """The kernel nodes, custom-op calls, node types and subgraphs of a printed graph.
    `torch_namespaces`: op namespaces that are torch's own (not custom ops)."""
    graph = _Graph()
    classes: list[tuple[int, str]] = []
    source: SourceLine | None = None
    for raw in code.splitlines():
        match = _CLASS_RE.match(raw)
        if match:
            indent = len(match["indent"])
            classes = [c for c in classes if c[0] < indent] + [(indent, match["name"])]
            if len(classes) > 1:
                graph.subgraphs.append(_subgraph(classes))
            source = None
            continue
        comment = _FILE_RE.match(raw)
        if comment:
            source = SourceLine(comment["file"], int(comment["line"]), comment["func"], comment["code"].strip())
            continue
        for annotated in _ANNOTATION_RE.finditer(raw):  # placeholders in the signature too
            graph.types.setdefault(annotated["name"], annotated["type"])
        node = _NODE_RE.match(raw)
        if node is None:
            continue
        _node(graph, node, _subgraph(classes), source, torch_namespaces)
    return ParsedGraph(tuple(graph.hops), tuple(graph.ops), MappingProxyType(graph.types),
                       MappingProxyType(graph.targets), tuple(graph.subgraphs), graph.op_count,
                       MappingProxyType(graph.strided))


def _subgraph(classes: list[tuple[int, str]]) -> str:
    return ".".join(name for _, name in classes[1:])


def _node(graph: _Graph, node: re.Match[str], subgraph: str, source: SourceLine | None,
          torch_namespaces: frozenset[str]) -> None:
    name, rhs = node["name"], node["rhs"]
    if node["type"]:
        graph.types[name] = node["type"]
    statement = rhs.split(";  ", 1)[0]
    if statement in graph.types:  # `l_x_ = L_x_`: Dynamo's name for a placeholder
        graph.types.setdefault(name, graph.types[statement])
    if not subgraph and _CALL_RE.match(statement):  # the graph's own nodes, as `Graph.op_count` counts them live
        graph.op_count += 1
    target = _TARGET_RE.match(statement)
    if target is not None:
        ns, op = target["ns"], target["op"]
        graph.targets[name] = op if ns in ("aten", "higher_order") else f"{ns}.{op}"
        if ns == "aten" and op == "as_strided":
            viewed = _STRIDED_OF_RE.match(statement)
            if viewed:
                graph.strided[name] = viewed["of"]
    hop = _HOP_RE.search(statement)
    if hop is not None:
        parsed = _hop(name, hop["form"], statement[hop.start():], subgraph, source)
        if parsed is not None:
            graph.hops.append(parsed)
        return
    op = _OP_RE.match(statement)
    if op is not None and op["ns"] not in torch_namespaces:
        graph.ops.append(OpCall(name, f"{op['ns']}::{op['op']}", subgraph, source))


def _hop(name: str, form: str, call: str, subgraph: str, source: SourceLine | None) -> HopNode | None:
    try:
        tree = ast.parse(_balanced(call), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(tree, ast.Call):
        return None
    kw = {k.arg: _value(k.value) for k in tree.keywords if k.arg}
    grid = tuple(tuple(g) if isinstance(g, (list, tuple)) else (g,) for g in kw.get("grid") or ())
    clone = kw.get("tensors_to_clone")
    return HopNode(
        name, form, subgraph, _int(kw.get("kernel_idx")), _int(kw.get("constant_args_idx")), grid,
        dict(kw.get("kwargs") or {}), tuple(clone) if isinstance(clone, (list, tuple)) else None, source,
    )


def _balanced(text: str) -> str:
    """`text` up to the parenthesis that closes its first one (strings respected)."""
    depth, quote, i = 0, "", 0
    while (found := _BALANCE_RE.search(text, i)) is not None:  # jumps over the characters that change nothing
        i = found.start()
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return text[: i + 1]
        i += 1
    return text


#: What `_balanced` looks at: brackets, quotes, backslashes.
_BALANCE_RE = re.compile(r"""[()\[\]{}'"\\]""")


def _value(node: ast.AST) -> Any:
    """A printed argument as plain data; graph nodes become `Ref`s."""
    if isinstance(node, ast.Name):
        return Ref(node.id)
    if isinstance(node, (ast.List, ast.Tuple)):
        return tuple(_value(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values) if k is not None}
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError):
        return ast.unparse(node)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def launched_name(code: str) -> str | None:
    """The kernel a launch line names: `add_kernel` in `add_kernel[(n,)](x, ...)` or
    `wrap_triton(add_kernel)[grid](...)`; None when the line is no such launch."""
    for pattern in _LAUNCH_NAME_RES:
        match = pattern.search(code)
        if match:
            return match["name"]
    return None


@functools.lru_cache(maxsize=4096)  # a graph's few types, asked for every kwarg of every kernel node
def tensor_info(printed_type: str) -> tuple[str, int | None] | None:
    """("float32[64]", bytes) from a printed node type "f32[64][1]cpu"; bytes None for a
    symbolic size; None when it is not a tensor type."""
    match = _TYPE_RE.match(printed_type)
    if match is None or match["dtype"] not in _DTYPES:
        return None
    dtype, size = _DTYPES[match["dtype"]]
    dims = [d.strip() for d in match["shape"].split(",") if d.strip()]
    numel: int | None = 1
    for d in dims:
        numel = numel * int(d) if numel is not None and d.isdigit() else None
    return f"{dtype}[{', '.join(dims)}]", None if numel is None else numel * size


def sym_expr(printed_type: str) -> str | None:
    """"s77 + 1" from a SymInt node's printed type "Sym(s77 + 1)"."""
    if printed_type.startswith("Sym(") and printed_type.endswith(")"):
        return printed_type[4:-1]
    return None
