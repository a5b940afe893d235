"""What a value read with `.item()` is used for in the user's function (from its source).

Torch-free. Given a file's source and the line of a `.item()` call, the function around it is
parsed and the names the value is bound to are followed (through plain assignments such as
`n = int(count.item())`, `m = n * 2`) to their uses:

- "branch": the test of an `if`, `while`, conditional expression or `assert` (Python control flow);
- "kernel": an argument or the grid of a Triton launch `kernel[grid](...)`;
- "size": a size or index: an argument of a tensor factory or view (`torch.empty(n)`, `x.view(n)`,
  `x.narrow(0, 0, n)`), or a slice bound (`x[:n]`);
- "other": anything else (arithmetic into a tensor, a return, a call the analysis does not know).

`item_uses` answers None when it cannot tell (no source, no `.item()` on that line, a value bound
to something other than plain names and used nowhere the analysis sees).

`probe_uses` does the same for the answer of a device probe (`torch.cuda.is_available()`, a tensor's
`x.is_cuda`, its device compared with "cuda"): whether it decides a path in its function, or leaves it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

#: Calls whose arguments are sizes (by the called name's last part).
SIZE_CALLS = frozenset({
    "empty", "zeros", "ones", "full", "arange", "randn", "rand", "empty_strided", "new_empty", "new_zeros", "new_ones",
    "new_full", "view", "reshape", "expand", "narrow", "repeat", "split", "range",
})
#: Calls that pass a value through unchanged for this purpose (`int(x.item())`).
PASS_THROUGH = frozenset({"int", "float", "bool", "min", "max", "abs", "round", "cdiv", "next_power_of_2"})
#: Calls that only show a value (a probe's answer printed or logged decides nothing).
OUTPUT_CALLS = frozenset({"print", "debug", "info", "warning", "warn", "error", "critical", "exception", "log"})
#: The device probe `probe_uses` reads by default (`DeviceProbeRecord.asked`'s name for it).
IS_AVAILABLE = "torch.cuda.is_available()"


@dataclass(frozen=True)
class ValueUses:
    """The uses found, and the first line of each kind."""

    kinds: tuple[str, ...]
    lines: dict[str, int]


def _function_at(source: str, line: int) -> ast.AST | None:
    """The function of `source` (a whole file) around `line`; None when there is none or it does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    return _enclosing_function(tree, line)


def break_value_uses(reason: str, source: str, line: int | None) -> dict[str, int] | None:
    """A graph break's `value_uses`: for a break at `Tensor.item()` (`reason` says so), the first line of each
    use `item_uses` finds for the value read on `line` of `source` (a whole file); None for other breaks, or
    when it cannot tell. One rule for a live capture and a trace (which reads the source the log names)."""
    if "item()" not in reason or not source or not line:
        return None
    found = item_uses(source, line)
    return dict(found.lines) if found is not None and found.kinds else None


def item_uses(source: str, line: int) -> ValueUses | None:
    """The uses of the value `.item()` reads on `line` of `source` (a whole file)."""
    fn = _function_at(source, line)
    if fn is None:
        return None
    parents = _parents(fn)
    found: dict[str, int] = {}
    for call in (n for n in ast.walk(fn) if _is_item_call(n) and n.lineno == line):
        kind = _use_kind(call, parents)  # used where it is read: `if x.item() > 0:`
        if kind is not None:
            found.setdefault(kind, line)
    names = _bound_names(fn, line, _is_item_call)
    derived = _derived(fn, names, line, _use_kind) if names else set()
    for kind, at in _later_uses(fn, derived, line, parents, _use_kind):
        found[kind] = min(found.get(kind, at), at)
    if not found:
        return None
    order = ("branch", "kernel", "size", "other")
    return ValueUses(tuple(k for k in order if k in found), found)


