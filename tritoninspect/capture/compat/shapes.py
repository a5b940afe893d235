"""Dynamic shapes: the marks `mark_dynamic` & co. leave on tensors, the ShapeEnv's guards and
symbol sources of a compile, and nested `torch.compile` regions sent to the recorder."""

from __future__ import annotations

import contextlib
import copy
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

# --- marks on example inputs ---------------------------------------------------------------

#: The attributes `torch._dynamo.mark_dynamic`, `maybe_mark_dynamic`, `mark_unbacked` and
#: `mark_static` set on a tensor (torch/_dynamo/decorators.py, read in torch 2.13 and 2.14.1:
#: the same names; Dynamo reads them in variables/builder.py when it wraps an input). A copy of
#: the tensor (`.detach().to(device)`) has none of them, so they are copied by name.
#: `_dynamo_*` also catches a mark a later torch adds under that prefix.
_MARK_NAMES = ("_has_dynamo_dim_marking", "_specialize_on")
#: Which attribute holds which kind of mark, as the report names it.
_MARK_KINDS = (
    ("_dynamo_dynamic_indices", "dynamic"),
    ("_dynamo_weak_dynamic_indices", "maybe dynamic"),
    ("_dynamo_unbacked_indices", "unbacked"),
    ("_dynamo_strict_unbacked_indices", "unbacked"),
    ("_dynamo_static_indices", "static"),
)


def _mark_attrs(tensor: torch.Tensor) -> dict[str, Any]:
    found = getattr(tensor, "__dict__", {})
    return {k: v for k, v in found.items() if k.startswith("_dynamo_") or k in _MARK_NAMES}


def copy_dim_marks(source: torch.Tensor, target: torch.Tensor) -> None:
    """Give `target` (a copy of `source`) the same Dynamo marks; each container copied, so a mark
    added to one later is not added to the other."""
    for name, value in _mark_attrs(source).items():
        setattr(target, name, copy.copy(value))


def dim_marks(tensor: torch.Tensor) -> list[tuple[int, str]]:
    """(dim, "dynamic" / "maybe dynamic" / "unbacked" / "static") for each mark on `tensor`, by dim."""
    marks = []
    for attr, kind in _MARK_KINDS:
        for dim in sorted(getattr(tensor, attr, ()) or ()):
            if isinstance(dim, int):
                marks.append((dim, kind))
    return sorted(set(marks))


# --- nested torch.compile regions ------------------------------------------------------------


@contextlib.contextmanager
def every_compile_to(backend: Callable[..., Any]) -> Iterator[None]:
    """Send every `torch.compile` region entered in the block to `backend`: a `torch.compile`d
    submodule or function the model calls eagerly (after a graph break) otherwise compiles with
    its own backend (Inductor), which the recorder never sees (and which fails in compile-only
    mode). `torch.compiler.set_stance("default", force_backend=...)`: public since torch 2.6
    (torch/_dynamo/eval_frame.py `_callback_from_stance`, 2.13 and 2.14.1 read). Checked on 2.13:
    the outer compile's `dynamic=True` still gives symbolic sizes, and calls do not recompile.

    force_backend alone makes every region a plain one: `_callback_from_stance` gives it a new
    `convert_frame` (2.11-2.15 read), so a `torch.compile(fullgraph=True)` function graph-broke where
    torch.compile raises (a model that fails looked as if it only broke). Such a region keeps its kind
    (`fullgraph_kept`)."""
    set_stance = getattr(torch.compiler, "set_stance", None)
    if set_stance is None:
        yield
        return
    import torch._dynamo.eval_frame as eval_frame

    from_stance = getattr(eval_frame, "_callback_from_stance", None)
    with set_stance("default", force_backend=backend):
        if from_stance is None:
            yield
            return

        def keeping_fullgraph(callback: Any) -> Any:
            return fullgraph_kept(callback, backend) or from_stance(callback)

        eval_frame._callback_from_stance = keeping_fullgraph
        try:
            yield
        finally:
            eval_frame._callback_from_stance = from_stance


def fullgraph_kept(callback: Any, backend: Callable[..., Any]) -> Any:
    """The callback of a `fullgraph=True` region (`CatchErrorsWrapper` around a `ConvertFrameAssert`,
    torch/_dynamo/convert_frame.py, 2.11-2.15) remade around `backend` by its own `_clone_with_backend`
    (what DDPOptimizer uses to swap a backend), so it still raises on a graph break; None for any other
    callback, or when the stance is not the default one (the model set its own)."""
    import torch._dynamo.eval_frame as eval_frame
    from torch._dynamo import convert_frame

    stance = getattr(getattr(eval_frame, "_stance", None), "stance", None)
    wrapper = getattr(convert_frame, "CatchErrorsWrapper", None)
    assert_ = getattr(convert_frame, "ConvertFrameAssert", None)
    if stance != "default" or wrapper is None or assert_ is None or not isinstance(callback, wrapper):
        return None
    inner = getattr(callback, "_torchdynamo_orig_backend", None)
    if not isinstance(inner, assert_) or getattr(inner, "_export", False) or not hasattr(inner, "_clone_with_backend"):
        return None
    return convert_frame.catch_errors_wrapper(inner._clone_with_backend(eval_frame.get_compiler_fn(backend)),
                                              callback.hooks)


# --- ShapeEnv: guards and symbol sources -----------------------------------------------------


