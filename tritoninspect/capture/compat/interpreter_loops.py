"""What compile-only mode gives interpreted kernels in place of what Triton's interpreter sets: loop
variables that are tensors (`loop_range`) and a `tl.tensor.__index__` that works with numpy 2.4+
(`_scalar_index`). Installed by `interpreter.interpreter_changes_undone` while a launch runs."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any


#: The name a kernel's `for ... in range(...)` calls instead, in its interpreted copy.
LOOP_RANGE = "_tritoninspect_loop_range"


class BuiltinRangeLoops(ast.NodeTransformer):
    """`for i in range(...)` -> `for i in _tritoninspect_loop_range(...)` in the interpreted copy of
    a kernel (FunctionRewriter's AST, before it is compiled): only a loop's own `range`, which
    Triton compiles as `tl.range`."""

    def visit_For(self, node: ast.For) -> ast.For:
        self.generic_visit(node)
        call = node.iter
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "range":
            call.func = ast.copy_location(ast.Name(id=LOOP_RANGE, ctx=ast.Load()), call.func)
        return node


def loop_range(arg1: Any, arg2: Any = None, step: Any = None, *_options: Any, **_named: Any) -> Iterator[Any]:
    """`range` / `tl.range` in an interpreted kernel: the loop variable a scalar `tl.tensor`, as a
    compiled kernel's is (an scf.for induction variable of the bounds' promoted integer type:
    int64 when a bound is, else int32; code_generator.py visit_For, triton 3.6-3.8).

    Triton's interpreter loops with a Python `range` (`_new_range` in `_patch_lang_core`, and the
    builtin), so its loop variable is a Python int and `i_t.to(tl.int64)`, as flash-linear-attention's
    chunk kernels write (chunk_fwd_kernel_h), raised AttributeError: the launch was skipped and its
    outputs left unwritten. `tl.static_range` keeps its ints (a constexpr there too). Options such as
    `num_stages` and `loop_unroll_factor` (by keyword or, for `tl.range`, by position) change nothing
    a launch computes.

    A step that is a kernel argument (a tensor here) steps as an scf.for does: upwards while below
    the end, so a negative one runs no iteration (triton 3.6-3.8 reverses only a constexpr negative
    step, code_generator.py visit_For; the H200 gave none for `range(n - 1, -1, step)`, step=-1)."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as ti

    bounds = [b for b in (arg1, arg2, step) if b is not None]
    wide = any(_bits(b) > 32 for b in bounds)
    dtype, np_dtype = (tl.int64, np.int64) if wide else (tl.int32, np.int32)
    start, end = (0, arg1) if arg2 is None else (arg1, arg2)
    first, last, by = _int(start), _int(end), 1 if step is None else _int(step)
    if by <= 0 and hasattr(step, "handle"):
        if by == 0 and first < last:
            raise NotImplementedError("a loop whose step argument is 0 never ends on a GPU")
        return
    for i in range(first, last, by):
        yield tl.tensor(ti.TensorHandle(np.array([i], dtype=np_dtype), dtype), dtype)


def _int(value: Any) -> int:
    return int(value.handle.data.squeeze()) if hasattr(value, "handle") else int(value)


def _bits(bound: Any) -> int:
    dtype = getattr(bound, "dtype", None)
    if dtype is not None and hasattr(dtype, "primitive_bitwidth"):
        return dtype.primitive_bitwidth
    return 32 if -2**31 <= _int(bound) < 2**31 else 64


def _scalar_index(self: Any) -> int:
    """`tl.tensor.__index__` in the interpreter (`range(row_start, row_end)` over scalars, as
    Liger-Kernel's RMSNorm backward loops): triton 3.6's `int(self.handle.data)` of a one-element
    1-D array raises "only 0-dimensional arrays can be converted to Python scalars" with numpy 2.4+
    (https://github.com/triton-lang/triton/issues/9171; triton 3.7 squeezes the array, as here)."""
    return int(self.handle.data.squeeze())


#: What the interpreter's `tl.tensor.__index__` and `tl.range` are replaced with (by name: it sets
#: no other attribute so named, triton 3.6-3.8; `tl.static_range` stays its own).
REPLACED = {"__index__": _scalar_index, "range": loop_range}
