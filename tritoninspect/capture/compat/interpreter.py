"""Compile-only mode's launches: user kernels run in Triton's interpreter, from eager code and Inductor's."""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
from collections.abc import Iterator
from typing import Any

from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

from tritoninspect.capture.compat import inductor
from tritoninspect.capture.compat.interpreter_bf16 import bf16_arithmetic
from tritoninspect.capture.compat.interpreter_loops import LOOP_RANGE, REPLACED, BuiltinRangeLoops, loop_range
from tritoninspect.capture.compat.kernel_copies import copy_lacks_a_name, missing_globals
from tritoninspect.capture.compat.libdevice import libdevice_in_numpy
from tritoninspect.capture.compat.triton_compile import inductor_scalar_types
from tritoninspect.capture.patching import Patcher


def interpreted(fn: Any) -> Any:
    # triton.runtime.interpreter.InterpretedFunction(fn)[grid](...), triton 3.6-3.8
    # (works without TRITON_INTERPRET set); PR not found.
    from triton.runtime.interpreter import InterpretedFunction

    return InterpretedFunction(fn)


def interpreter_limits() -> tuple[type[BaseException], ...]:
    """Errors that mean "the interpreter cannot run this", not "the kernel is wrong"
    (e.g. tl.inline_asm_elementwise: NotImplementedError inside InterpreterError;
    triton.runtime.errors.InterpreterError, triton 3.6-3.8; PR not found)."""
    from triton.runtime.errors import InterpreterError

    return (InterpreterError, NotImplementedError)


def _interpret(fn: Any, grid: Any, args: tuple[Any, ...], kwargs: dict[str, Any], on_skip: Any,
               on_note: Any = None, signature: dict[str, str] | None = None, original: Any = None,
               on_bf16: Any = None) -> Any:
    """Launch `fn` in the interpreter; on an interpreter limitation, skip the
    launch (its outputs stay unwritten) and tell `on_skip` instead of failing
    the whole capture: the graphs and output code are what compile-only mode is for.
    What was adapted for the interpreter (bool arguments) is told to `on_note(kernel, what)`.
    `signature`: the types the launch was compiled with (Inductor's `triton_meta`), for its floats.
    `original`: the user's function when `fn` is Inductor's copy of it (see `_check_copy_names`).
    `on_bf16(kernel, ops)`: the launch computed on bfloat16 values, which the interpreter cannot do right
    (interpreter_bf16.py); `ops` the interpreter's operations that did."""
    try:
        args, kwargs = floats_as_tensors(fn, args, kwargs, signature)
        args, kwargs, bools = bools_as_int1(fn, args, kwargs)
        if bools and on_note is not None:
            on_note(getattr(fn, "__name__", str(fn)), bools)
        with interpreter_changes_undone(), libdevice_in_numpy(fn.__globals__), bf16_arithmetic() as bits:
            result = interpreted(fn)[grid](*args, **kwargs)
        if bits and on_bf16 is not None:
            on_bf16(getattr(fn, "__name__", str(fn)), bits)
        return result
    except interpreter_limits() as exc:
        lacking = copy_lacks_a_name(fn, original, exc)
        if lacking is None:
            on_skip(getattr(fn, "__name__", str(fn)), exc)
            return None
    except (ValueError, TypeError, AttributeError) as exc:
        if not raised_by_the_interpreter(exc):
            raise
        on_skip(getattr(fn, "__name__", str(fn)), exc)
        return None
    raise lacking  # outside the except: the failure is this, not the interpreter's error


def raised_by_the_interpreter(exc: BaseException) -> bool:
    """The exception came from the interpreter's own code while it set up a launch (it converts
    each argument to a numpy-backed value before running the kernel: GridExecutor.__call__ ->
    `_implicit_cvt` -> TensorHandle, outside the try that wraps a kernel's own errors in an
    InterpreterError; triton/runtime/interpreter.py, triton 3.6-3.8), not from the kernel's
    arguments as Triton itself would bind them (a missing argument raises in `inspect`, as
    Triton's binder raises on a GPU)."""
    import traceback

    from triton.runtime import interpreter as ti

    # Generated code (a dataclass's __init__) reads as "<string>": the frame that called it counts.
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
    return bool(frames) and os.path.abspath(frames[-1].filename) == os.path.abspath(ti.__file__)


