"""Which statements of a kernel body one launch runs: its `if`s decided where their tests read only
constexprs whose values are known (the launch's, from its graph nodes, and the module's constexpr
globals the capture recorded, `KernelSource.constants`).

Triton compiles only the taken branch of an `if` on constexprs, so a line in the other branch is not
what the launch ran (Liger's rms_norm casts `eps` in both branches of `if casting_mode ==
_CASTING_MODE_NONE:`; a run in "llama" mode takes the `else`). A test that reads anything else (a
tensor, a global not recorded) leaves both branches possible, and says so.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
}


class _Unknown(Exception):
    """The test reads a value this report does not know."""


@dataclass(frozen=True)
class Reached:
    """A node of the body the launch runs; `decided` is False under an `if` the report cannot decide."""

    node: ast.AST
    decided: bool


def reached(fn: ast.FunctionDef | ast.AsyncFunctionDef, values: Mapping[str, Any]) -> list[Reached]:
    """Every node of `fn`'s body that a launch with these constexpr values runs (or may run)."""
    return [r for stmt in fn.body for r in _walk(stmt, values, decided=True)]


def decide(test: ast.expr, values: Mapping[str, Any]) -> bool | None:
    """The truth of an `if` test for these values; None when it reads anything else."""
    try:
        return bool(_value(test, values))
    except (_Unknown, TypeError, ValueError):
        return None


def _walk(node: ast.AST, values: Mapping[str, Any], *, decided: bool) -> Iterator[Reached]:
    if not isinstance(node, ast.If):
        yield Reached(node, decided)
        for child in ast.iter_child_nodes(node):
            yield from _walk(child, values, decided=decided)
        return
    yield from (Reached(n, decided) for n in ast.walk(node.test))
    taken = decide(node.test, values)
    branches = [node.body] if taken else [node.orelse] if taken is False else [node.body, node.orelse]
    for stmts in branches:
        for stmt in stmts:
            yield from _walk(stmt, values, decided=decided and taken is not None)


def _value(node: ast.AST, values: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in values:
            raise _Unknown(node.id)
        return values[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        inner = _value(node.operand, values)
        return not inner if isinstance(node.op, ast.Not) else -inner
    if isinstance(node, ast.BoolOp):
        found = [_value(v, values) for v in node.values]
        return all(found) if isinstance(node.op, ast.And) else any(found)
    if isinstance(node, ast.Compare):
        left = _value(node.left, values)
        for op, right_node in zip(node.ops, node.comparators):
            if type(op) not in _COMPARE:
                raise _Unknown(type(op).__name__)
            right = _value(right_node, values)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    raise _Unknown(type(node).__name__)


def known_values(fn: ast.FunctionDef | ast.AsyncFunctionDef, launch: Mapping[str, Any],
                 constants: Mapping[str, Any]) -> dict[str, Any]:
    """The names an `if` may read with a known value: the module's constants the body does not
    shadow (a parameter or a local of the same name), then the launch's constexprs."""
    args = fn.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    stored = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return {**{k: v for k, v in constants.items() if k not in params | stored}, **launch}