def probe_uses(source: str, line: int, asked: str = IS_AVAILABLE) -> dict[str, int] | None:
    """What the function around `line` of `source` (a whole file) does with the answer of the
    device probe there (`asked`: one of `PROBES`, `is_available()` by default), kind -> first line:

    - "branch": the answer decides a path in the function: the test of an `if`, `while`, `assert`,
      conditional expression, comprehension or `match`, or an operand `and` / `or` may stop at;
    - "passed": it leaves the function, where this analysis does not follow it: a call's argument
      (not `print`'s or a logger's), a return or yield, an attribute, item or container it is put in.

    Followed through plain names as `item_uses` does (`on_gpu = torch.cuda.is_available()`). Empty
    when neither (the answer unused, printed, or only combined into values nothing tests); None
    when it cannot tell (no source, no function there, no such probe on that line)."""
    is_probe = PROBES.get(asked)
    fn = _function_at(source, line)
    if fn is None or is_probe is None:
        return None
    calls = [n for n in ast.walk(fn) if is_probe(n) and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not calls:
        return None
    parents = _parents(fn)
    found: dict[str, int] = {}
    for call in calls:
        kind = _probe_kind(call, parents)
        if kind in ("branch", "passed"):
            found.setdefault(kind, line)
    derived = _derived(fn, _bound_names(fn, line, is_probe), line, _probe_kind)
    for kind, at in _later_uses(fn, derived, line, parents, _probe_kind):
        if kind in ("branch", "passed"):
            found[kind] = min(found.get(kind, at), at)
    return found


def _is_probe_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and _called_name(node) == "is_available"


def _is_cuda_read(node: ast.AST) -> bool:
    """`x.is_cuda`: its answer is the attribute read itself."""
    return isinstance(node, ast.Attribute) and node.attr == "is_cuda" and isinstance(node.ctx, ast.Load)


def _is_device_compare(node: ast.AST) -> bool:
    """`x.device.type == "cuda"`, `x.device != torch.device("cuda")`, `x.device.type in ("cuda", "xpu")`: a
    comparison of a device with "cuda", whose answer is the comparison (as `textformats.device_checks` reads
    the line)."""
    if not isinstance(node, ast.Compare):
        return False
    parts = [n for part in (node.left, *node.comparators) for n in ast.walk(part)]
    device = any(isinstance(n, ast.Attribute) and n.attr == "device" for n in parts)
    cuda = any(isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("cuda") for n in parts)
    return device and cuda


#: What each device probe asks (as `DeviceProbeRecord.asked` names it) -> the expression that asks it.
PROBES: dict[str, Callable[[ast.AST], bool]] = {
    IS_AVAILABLE: _is_probe_call, "x.is_cuda": _is_cuda_read, "x.device.type": _is_device_compare,
}


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _probe_kind(expr: ast.expr, parents: dict[ast.AST, ast.AST]) -> str | None:
    """The kind of one use of a probe's answer (see `probe_uses`), "other" for one that decides and
    passes on nothing; None for an assignment to plain names (followed through `_derived`)."""
    child: ast.AST = expr
    node = parents.get(expr)
    while node is not None:
        if isinstance(node, ast.BoolOp) and child is not node.values[-1]:
            return "branch"  # `available and f()`: whether f runs
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)) and child is node.test:
            return "branch"
        if (isinstance(node, ast.comprehension) and child in node.ifs) or (isinstance(node, ast.Match) and child is node.subject):
            return "branch"
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and child is node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            plain = all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Starred, ast.expr_context))
                        for t in targets for n in ast.walk(t))
            return None if plain else "passed"  # `self.on_gpu = ...`: read by other methods
        if isinstance(node, ast.Call) and child is not node.func and _called_name(node) not in PASS_THROUGH:
            return "other" if _called_name(node) in OUTPUT_CALLS else "passed"
        if isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom, ast.Lambda, ast.Dict, ast.Set)):
            return "passed"
        if isinstance(node, ast.stmt):
            return "other"
        child, node = node, parents.get(node)
    return "other"


def _enclosing_function(tree: ast.Module, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


def _is_item_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("item", "tolist")


def _bound_names(fn: ast.AST, line: int, is_value: Callable[[ast.AST], bool]) -> set[str]:
    """Names an assignment on `line` binds to a value containing the call `is_value` picks (`.item()`)."""
    names: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.lineno <= line <= (node.end_lineno or node.lineno):
            value = node.value
            if value is not None and any(is_value(n) for n in ast.walk(value)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _derived(fn: ast.AST, names: set[str], line: int, kind_of: Callable[[ast.expr, dict[ast.AST, ast.AST]], str | None]) -> set[str]:
    """`names` and every name later assigned from an expression that carries one of them (`kind_of`
    a use None: an assignment)."""
    derived = set(names)
    parents = _parents(fn)
    assignments = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.lineno > line]
    changed = True
    while changed:
        changed = False
        for node in assignments:
            # Through arithmetic and int()/float(), not through a tensor made from it (torch.empty(n)).
            carried = [n for n in ast.walk(node.value) if isinstance(n, ast.Name) and n.id in derived] if node.value else []
            if not any(kind_of(n, parents) is None for n in carried):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for name in (n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)):
                if name not in derived:
                    derived.add(name)
                    changed = True
    return derived


def _later_uses(fn: ast.AST, names: set[str], line: int, parents: dict[ast.AST, ast.AST],
                kind_of: Callable[[ast.expr, dict[ast.AST, ast.AST]], str | None]) -> Iterator[tuple[str, int]]:
    """(kind, line) of each read of `names` after `line` that `kind_of` gives a kind."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load) and node.lineno > line:
            kind = kind_of(node, parents)
            if kind is not None:
                yield kind, node.lineno


def _parents(fn: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(fn) for child in ast.iter_child_nodes(parent)}


def _use_kind(expr: ast.expr, parents: dict[ast.AST, ast.AST]) -> str | None:
    """The kind of one use of `expr`, from the nearest enclosing construct that decides it; None for
    an assignment (followed through `_derived` instead)."""
    child: ast.AST = expr
    node = parents.get(expr)
    while node is not None:
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)) and child is node.test:
            return "branch"
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and child is node.value:
            return None
        if isinstance(node, ast.Call):
            kind = _call_kind(node)
            if kind is not None:
                return kind
        if isinstance(node, ast.Slice):
            return "size"
        if isinstance(node, ast.Subscript) and child is node.slice and _is_launch_subscript(node, parents):
            return "kernel"
        if isinstance(node, (ast.stmt, ast.Lambda)):
            return "other"
        child, node = node, parents.get(node)
    return "other"


def _call_kind(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Subscript):  # kernel[grid](...)
        return "kernel"
    name = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id if isinstance(call.func, ast.Name) else ""
    if name in SIZE_CALLS:
        return "size"
    if name in PASS_THROUGH:
        return None
    return "other"


def _is_launch_subscript(node: ast.Subscript, parents: dict[ast.AST, ast.AST]) -> bool:
    parent = parents.get(node)
    return isinstance(parent, ast.Call) and parent.func is node
