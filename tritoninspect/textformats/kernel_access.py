"""How a Triton kernel's body uses its parameters as memory: loads, stores, atomics (from its AST).

Torch-free: the kernel's source text goes in, `{param: ("load", "store", "atomic")}` comes out.
A parameter counts when it reaches the pointer of a memory operation through the kernel's
assignments (`p = X + offs; tl.atomic_add(p, v)` uses X atomically); a value a load or an
atomic returns is data, never a pointer into the parameter it came from. A call to another
`@triton.jit` function is followed when `resolve` gives its source (as Triton inlines it),
up to `MAX_DEPTH` calls deep; an unresolved call uses nothing.

What it cannot see (then the parameter reads as unused, never as the wrong kind): pointers
computed through containers or attributes, and memory accessed inside `tl.inline_asm_elementwise`.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable

#: Memory operations by kind, as `tl.<name>(pointer, ...)` or `<block pointer / descriptor>.<name>(...)`.
LOADS = frozenset({"load", "load_tensor_descriptor"})
STORES = frozenset({"store", "store_tensor_descriptor"})
ATOMICS = frozenset({
    "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor",
})
#: Kinds in the order they are listed.
KINDS = ("load", "store", "atomic")
#: Nested `@triton.jit` calls followed.
MAX_DEPTH = 3

Uses = dict[str, tuple[str, ...]]
Resolver = Callable[[str], "str | None"]


def pointer_uses(source: str, resolve: Resolver | None = None) -> Uses:
    """Each parameter of the kernel in `source` that a load, store or atomic reaches, with the kinds
    (in `KINDS` order). `resolve(name)`: the source of another jit function the kernel calls."""
    fn = _function(source)
    if fn is None:
        return {}
    found = _uses(fn, resolve, MAX_DEPTH)
    return {p: tuple(k for k in KINDS if k in found[p]) for p in _params(fn) if found.get(p)}


def _function(source: str) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)


def _params(fn: ast.FunctionDef) -> list[str]:
    args = fn.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]


def _uses(fn: ast.FunctionDef, resolve: Resolver | None, depth: int) -> dict[str, set[str]]:
    params = _params(fn)
    deps = _dependencies(fn, set(params))
    found: dict[str, set[str]] = {p: set() for p in params}
    for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
        kind, pointer = _memory_op(call)
        if kind is not None and pointer is not None:
            for p in _reaches(pointer, deps):
                found[p].add(kind)
        elif depth > 0 and resolve is not None and isinstance(call.func, ast.Name):
            _follow(call, resolve, depth, deps, found)
    return found


def _follow(call: ast.Call, resolve: Resolver, depth: int, deps: dict[str, set[str]], found: dict[str, set[str]]) -> None:
    """A call of another jit function: its parameters' uses, mapped onto the arguments given."""
    source = resolve(call.func.id)  # type: ignore[attr-defined]
    callee = _function(source) if source else None
    if callee is None:
        return
    inner = _uses(callee, resolve, depth - 1)
    names = _params(callee)
    given = {names[i]: arg for i, arg in enumerate(call.args) if i < len(names)}
    given.update({kw.arg: kw.value for kw in call.keywords if kw.arg})
    for name, kinds in inner.items():
        if kinds and name in given:
            for p in _reaches(given[name], deps):
                found[p].update(kinds)


def _memory_op(call: ast.Call) -> tuple[str | None, ast.expr | None]:
    """(kind, pointer expression) of `tl.load(p, ...)`, `tl.store(p, ...)`, `tl.atomic_add(p, ...)`,
    or of a method form on a block pointer or descriptor (`desc.store(...)`: the pointer is `desc`)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None, None
    kind = "load" if func.attr in LOADS else "store" if func.attr in STORES else "atomic" if func.attr in ATOMICS else None
    if kind is None:
        return None, None
    if isinstance(func.value, ast.Name) and func.value.id in ("tl", "triton_language", "language"):
        pointer = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in ("pointer", "ptr", "desc")), None)
        return kind, pointer
    return kind, func.value


def _dependencies(fn: ast.FunctionDef, params: set[str]) -> dict[str, set[str]]:
    """Name -> the parameters its value may be computed from, over every assignment (to a fixed
    point, so loops that advance a pointer count)."""
    deps: dict[str, set[str]] = {p: {p} for p in params}
    assignments = [n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For))]
    changed = True
    while changed:
        changed = False
        for node in assignments:
            value = node.iter if isinstance(node, ast.For) else node.value
            if value is None:
                continue
            sources = _reaches(value, deps)
            if isinstance(node, ast.AugAssign):
                sources |= _reaches(node.target, deps)
            targets = [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For)) else node.targets
            for name in (n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)):
                if not sources <= deps.setdefault(name, set()):
                    deps[name] |= sources
                    changed = True
    return deps


def _reaches(expr: ast.expr, deps: dict[str, set[str]]) -> set[str]:
    """The parameters `expr` may carry as a pointer: through names, not through what a load or an
    atomic returns (data), nor through a memory operation's own pointer."""
    found: set[str] = set()
    stack: list[ast.AST] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call) and _memory_op(node)[0] is not None:
            continue
        if isinstance(node, ast.Name):
            found |= deps.get(node.id, set())
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found