def bools_as_int1(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any], list[str]]:
    """The launch's arguments with each Python bool of a non-constexpr parameter made a
    `tl.int1` value backed by a numpy bool, and the names of those parameters; unchanged
    when this Triton's interpreter converts bools itself.

    Triton 3.6 and 3.7 send a bool (an int) down the int path of the interpreter's argument
    converter (`_implicit_cvt`): an int32 array typed int1, which TensorHandle rejects ("numpy
    data itemsize (32 bits) exceeds dtype primitive_bitwidth (1 bits) for triton type int1"),
    so a kernel taking `causal=False` (triformer 3.0.7's softmax) cannot run there.
    https://github.com/triton-lang/triton/pull/9565 (triton 3.8) converts a bool first, to
    exactly this value; a value that is already a `tl.tensor` passes the converter unchanged
    (triton/runtime/interpreter.py, 3.6-3.8). Detected by trying the converter, not by version.
    """
    if _interpreter_takes_bools():
        return args, kwargs, []
    import inspect

    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs)
    except TypeError:
        return args, kwargs, []  # the launch itself fails as it would on a GPU
    constexprs = _declared_constexprs(fn)
    names = [n for n, v in bound.arguments.items() if isinstance(v, bool) and n not in constexprs]
    for name in names:
        bound.arguments[name] = _int1(bound.arguments[name])
    return (tuple(bound.args), dict(bound.kwargs), names) if names else (args, kwargs, [])


#: Float types a compiled launch gives a Python float, and the numpy type the interpreter computes in.
_FLOAT_TYPES = {"fp16": "float16", "fp32": "float32", "fp64": "float64"}


