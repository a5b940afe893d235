"""libdevice math in Triton's interpreter (compile-only mode): numpy in place of the functions a kernel
takes from `triton.language.extra.libdevice` (or its `cuda` / `hip` modules) while it runs interpreted.

Triton's interpreter runs `tl.math` in numpy but not libdevice: the generic module's functions are
stubs whose body is `...` (the compiler dispatches them to the backend's), so a kernel calling
`rsqrt(x)` from there got None back ("cannot convert None of type <class 'NoneType'> to tensor"), and
the backend modules' functions reach `create_extern_elementwise`, which raises NotImplementedError
(triton/runtime/interpreter.py and language/extra/, triton 3.6-3.8; the same report upstream:
https://github.com/triton-lang/triton/issues/8825). Liger-Kernel's RMSNorm and GEGLU call `rsqrt` and
`tanh` from there, so their launches were skipped in compile-only mode.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

from tritoninspect.capture.patching import Patcher

#: Where a kernel finds libdevice (triton 3.6-3.8).
_MODULES = ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice",
            "triton.language.extra.hip.libdevice")


@functools.cache
def _table() -> dict[str, Callable[..., Any]]:
    """libdevice name -> what the interpreter runs for it (`_in_numpy` of the numpy function; rounding
    modes and fast approximations computed exactly: the interpreter's values are not a GPU's to the
    last bit anyway)."""
    import numpy as np

    def round_half_away(x: Any) -> Any:  # libdevice round(); numpy rounds half to even
        return np.copysign(np.floor(np.abs(x) + 0.5), x)

    unary = {
        "rsqrt": lambda x: 1 / np.sqrt(x), "sqrt": np.sqrt, "sqrt_rn": np.sqrt, "cbrt": np.cbrt,
        "rcp_rn": lambda x: 1 / x, "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10, x),
        "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
        "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
        "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
        "acosh": np.arccosh, "atanh": np.arctanh, "erf": np.vectorize(math.erf, otypes=[float]),
        "erfc": np.vectorize(math.erfc, otypes=[float]), "floor": np.floor, "ceil": np.ceil,
        "trunc": np.trunc, "round": round_half_away, "rint": np.rint, "nearbyint": np.rint,
        "abs": np.abs, "fabs": np.abs, "fast_expf": np.exp, "fast_exp10f": lambda x: np.power(10, x),
        "fast_logf": np.log, "fast_log2f": np.log2, "fast_log10f": np.log10, "fast_sinf": np.sin,
        "fast_cosf": np.cos, "fast_tanf": np.tan,
    }
    binary = {
        "pow": np.power, "fast_powf": np.power, "atan2": np.arctan2, "fmod": np.fmod, "fmin": np.fmin,
        "fmax": np.fmax, "hypot": np.hypot, "copysign": np.copysign, "div_rn": np.divide,
        "fast_dividef": np.divide, "add_rn": np.add, "sub_rn": np.subtract, "mul_rn": np.multiply,
    }
    ternary = {"fma": lambda a, b, c: a * b + c, "fma_rn": lambda a, b, c: a * b + c}
    return {name: _in_numpy(compute) for name, compute in {**unary, **binary, **ternary}.items()}


def _in_numpy(compute: Callable[..., Any]) -> Callable[..., Any]:
    """A libdevice function as the interpreter runs `tl.math`: on the numpy arrays behind the
    interpreter's `tl.tensor`s (`handle.data`, a `TensorHandle`), in their common float type."""

    def call(*args: Any, **_: Any) -> Any:  # `_semantic=` when called as a builtin: not needed
        import numpy as np
        import triton.language as tl
        from triton.runtime.interpreter import TensorHandle

        tensors = [a for a in args if isinstance(a, tl.tensor)]
        if not tensors:
            raise NotImplementedError("libdevice in the interpreter: no tensor argument")
        dtype = np.result_type(*(t.handle.data.dtype for t in tensors))
        scalar = {np.float16: tl.float16, np.float32: tl.float32, np.float64: tl.float64}.get(dtype.type)
        if scalar is None:
            raise NotImplementedError(f"libdevice in the interpreter: {dtype} arguments")
        data = [np.asarray(a.handle.data if isinstance(a, tl.tensor) else getattr(a, "value", a), dtype=dtype)
                for a in args]
        out = np.asarray(compute(*data)).astype(dtype)
        widest = max(tensors, key=lambda t: t.handle.data.size)
        kind = tl.block_type(scalar, widest.type.shape) if widest.type.is_block() else scalar
        return tl.tensor(TensorHandle(out, scalar), kind)

    return call


@contextlib.contextmanager
def libdevice_in_numpy(names: dict[str, Any]) -> Iterator[None]:
    """Within the block, libdevice functions computed in numpy: in the libdevice modules (a kernel
    writing `libdevice.rsqrt(x)`) and in `names`, the interpreted function's globals (a kernel that
    imported `rsqrt` from one of them). Everything is put back when the block ends."""
    import sys

    table, patches = _table(), Patcher()
    try:
        for module in filter(None, map(sys.modules.get, _MODULES)):
            for name, compute in table.items():
                if hasattr(module, name):
                    patches.set(module, name, compute)
        for key, value in list(names.items()):
            name = getattr(value, "__name__", None)
            if name in table and getattr(value, "__module__", None) in _MODULES:
                patches.set_item(names, key, table[name])
        yield
    finally:
        patches.restore()