@dataclass(frozen=True)
class ShapeGuard:
    """One guard the ShapeEnv added while Dynamo traced, as text."""

    #: The guard with symbols named by their sources: `x.size(1) == 48`.
    expression: str
    #: The same over torch's symbols: `s27 == 48`.
    symbolic: str
    symbols: tuple[str, ...]
    #: Where it was added: torch's `maybe_user_loc`, "<code>  # file:line in function".
    user_loc: str | None

    def place(self) -> tuple[str | None, int | None, str]:
        """(file, line, code) of `user_loc`; torch shortens the file to the path's end."""
        m = _USER_LOC.match(self.user_loc or "")
        if m is None:
            return None, None, ""
        return m["file"].strip(), int(m["line"]), m["code"].strip()


#: `code  # file:line in function`, as `SLoc.maybe_user_loc` formats it (torch/fx/experimental/
#: symbolic_shapes.py `_get_user_frame`/`format_frame`, 2.13 and 2.14.1 read).
_USER_LOC = re.compile(r"^(?P<code>.*?)\s*#\s*(?P<file>[^#]*?):(?P<line>\d+) in \S+\s*$", re.S)


def _shape_env() -> Any:
    """The ShapeEnv of the compile being traced (`TracingContext.fake_mode.shape_env`,
    torch/_guards.py; 2.13 checked, 2.14.1 read), None outside one."""
    from torch._guards import TracingContext

    context = TracingContext.try_get()
    fake_mode = getattr(context, "fake_mode", None)
    return getattr(fake_mode, "shape_env", None)


def symbol_sources() -> dict[str, str]:
    """Symbol -> the first source it stands for, readable (`s77` -> `x.size(0)`), for the compile
    being traced. `ShapeEnv.var_to_sources` (torch/fx/experimental/symbolic_shapes.py, 2.13 and
    2.14.1 read); `Source.name` is a property in 2.13, a method in older releases: both are read."""
    env = _shape_env()
    found: dict[str, str] = {}
    for symbol, sources in dict(getattr(env, "var_to_sources", {}) or {}).items():
        if sources:
            name = sources[0].name
            found[str(symbol)] = readable_source(name() if callable(name) else str(name))
    return found


def shape_guards() -> list[ShapeGuard]:
    """The guards on sizes the compile being traced added (`ShapeEnv.guards`: ShapeGuard(expr,
    sloc, ...) with `sloc.maybe_user_loc`; 2.13 checked, 2.14.1 read; the PR that added SLoc was
    not located), in order. A layout without them gives fewer guards, never an exception."""
    env = _shape_env()
    if env is None:
        return []
    sources = symbol_sources()
    guards = []
    for guard in list(getattr(env, "guards", ()) or ()):
        expr = getattr(guard, "expr", None)
        if expr is None:
            continue
        symbolic = print_expr(expr)
        symbols = tuple(sorted(str(s) for s in getattr(expr, "free_symbols", ())))
        sloc = getattr(guard, "sloc", None)
        loc = getattr(sloc, "maybe_user_loc", None)
        guards.append(ShapeGuard(name_symbols(symbolic, sources), symbolic, symbols, str(loc) if loc else None))
    return guards


def unbacked_sources(gm: torch.fx.GraphModule) -> dict[str, tuple[str, str | None]]:
    """Unbacked symbol (`u0`) -> (the code that made it, "file:line"), from the Dynamo graph's nodes
    whose example value is that symbol (`item = l_count_.item()`; `meta["example_value"]`, torch
    2.11-2.14). The code is the last source line of the node's stack trace (not its `^^^` markers)."""
    from tritoninspect.capture.compat.dynamo import node_user_line

    found: dict[str, tuple[str, str | None]] = {}
    for node in gm.graph.nodes:
        value = node.meta.get("example_value")
        if isinstance(value, torch.SymInt) and re.fullmatch(r"u\d+", str(value)) and str(value) not in found:
            lines = [line.strip() for line in str(node.meta.get("stack_trace") or "").splitlines()
                     if line.strip() and not re.fullmatch(r"[\^~ ]+", line.strip())]  # not the caret lines
            found[str(value)] = (lines[-1] if lines else node.name, node_user_line(node))
    return found


def print_expr(expr: Any) -> str:
    """A sympy expression as Python (`(s77 % 16) == 0`), with torch's printer (torch/utils/_sympy/
    printers.py, PythonPrinter, 2.11-2.14); plain `str` where that fails."""
    try:
        from torch.utils._sympy.printers import PythonPrinter

        return str(PythonPrinter().doprint(expr))
    except Exception:  # noqa: BLE001 - a printer that cannot print it: sympy's own text
        return str(expr)


def name_symbols(text: str, sources: dict[str, str]) -> str:
    """`s27 == 48` -> `x.size(1) == 48`, for the symbols `sources` knows."""
    return re.sub(r"\b[suq]\d+\b", lambda m: sources.get(m[0], m[0]), text)


def readable_source(name: str) -> str:
    """`L['x'].size()[1]` -> `x.size(1)`; `L['self'].w.item()` -> `self.w.item()`."""
    text = re.sub(r"\bL\['(\w+)'\]", r"\1", name)
    text = re.sub(r"\bG\['(\w+)'\]", r"\1", text)
    return re.sub(r"\.(size|stride)\(\)\[(\d+)\]", r".\1(\2)", text)