def floats_as_tensors(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                      signature: dict[str, str] | None = None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The launch's arguments with each Python float of a non-constexpr parameter made a scalar
    `tl.tensor` of the type a compiled launch gives it: fp32 for Triton's own launch (`mangle_type`
    of a float, triton 3.6-3.8), the launch signature's type for Inductor's (fp64 for a Python
    float since pytorch/pytorch#170289: the fp64_scalar_math hazard, which the interpreter then
    computes as the GPU does).

    Triton's interpreter passes a float argument to the kernel as a Python float (`_implicit_cvt`
    converts ints, pointers and tuples only, triton/runtime/interpreter.py 3.6-3.8), so a kernel
    casting it, `eps = eps.to(tl.float32)` as Liger-Kernel's RMSNorm does, raised AttributeError
    there and its launch was skipped. A `tl.tensor` passes the converter unchanged."""
    try:
        parameters = inspect.signature(fn).parameters
        bound = inspect.signature(fn).bind_partial(*args, **kwargs)
    except TypeError:
        return args, kwargs  # the launch itself fails as it would on a GPU
    for name, p in parameters.items():  # a float default (`scale=0.5`) reaches the kernel as a float
        if name not in bound.arguments and isinstance(p.default, float):  # (only those: an autotuner's
            bound.arguments[name] = p.default  # config may set another default, e.g. a BLOCK)
    names = [n for n, v in bound.arguments.items() if isinstance(v, float)]
    if names:
        constexprs = _declared_constexprs(fn)
        names = [n for n in names if n not in constexprs and (signature or {}).get(n) != "constexpr"]
    if not names:
        return args, kwargs
    for name in names:
        kind = (signature or {}).get(name, "fp32")
        bound.arguments[name] = _scalar(bound.arguments[name], kind if kind in _FLOAT_TYPES else "fp32")
    return tuple(bound.args), dict(bound.kwargs)


def _scalar(value: float, kind: str) -> Any:
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as ti

    dtype = {"fp16": tl.float16, "fp32": tl.float32, "fp64": tl.float64}[kind]
    with np.errstate(over="ignore"):  # 1e300 as fp32 is inf, as the launcher's C cast makes it
        data = np.array([value], dtype=_FLOAT_TYPES[kind])
    return tl.tensor(ti.TensorHandle(data, dtype), dtype)


@functools.cache
def _interpreter_takes_bools() -> bool:
    from triton.runtime import interpreter as ti

    try:
        ti._implicit_cvt(False)
    except ValueError:
        return False
    return True


def _int1(value: bool) -> Any:
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as ti

    return tl.tensor(ti.TensorHandle(np.array([value], dtype=np.bool_), tl.int1), tl.int1)


@contextlib.contextmanager
def interpreter_changes_undone() -> Iterator[None]:
    """Undo, when the block ends (an error too), what Triton's interpreter changed outside the
    kernels it ran in it, so a later real compile sees Triton as it was.

    - `_patch_lang(fn)` replaces the builtins of the `triton.language` / `triton.language.core`
      modules in `fn.__globals__` (and of `tl.tensor`, `tl.math`, `tl.dtype.to_ir`,
      `tl.core.tensor_descriptor_base`, ...) through `_LangPatchScope.set_attr`. A launch
      (GridExecutor.__call__) restores its scope, but a device-function call
      (InterpretedFunction.__call__: a nested @jit function, e.g. `tl.cdiv` from
      triton/language/standard.py, whose module sees `core`) drops it: `core`'s builtins then
      stay interpreted and a real compile's casts go to the interpreter's builder
      ("'ir.value' object has no attribute 'dtype'"). Every set_attr is recorded here and
      undone, last first.
    - `FunctionRewriter._compile_and_exec` copies the interpreter module's globals into the
      rewritten function's module globals (the kernel's module, a nested function's,
      triton.language.standard). The names it added are removed, with the rewritten functions
      cached meanwhile in `InterpretedFunction.rewritten_fn` (they need those names).
    - While it records, `tl.tensor.__index__` is set as triton 3.7 sets it (`_scalar_index`): triton
      3.6's fails with numpy 2.4+ on a loop bound that is a scalar tensor.
    - While it records, a kernel's loops (`range`, `tl.range`) give tensor loop variables, as a
      compiled kernel's are (`loop_range`).
    - A global name the kernel loads and its module lacks stays lacking (`missing_globals`): the
      interpreter's copy of its own globals gave Inductor's copy of a kernel `math` and `T` (a
      TypeVar) where a GPU's compile fails with NameError.

    Read in triton 3.6, 3.7 and 3.8 (interpreter.py: `_LangPatchScope` ~line 840,
    `_compile_and_exec` ~line 1434, `InterpretedFunction.__call__` ~line 1477 in 3.7, the same
    code in all three). The scope came with https://github.com/triton-lang/triton/pull/8735
    ("Make TRITON_INTERPRET cleanup after itself", triton 3.6), which restores a launch's patches
    only. Inside another such block (a nested call during a launch) this does nothing: the
    outermost block undoes everything.
    """
    from triton.runtime import interpreter as ti

    scope_class, rewriter_class, cache = ti._LangPatchScope, ti.FunctionRewriter, ti.InterpretedFunction.rewritten_fn
    if getattr(scope_class.set_attr, "_tritoninspect_recording", False):
        yield
        return
    language, wrappers = Patcher(), Patcher()
    added: list[tuple[dict[str, Any], set[str]]] = []
    cached_before = set(cache)
    set_attr, compile_and_exec = scope_class.set_attr, rewriter_class._compile_and_exec

    def recording_set_attr(scope: Any, obj: Any, name: str, value: Any) -> None:
        language.remember(obj, name)
        set_attr(scope, obj, name, REPLACED.get(name, value))

    def recording_compile_and_exec(rewriter: Any, tree: Any) -> Any:
        names = rewriter.fn.__globals__
        before = set(names)
        lacking = missing_globals(rewriter.fn)
        try:
            names[LOOP_RANGE] = loop_range
            return compile_and_exec(rewriter, BuiltinRangeLoops().visit(tree))
        finally:
            for name in lacking:  # the interpreter's own filled them (`math`, `T`): a NameError, as on a GPU
                names.pop(name, None)
            added.append((names, set(names) - before))

    recording_set_attr._tritoninspect_recording = True  # type: ignore[attr-defined]
    try:
        wrappers.set(scope_class, "set_attr", recording_set_attr)
        wrappers.set(rewriter_class, "_compile_and_exec", recording_compile_and_exec)
        yield
    finally:
        wrappers.restore()
        language.restore()
        for names, new in added:
            for name in new:
                names.pop(name, None)
        for fn in set(cache) - cached_before:
            cache.pop(fn, None)


def make_jit_run(on_skip: Any, original: Any = None, compile_launch: Any = None, on_note: Any = None,
                 on_bf16: Any = None) -> Any:
    """JITFunction.run through Triton's interpreter (triton 3.6-3.8 signature).

    A launch first goes to `compile_launch(jf, args by name, options)`, which compiles
    it for real (a kernel Triton cannot compile fails there, as on a GPU), then runs in
    the interpreter. A warmup launches nothing, so it goes to `original` (Triton's own
    run) when given: it compiles for the stub driver's target (sm_90), which is how
    `--resources` and `compile_launch` compile in compile-only mode. torch never warms
    up user kernels (no `warmup=True` in torch/_inductor, _dynamo, _library, 2.13).
    """

    def run(self: JITFunction, *args: Any, grid: Any, warmup: bool = False, **kwargs: Any) -> Any:
        if warmup:
            return original(self, *args, grid=grid, warmup=True, **kwargs) if original is not None else None
        if compile_launch is not None:
            compile_launch(self, *_split_launch(self, args, kwargs))
        # A kernel parameter named like a launch option (triformer's `num_warps`) takes the
        # value, as Triton's binder gives it (jit.py `create_function_from_signature`).
        kwargs = {k: v for k, v in kwargs.items() if k in self.arg_names or k not in _LAUNCH_ONLY_KWARGS}
        return _interpret(self.fn, grid, args, kwargs, on_skip, on_note, on_bf16=on_bf16)

    return run


def _split_launch(jf: JITFunction, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(kernel arguments by parameter name, compile options) of `jf.run(*args, **kwargs)`."""
    names = list(jf.arg_names)
    bound = dict(zip(names, args))
    bound.update({k: v for k, v in kwargs.items() if k in names})
    options = {k: v for k, v in kwargs.items() if k not in names and k != "stream" and v is not None}
    return bound, options


