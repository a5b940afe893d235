"""Compile-only mode's launches: user kernels run in Triton's interpreter, from eager code and Inductor's."""

from __future__ import annotations

from typing import Any

from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

from tritoninspect.capture.compat import inductor


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


def _interpret(fn: Any, grid: Any, args: tuple[Any, ...], kwargs: dict[str, Any], on_skip: Any) -> Any:
    """Launch `fn` in the interpreter; on an interpreter limitation, skip the
    launch (its outputs stay unwritten) and tell `on_skip` instead of failing
    the whole capture: the graphs and output code are what compile-only mode is for."""
    try:
        return interpreted(fn)[grid](*args, **kwargs)
    except interpreter_limits() as exc:
        on_skip(getattr(fn, "__name__", str(fn)), exc)
        return None


def make_jit_run(on_skip: Any, original: Any = None, compile_launch: Any = None) -> Any:
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
        kwargs = {k: v for k, v in kwargs.items() if k not in _LAUNCH_ONLY_KWARGS}
        return _interpret(self.fn, grid, args, kwargs, on_skip)

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
    """A nested @triton.jit function (a user helper, or `tl.max`, `tl.sum`...: @jit
    functions in triton/language/standard.py) called from an interpreted kernel: the
    interpreter refuses JITFunction.__call__ outside a kernel, triton 3.6-3.8.

    What `InterpretedFunction.__call__` does, with the language patch undone after the
    call: it patches triton.language for the callee's globals (`_patch_lang`) and never
    restores it (triton 3.6-3.8, runtime/interpreter.py), so `tl.core.tensor.__mul__` and
    friends stayed the interpreter's and every later real compile of a kernel failed in
    the front end ("'ir.value' object has no attribute 'dtype'"), until a warm
    Triton cache skipped the front end. PR not found. InterpreterError wraps what the
    callee raised, as Triton does.
    """
    from triton.runtime.errors import InterpreterError
    from triton.runtime.interpreter import _patch_lang

    function = interpreted(self.fn)
    scope = _patch_lang(self.fn)
    try:
        return function.rewrite()(*args, **kwargs)
    except Exception as exc:
        raise InterpreterError(repr(exc)) from exc
    finally:
        scope.restore()


def autotuner_run_first_config(self: Autotuner, *args: Any, **kwargs: Any) -> Any:
    """Autotuner.run without benchmarking: the first config (after pruning).
    Autotuner.configs / best_config / fn.run, triton 3.6-3.8; PR not found."""
    config = self.configs[0]
    self.best_config = config
    return self.fn.run(*args, **kwargs, **config.all_kwargs())


def inductor_run_interpreted(original: Any, on_skip: Any, compile_launch: Any = None) -> Any:
    """CachingAutotuner.run for user kernels in TRITON_INTERPRET mode.

    Inductor's own interpret path misaligns args for kernels with constexprs
    (`_interpret_args_grid` -> NameError '_grid_2', torch 2.13), so map the
    launcher args by name from triton_meta / inductor_meta instead.
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
        return _launch_user_kernel_interpreted(self, args, on_skip, compile_launch)

    return run


def _launch_user_kernel_interpreted(autotuner: Any, args: tuple[Any, ...], on_skip: Any,
                                    compile_launch: Any = None) -> Any:
    # triton_meta["signature"] / ["constants"], inductor_meta["extra_launcher_args"]
    # and GridExpr.from_meta(...).eval_slow: the launcher grid of
    # https://github.com/pytorch/pytorch/pull/148305 (reland of #147583, torch 2.7),
    # unchanged to 2.14.
    from torch._inductor.runtime.triton_heuristics import GridExpr

    meta, imeta = autotuner.triton_meta, autotuner.inductor_meta
    cfg = autotuner.configs[0]
    constants = dict(meta.get("constants", {}))
    names = [n for n, ty in meta["signature"].items() if ty != "constexpr" and n not in constants and n not in cfg.kwargs]
    extra = list(imeta.get("extra_launcher_args", ()))
    named = dict(zip(names + extra, args))
    grid = GridExpr.from_meta(imeta, cfg).eval_slow(named)
    kernel_args = {n: named[n] for n in names}
    kernel_args.update({k: v for k, v in constants.items() if k in meta["signature"]})
    kernel_args.update(cfg.kwargs)
    fn = autotuner.fn
    if compile_launch is not None:
        # The kernel Inductor launches is its copy of the user's; compile the user's own
        # JITFunction (same source, its @jit helpers intact: the copy's were loaded for
        # the interpreter). Config.all_kwargs() = kwargs + launch options, triton 3.6-3.8.
        user = inductor.user_kernel_of_launcher(autotuner)
        if user is not None:
            options = {k: v for k, v in cfg.all_kwargs().items() if k not in cfg.kwargs and v is not None}
            compile_launch(user, kernel_args, options)
    return _interpret(getattr(fn, "fn", fn), grid, (), kernel_args, on_skip)
