"""Names a user kernel's copy in Inductor's output code lacks: on a GPU, Triton's compile of that copy
fails with NameError; compile-only mode fails the run the same way (`KernelCopyNameError`)."""

from __future__ import annotations

import inspect
from typing import Any

from triton.runtime.jit import JITFunction


class KernelCopyNameError(Exception):
    """Inductor's copy of a user kernel uses a name its module does not define: on a GPU, Triton's
    compile of that copy fails the same way, so this is a failure of torch.compile, not a limit of
    compile-only mode."""

    #: Where a GPU run fails, for the failure record's "raised in".
    where = "torch/_inductor/codegen/wrapper.py (its copy of the kernel, compiled by Triton)"

    def __init__(self, message: str, kernel: str) -> None:
        super().__init__(message)
        self.kernel = kernel


def copy_lacks_a_name(copy: Any, original: Any, exc: BaseException) -> KernelCopyNameError | None:
    """A KernelCopyNameError when the interpreter could not run Inductor's copy of a user kernel
    (`exc`) and the copy lacks a global name the user's kernel or its @jit helpers use, else None.

    Inductor copies a user kernel's source into its output code with what it can re-create of the
    kernel's globals: @jit helpers, int / str / bool / constexpr values, and objects that Triton's
    modules define, imported by name; module objects other than `tl` have no `__module__` and are left
    out (codegen/wrapper.py `user_defined_triton_kernel_transitive_closure_source_code`, `traverse`,
    torch 2.11-2.14). A kernel using `ldv.tanh(x)` after `from triton.language.extra.cuda import
    libdevice as ldv`, or `T.arange` after `import triton.language as T`, then fails on a GPU when
    Triton compiles the copy (NameError). Found as a NameError on the path the interpreter ran (in
    the kernel or a helper: the GPU's compile reads every path), for a name the user's code has; the
    interpreter's own globals do not stand in for it (`missing_globals`).
    """
    if original is None:
        return None
    user = _user_globals(original)
    name = _name_error(exc)
    if name is None or name in copy.__globals__ or name not in user:
        return None
    kernel = getattr(original, "__name__", str(original))
    value = user[name]
    module = getattr(value, "__name__", "...") if inspect.ismodule(value) else None
    if module == "triton.language":
        fix = "import triton.language as tl (the one name Inductor's copy imports it as) and use tl"
    elif module and module.startswith("triton."):
        fix = f"import what {kernel} calls from it by name (from {module} import ...), as Inductor's copy can"
    elif module:  # a float from `math` would not be copied either: only int/str/bool/constexpr values are
        fix = (f"give {kernel} what it reads from {name} as tl.constexpr globals (PI = tl.constexpr({name}.pi)) "
               "or as arguments")
    elif isinstance(value, JITFunction):
        own = value.fn.__name__
        fix = (f"import the @jit function under its own name (from {value.fn.__module__} import {own}): Inductor's "
               f"copy defines it as {own}")
    else:
        fix = f"make {name} a tl.constexpr global or pass it as an argument"
    what = f"module {module} imported as {name}" if module else f"{name} ({type(value).__name__})"
    return KernelCopyNameError(
        f"torch.compile's copy of kernel {kernel} lacks {what}: Inductor copies a kernel's @jit "
        f"helpers, int/str/bool/constexpr globals and the Triton functions it imports by name, nothing "
        f"else, so on a GPU Triton's compile of the copy fails with NameError: {fix}", kernel,
    )


def _name_error(exc: BaseException) -> str | None:
    """The name of a NameError in `exc`'s causes (a helper's is wrapped twice in InterpreterError)."""
    seen = exc
    while seen is not None:
        if isinstance(seen, NameError):
            return seen.name
        seen = seen.__cause__
    return None


def _user_globals(original: Any) -> dict[str, Any]:
    """The globals of the user's kernel and of the @jit helpers it reaches, the kernel's first."""
    found: dict[str, Any] = {}
    todo, seen = [original], set()
    while todo:
        fn = todo.pop()
        if id(fn) in seen or not hasattr(fn, "__globals__"):
            continue
        seen.add(id(fn))
        names = fn.__globals__
        for key in _global_loads(fn):
            if key in names:
                found.setdefault(key, names[key])
                inner = getattr(names[key], "fn", None)
                if isinstance(names[key], JITFunction) and inner is not None:
                    todo.append(inner)
    return found


def missing_globals(fn: Any) -> list[str]:
    """The global names `fn`'s code loads that its module does not define and that are not builtins."""
    import builtins

    names = fn.__globals__
    return [key for key in _global_loads(fn) if key not in names and not hasattr(builtins, key)]


def _global_loads(fn: Any) -> list[str]:
    """The global names `fn`'s code loads (LOAD_GLOBAL), as Inductor's `traverse` reads them."""
    import dis

    try:
        return list(dict.fromkeys(i.argval for i in dis.get_instructions(fn) if i.opname == "LOAD_GLOBAL"))
    except TypeError:
        return []