#: Launch options the interpreter has no use for (JITFunction.run keywords that
#: are compile or launch options, triton 3.6-3.8; PR not found).
_LAUNCH_ONLY_KWARGS = frozenset(
    {"num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid",
     "launch_pdl", "stream", "debug", "sanitize_overflow"}
)


def jit_call_interpreted(self: JITFunction, *args: Any, **kwargs: Any) -> Any:
    """A nested @triton.jit function called from an interpreted kernel (the
    interpreter refuses JITFunction.__call__ outside a kernel, triton 3.6-3.8).
    Triton's InterpretedFunction.__call__ never restores what it patched: undone here."""
    with interpreter_changes_undone(), libdevice_in_numpy(self.fn.__globals__):
        return interpreted(self.fn)(*args, **kwargs)


def autotuner_run_first_config(self: Autotuner, *args: Any, **kwargs: Any) -> Any:
    """Autotuner.run without benchmarking: the first config (after pruning).
    Autotuner.configs / best_config / fn.run, triton 3.6-3.8; PR not found."""
    config = self.configs[0]
    self.best_config = config
    return self.fn.run(*args, **kwargs, **config.all_kwargs())


def inductor_run_interpreted(original: Any, on_skip: Any, compile_launch: Any = None, on_note: Any = None,
                             on_bf16: Any = None) -> Any:
    """CachingAutotuner.run for user kernels in TRITON_INTERPRET mode.

    Inductor's own interpret path misaligns args for kernels with constexprs
    (`_interpret_args_grid` -> NameError '_grid_2', torch 2.13), so map the
    launcher args by name as Inductor's call site passes them (`launcher_arg_names`).
    https://github.com/pytorch/pytorch/pull/161924 fixed this for compiled
    kernels (constexprs from `get_constexprs`), but when `self.fn` is an
    InterpretedFunction the signature is still filtered by the config's kwargs
    only (triton_heuristics.py ~line 2317 in 2.13), so a constexpr not set by a
    config stays in. `CachingAutotuner.triton_interpret` / `custom_kernel`:
    torch 2.11-2.14. Before it runs, the user's kernel is compiled for real with the
    launch's arguments and the config's options (`compile_launch`, see make_jit_run).
    """

    def run(self: Any, *args: Any, stream: Any = None, benchmark_run: bool = False, **kwargs: Any) -> Any:
        if not (getattr(self, "triton_interpret", False) and inductor.is_user_kernel_launcher(self)):
            return original(self, *args, stream=stream, benchmark_run=benchmark_run, **kwargs)
        return _launch_user_kernel_interpreted(self, args, on_skip, compile_launch, on_note, on_bf16)

    return run


