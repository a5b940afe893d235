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
        "abs": np.abs, "fast_expf": np.exp, "fast_exp10f": lambda x: np.power(10, x),
        "fast_logf": np.log, "fast_log2f": np.log2, "fast_log10f": np.log10, "fast_sinf": np.sin,
        "fast_cosf": np.cos, "fast_tanf": np.tan, "fast_tanhf": np.tanh,
    }
    binary = {
        "pow": np.power, "fast_powf": np.power, "atan2": np.arctan2, "fmod": np.fmod, "hypot": np.hypot, "copysign": np.copysign, "div_rn": np.divide,
        "fast_dividef": np.divide, "add_rn": np.add, "sub_rn": np.subtract, "mul_rn": np.multiply,
    }
    ternary = {"fma": lambda a, b, c: a * b + c, "fma_rn": lambda a, b, c: a * b + c}
    return {name: _in_numpy(name, compute) for name, compute in {**unary, **binary, **ternary}.items()}


#: The functions of the table libdevice also has for integers (`__nv_abs`, `__nv_llabs`; the others
#: take fp32 / fp64 only: triton/language/extra/cuda/libdevice.py, triton 3.6-3.8).
_INTEGER_FUNCTIONS = frozenset({"abs"})


def _in_numpy(name: str, compute: Callable[..., Any]) -> Callable[..., Any]:
    """A libdevice function as the interpreter runs `tl.math`: on the numpy arrays behind the
    interpreter's `tl.tensor`s (`handle.data`, a `TensorHandle`), broadcast together, in the widest
    float type of its float tensor arguments. Integer tensors and Python numbers do not widen it, as
    on a GPU: `pow(x_fp32, n_int32)` is libdevice's `powi`, an fp32 result (numpy would say fp64).
    Without a float tensor, the type is what Triton makes of the arguments (`_call_type`)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        import numpy as np
        import triton.language as tl
        from triton.runtime.interpreter import TensorHandle

        args = _positional(args, kwargs)
        tensors = [a for a in args if isinstance(a, tl.tensor)]
        dtype = _call_type(name, args, tensors)
        scalar = {np.float16: tl.float16, np.float32: tl.float32, np.float64: tl.float64,
                  np.int32: tl.int32, np.int64: tl.int64}.get(dtype.type)
        if scalar is None:
            raise NotImplementedError(f"libdevice.{name} of {dtype} arguments is not computed in compile-only mode")
        data = [np.asarray(a.handle.data if isinstance(a, tl.tensor) else getattr(a, "value", a), dtype=dtype)
                for a in args]
        with np.errstate(all="ignore"):  # inf and nan are values here, as on a GPU
            out = np.asarray(compute(*data)).astype(dtype)
        block = any(t.type.is_block() for t in tensors)
        kind = tl.block_type(scalar, list(out.shape)) if block else scalar
        return tl.tensor(TensorHandle(out, scalar), kind)

    return call


def _call_type(name: str, args: tuple[Any, ...], tensors: list[Any]) -> Any:
    """The numpy type a call computes in: the widest of its float tensors; without one, its integer
    tensors' for a function libdevice has for integers (`abs(offsets)`), and for numbers alone
    (`sqrt(2.0)`) what Triton makes of a Python number, fp32 for a float, int32 for an int."""
    import numpy as np

    kinds = [t.handle.data.dtype for t in tensors]
    floats = [k for k in kinds if k.kind == "f"]
    if floats:
        return np.result_type(*floats)
    if tensors:
        if name in _INTEGER_FUNCTIONS:
            return np.result_type(*kinds)
        raise NotImplementedError(f"libdevice.{name} of {kinds[0]} arguments is not computed in compile-only mode")
    values = [getattr(a, "value", a) for a in args]
    return np.dtype(np.int32 if all(isinstance(v, int) for v in values) else np.float32)


def _positional(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The call's arguments in order: libdevice's functions name theirs `arg0`, `arg1`, ...
    (`libdevice.pow(x, arg1=2.0)`); `_semantic=` / `_builder=`, passed when the interpreter calls
    them as builtins, are not arguments."""
    named = {k: v for k, v in kwargs.items() if k not in ("_semantic", "_builder", "_generator")}
    out = list(args)
    while f"arg{len(out)}" in named:
        out.append(named.pop(f"arg{len(out)}"))
    if named:
        raise TypeError(f"libdevice function got unexpected argument(s): {', '.join(sorted(named))}")
    return tuple(out)


@contextlib.contextmanager
def libdevice_in_numpy(names: dict[str, Any]) -> Iterator[None]:
    """Within the block, libdevice functions computed in numpy: in the libdevice modules (a kernel
    writing `libdevice.rsqrt(x)`) and in `names`, the interpreted function's globals (a kernel that
    imported `rsqrt` from one of them). Everything is put back when the block ends."""
    import sys

    table, patches = _table(), Patcher()
    try:
        for module in filter(None, map(sys.modules.get, _MODULES)):
            for name in _functions(module):
                patches.set(module, name, table.get(name) or _not_computed(name))
        for key, value in list(names.items()):
            name = getattr(value, "__name__", None)
            if getattr(value, "__module__", None) in _MODULES and callable(value):
                patches.set_item(names, key, table.get(name) or _not_computed(name))
        yield
    finally:
        patches.restore()


def _functions(module: Any) -> list[str]:
    """The libdevice functions `module` defines (its own functions: what it imports is not one)."""
    return [name for name, value in vars(module).items()
            if not name.startswith("_") and callable(value) and getattr(value, "__module__", None) == module.__name__]


@functools.cache
def _not_computed(name: str) -> Callable[..., Any]:
    """A libdevice function this module has no numpy for: the launch is skipped with its name said
    (the interpreter's own error named nothing: None back, or NotImplementedError from
    `create_extern_elementwise`)."""

    def call(*_: Any, **__: Any) -> Any:
        raise NotImplementedError(f"libdevice.{name} is not computed in compile-only mode")

    return call

