"""Whether a launch computed on bfloat16 values in Triton's interpreter, which it cannot do right.

Triton's interpreter holds a bfloat16 value as its uint16 bits (`_get_np_dtype`: `tl.bfloat16:
np.dtype(np.uint16)`) and converts them only in a cast to or from float32 (`cast_impl`,
`create_fp_to_fp`); its arithmetic (`binary_op`, `unary_op`, `create_fma`, `create_clampf`), comparisons,
`create_dot` and reductions run numpy on the bits (triton/runtime/interpreter.py, triton 3.6-3.8;
Triton's own interpreter even fails `x * 2` on one, "'InterpreterBuilder' object has no attribute
'get_bf16'", which compile-only mode's typed scalars get past). A launch that did so wrote values that
mean nothing (cut-cross-entropy's `tl.dot` on bf16 tiles: an lse of 5e10, NaN losses); a kernel that
casts what it loads to float32 first (Liger-Kernel's) computes right and is not flagged.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from tritoninspect.capture.patching import Patcher

#: InterpreterBuilder methods that compute on their TensorHandle operands (triton 3.6-3.8; PR not found).
#: Not `ternary_op`: `tl.where` (`create_select`) picks bits and is right; `tl.clamp` is watched itself.
_BUILDER_OPS = ("binary_op", "unary_op", "create_fma", "create_dot", "create_clampf")


def _bf16(value: Any) -> bool:
    dtype = getattr(value, "dtype", None)
    scalar = getattr(dtype, "scalar", dtype)
    return getattr(scalar, "name", None) == "bf16"


@contextlib.contextmanager
def bf16_arithmetic() -> Iterator[list[str]]:
    """While the block runs, the interpreter's operations that met a bfloat16 operand, by name
    (empty: none did)."""
    from triton.runtime import interpreter as ti

    seen: list[str] = []
    patcher = Patcher()

    def watched(name: str, original: Any) -> Any:
        def op(*args: Any, **kwargs: Any) -> Any:
            if name not in seen and any(_bf16(a) for a in (*args[1:], *kwargs.values())):
                seen.append(name)
            return original(*args, **kwargs)

        return op

    try:
        for name in _BUILDER_OPS:
            original = getattr(ti.InterpreterBuilder, name, None)
            if original is not None:
                patcher.set(ti.InterpreterBuilder, name, watched(name, original))
        reduce_scan = getattr(ti, "ReduceScanOpInterface", None)
        if reduce_scan is not None and hasattr(reduce_scan, "apply"):
            apply = reduce_scan.apply

            def reduction(self: Any, input: Any) -> Any:
                inputs = input if isinstance(input, tuple) else (input,)
                if "reduce" not in seen and any(_bf16(i) for i in inputs):
                    seen.append("reduce")
                return apply(self, input)

            patcher.set(reduce_scan, "apply", reduction)
        yield seen
    finally:
        patcher.restore()