def _launch_user_kernel_interpreted(autotuner: Any, args: tuple[Any, ...], on_skip: Any,
                                    compile_launch: Any = None, on_note: Any = None, on_bf16: Any = None) -> Any:
    # triton_meta["signature"] / ["constants"], inductor_meta["extra_launcher_args"]
    # and GridExpr.from_meta(...).eval_slow: the launcher grid of
    # https://github.com/pytorch/pytorch/pull/148305 (reland of #147583, torch 2.7),
    # unchanged to 2.14.
    from torch._inductor.runtime.triton_heuristics import GridExpr

    meta, imeta = autotuner.triton_meta, autotuner.inductor_meta
    cfg = autotuner.configs[0]
    fn = getattr(autotuner.fn, "fn", autotuner.fn)
    names = launcher_arg_names(fn, meta, imeta) + list(imeta.get("extra_launcher_args", ()))
    named = dict(zip(names, args))
    grid = GridExpr.from_meta(imeta, cfg).eval_slow(named)
    kernel_args = {n: named[n] for n in names if n in meta["signature"]}
    # Declared constexprs, and the ints equal to 1 and Nones Inductor specialised (passed as 1 / -1).
    kernel_args.update({k: v for k, v in meta.get("constants", {}).items() if k in meta["signature"]})
    kernel_args.update(cfg.kwargs)
    # A constexpr parameter named num_warps / num_stages takes the config's launch option, as
    # Inductor compiles it (CachingAutotuner._create_compile_meta, ~line 1037 in 2.13, ~1263 in
    # 2.14; Dynamo moved the call site's value into the config, triton_kernel_wrap.py
    # SPECIAL_CONFIG_NAMES): config_from_dict pops them out of the config's kwargs.
    for name in ("num_warps", "num_stages"):
        if name in meta["signature"] and name not in kernel_args and name in _declared_constexprs(fn):
            kernel_args[name] = getattr(cfg, name)
    user = inductor.user_kernel_of_launcher(autotuner)
    if compile_launch is not None:
        # The kernel Inductor launches is its copy of the user's; compile the user's own
        # JITFunction (same source, its @jit helpers intact: the copy's were loaded for
        # the interpreter). Config.all_kwargs() = kwargs + launch options, triton 3.6-3.8.
        if user is not None:
            options = {k: v for k, v in cfg.all_kwargs().items() if k not in cfg.kwargs and v is not None}
            compile_launch(user, kernel_args, options, types=inductor_scalar_types(meta["signature"], kernel_args))
    return _interpret(fn, grid, (), kernel_args, on_skip, on_note, meta["signature"], getattr(user, "fn", user),
                      on_bf16=on_bf16)


def launcher_arg_names(fn: Any, triton_meta: dict[str, Any], inductor_meta: dict[str, Any]) -> list[str]:
    """The kernel arguments Inductor passes its launcher positionally for a user kernel, in order
    (before `extra_launcher_args`, the grid): the names of `triton_meta["signature"]`, less the
    parameters the kernel declares `tl.constexpr`.

    Not every 'constexpr' in the signature is declared so: an int argument equal to 1 and a None
    argument get 'constexpr' too (and their value in triton_meta["constants"]), Triton's own
    specialisation, yet the call site still passes them (codegen/wrapper.py
    define_user_defined_triton_kernel, `equals_1` / `equals_none` -> ConstexprArg, ~line 2951 in
    2.13). ir.UserDefinedTritonKernel._codegen (~line 8130 in 2.13) skips only `p.is_constexpr`
    parameters ("see #160000": https://github.com/pytorch/pytorch/pull/160000, torch 2.9), and the
    launcher's `def_args` (triton_heuristics.py `_get_arg_lists`, ~line 2399) drop the same.
    torch's C++ wrapper maps them the same way, from `inductor_meta["declared_constexpr_names"]`
    (codegen/cpp_wrapper_cpu.py ~line 110, wrapper.py ~line 3111 in 2.13; the same in 2.14), which
    is used when present. Otherwise (a kernel without constexprs; a torch without that key, 2.11
    not checked) the kernel's own annotations say: `fn` is its Python function, since in
    TRITON_INTERPRET mode CachingAutotuner.fn is an InterpretedFunction, which has no `params`.
    """
    declared = inductor_meta.get("declared_constexpr_names")
    if declared is None:
        declared = _declared_constexprs(fn)
    return [n for n in triton_meta["signature"] if n not in declared]


def _declared_constexprs(fn: Any) -> set[str]:
    # What JITFunction.params[i].is_constexpr says: KernelParam(num, inspect.Parameter,
    # do_not_specialize, do_not_specialize_on_alignment), triton 3.6-3.8; PR not found.
    # Not through JITFunction(fn): its __init__ registers the new object in Triton's
    # _triton_jit_function_registry under the function's name (triton 3.7 jit.py ~line 779).
    from triton.runtime.jit import KernelParam

    params = inspect.signature(fn).parameters.values()
    return {p.name for i, p in enumerate(params) if KernelParam(i, p, False, False).is_constexpr}
