"""Compile-only mode's launches: Inductor's calls of user kernels mapped onto the kernel's
arguments, run in Triton's interpreter, and results equal to eager (tests/assets/*_kernel.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from tritoninspect.capture import compat
from tritoninspect.capture.session import compile_only

ASSETS = Path(__file__).parent / "assets"


def load_asset(name: str) -> Any:
    sys.path.insert(0, str(ASSETS))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(ASSETS))


def compiled_run(net: Any, input_sets: list[tuple[Any, ...]]) -> tuple[list[Any], Any, Any]:
    """Each input set through `net` compiled with the recording backend in compile-only mode:
    (outputs, capture, compile-only environment)."""
    from tritoninspect.capture.recorder import Recorder

    recorder = Recorder("inductor", compile_only=True)
    torch._dynamo.reset()
    try:
        with compile_only() as env, recorder.installed():
            compiled = torch.compile(net, backend=recorder.backend)
            outs = [compiled(*args) for args in input_sets]
    finally:
        torch._dynamo.reset()
    return outs, recorder.capture, env


# --- Inductor's launcher arguments ----------------------------------------------------------------


@pytest.mark.parametrize("inductor_meta", [{"declared_constexpr_names": ["BLOCK"]}, {}], ids=["declared", "annotations"])
def test_launcher_args_keep_an_int_specialised_to_one(inductor_meta: dict[str, Any]) -> None:
    """Inductor marks an int argument equal to 1 'constexpr' in triton_meta["signature"] (as Triton
    specialises it) but still passes it; only declared tl.constexpr parameters are left out, named
    by inductor_meta (torch 2.13+) or else by the kernel's annotations."""
    module = load_asset("stride_one_kernel")
    signature = {"Y_ptr": "*fp32", "Y_row_stride": "i32", "X_ptr": "*fp32", "X_row_stride": "i32",
                 "W_ptr": "*fp32", "W_stride": "constexpr", "n_cols": "i32", "eps": "fp64", "BLOCK": "constexpr"}
    triton_meta = {"signature": signature, "constants": {"W_stride": 1, "BLOCK": 64}}
    names = compat.interpreter.launcher_arg_names(module._scale_rows_kernel.fn, triton_meta, inductor_meta)
    assert names == ["Y_ptr", "Y_row_stride", "X_ptr", "X_row_stride", "W_ptr", "W_stride", "n_cols", "eps"]


@pytest.mark.slow
def test_compiled_launch_with_a_stride_of_one_equals_eager() -> None:
    module = load_asset("stride_one_kernel")
    net = module.Net()
    (x,) = module.example_inputs()
    with compile_only():
        eager = net(x)
    torch.testing.assert_close(eager, module.reference(x, net.weight))
    (out,), capture, env = compiled_run(net, [(x,)])
    assert env.problems == []
    assert any(la.in_graph for la in capture.launches), capture.launches
    torch.testing.assert_close(out, eager)


# --- what the interpreter changes outside a launch ----------------------------------------------


def _language_state() -> dict[tuple[str, str], object]:
    """The attributes of everything Triton's interpreter patches (triton/runtime/interpreter.py _patch_lang)."""
    import triton.language as tl

    objects = {"tl": tl, "tl.core": tl.core, "tl.math": tl.math, "tl.tensor": tl.tensor, "tl.dtype": tl.dtype,
               "tl.core.tensor_descriptor_base": tl.core.tensor_descriptor_base}
    return {(owner, name): value for owner, obj in objects.items() for name, value in vars(obj).items()
            if name != "__annotations__"}  # created on first read of a class's __annotations__


def test_an_interpreted_launch_leaves_triton_language_as_it_was() -> None:
    """A launch whose kernel calls nested @jit functions (its own and tl.cdiv, from a module that
    sees triton.language.core) restores every builtin the interpreter patched, and the names it
    added to the modules' globals."""
    import triton.language.standard as standard
    import triton.runtime.interpreter  # noqa: F401 (its import binds triton.language.semantic: not a patch)

    module = load_asset("nested_jit_kernel")
    language, kernel_globals, standard_globals = _language_state(), set(vars(module)), set(vars(standard))
    x = torch.randn(64)
    out = torch.empty_like(x)
    with compile_only() as env:
        module._double_kernel[(4,)](x, out, 64, BLOCK=16)
    assert env.problems == []
    torch.testing.assert_close(out, x * 2)
    after = _language_state()
    assert [key for key in language.keys() | after.keys() if language.get(key) is not after.get(key)] == []
    assert (set(vars(module)) - kernel_globals, set(vars(standard)) - standard_globals) == (set(), set())


@pytest.mark.slow
def test_a_recompile_after_nested_jit_calls_analyses_the_kernel_again() -> None:
    """After the first compile's launches ran nested @jit calls in the interpreter (tl.cdiv, whose
    module sees triton.language.core), the recompile's mutation analysis still compiles the kernel:
    the same tensors_to_clone in both compiles, no fallback."""
    from tritoninspect import inspect_module

    module = load_asset("nested_jit_kernel")
    report = inspect_module(module.Net(), *module.example_inputs(), device="cpu").to_dict()
    assert len(report["recompiles"]) == 1
    (kernel,) = report["kernels"]
    analysed = [o for o in kernel["occurrences"] if o["stage"] == "aot_inference"]
    assert [o["compile_id"] for o in analysed] == ["0/0", "0/1"]
    found = [(list(o["tensors_to_clone"]), o["mutation_analysis_fallback"]) for o in analysed]
    assert found == [(["o_ptr"], None)] * 2


# --- the output code Inductor writes for a user kernel ----------------------------------------


@pytest.mark.slow
def test_a_kernel_reading_globals_is_not_reported_rewritten() -> None:
    """Inductor appends the kernel's module-level tl.constexpr and its libdevice import after the
    kernel's function; that is no epilogue fusion (off by default in torch 2.13)."""
    from tritoninspect import inspect_module

    module = load_asset("globals_kernel")
    report = inspect_module(module.Net(), module.example_inputs(), device="cpu").to_dict()
    (kernel,) = report["kernels"]
    epilogues = [n["epilogue_fusion"] for o in kernel["occurrences"] for n in o.get("neighbourhood") or []]
    assert epilogues and set(epilogues) == {"off"}, epilogues


# --- parameters named like launch options; bool arguments (issue 22 item 4) ---------------------


def test_a_kernel_with_parameters_named_like_launch_options_compiles_for_the_target() -> None:
    """triformer's kernels take `num_warps: tl.constexpr`: the compile check passed the launch
    option and the parameter as two keywords ("warmup() got multiple values for keyword argument
    'num_warps'"), a false alarm on every launch. Triton binds such a keyword to the parameter."""
    module = load_asset("option_named_params")
    x = torch.randn(100)
    problems: list[tuple[str, BaseException]] = []
    with compile_only():
        compiler = compat.triton_compile.LaunchCompiler(on_problem=lambda k, e: problems.append((k, e)))
        try:
            args = {"x_ptr": x, "out_ptr": x, "n": 100, "causal": False, "BLOCK": 32, "num_warps": 4, "num_stages": 3}
            compiled = compiler.compile(module.masked_scale_kernel, args,
                                        {"num_warps": 4, "num_stages": 3})
        finally:
            compiler.close()
    assert problems == []
    assert compiled is not None and compiled.metadata.target.arch == 90


def test_an_eager_launch_with_option_named_parameters_and_a_bool_runs_in_the_interpreter() -> None:
    """The interpreter dropped `num_warps=` / `num_stages=` keywords meant for the kernel's own
    parameters ("missing 2 required positional arguments"), and Triton 3.7's interpreter rejects
    a Python bool ("numpy data itemsize (32 bits) exceeds dtype primitive_bitwidth (1 bits)")."""
    module = load_asset("option_named_params")
    (x,) = module.example_inputs()
    with compile_only() as env:
        out = module.Net()(x)
    torch.testing.assert_close(out, module.reference(x))
    assert env.problems == []
    converted = {} if compat.interpreter._interpreter_takes_bools() else {"masked_scale_kernel": ["causal"]}
    assert env.bools == converted


@pytest.mark.slow
def test_a_compiled_launch_with_option_named_parameters_and_a_bool_equals_eager() -> None:
    """Inductor's launcher passes num_warps / num_stages as the config's options (Dynamo moved them
    there); the kernel's constexpr parameters of those names take them, as Inductor compiles it."""
    module = load_asset("option_named_params")
    (x,) = module.example_inputs()
    (out,), capture, env = compiled_run(module.Net(), [(x,)])
    assert env.problems == []
    assert any(la.in_graph for la in capture.launches), capture.launches
    torch.testing.assert_close(out, module.reference(x))


def test_an_error_the_interpreter_raises_setting_up_a_launch_is_its_limit() -> None:
    """An exception from the interpreter's own argument conversion is a limit of compile-only mode
    (the launch is skipped with a diagnostic); one from binding the arguments is the launch's own
    (Triton's binder raises it on a GPU too)."""
    import inspect

    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter as ti

    with pytest.raises(ValueError) as limit:
        ti.TensorHandle(np.array([1], dtype=np.int32), tl.int1)
    assert compat.interpreter.raised_by_the_interpreter(limit.value)
    with pytest.raises(TypeError) as binding:
        inspect.getcallargs(lambda a, b: None, 1)
    assert not compat.interpreter.raised_by_the_interpreter(binding.value)


# --- an autotuner's trial runs ------------------------------------------------------------------


def test_an_autotuners_trial_runs_are_not_counted_as_launches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Triton's Autotuner launches each config to time it before the launch it was called for: one call
    is one launch (on an H200 an fla kernel called once was counted 7,727 times). Compile-only mode runs
    the first config untimed; here the Autotuner times both configs, as on a GPU, with the sample's
    wall-clock benchmark (the interpreter has no GPU timer)."""
    import importlib.util

    from triton.runtime.autotuner import Autotuner

    from tritoninspect.capture.recorder import Recorder

    spec = importlib.util.spec_from_file_location("autotune_sample", ASSETS.parent.parent / "samples" / "autotune.py")
    sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sample)
    timed: list[object] = []

    def bench(kernel_call: Any, quantiles: Any) -> list[float]:
        timed.append(kernel_call)
        return sample._wall_clock_bench(kernel_call, quantiles)

    sample.scaled_add_kernel.do_bench = bench  # (a fresh module's kernel: nothing to undo)
    timing_run = Autotuner.run
    recorder = Recorder("dynamo", compile_only=True)
    with compile_only(), recorder.installed():
        monkeypatch.setattr(Autotuner, "run", timing_run)  # (compile-only mode runs the first config untimed)
        out = sample.Net()(*sample.example_inputs())
        monkeypatch.undo()
    assert len(timed) == 2 and out.shape == (256,)
    (launch,) = recorder.capture.launches
    assert launch.count == 1, recorder.capture.launches


# --- float arguments and libdevice in the interpreter --------------------------------------------


def _libdevice_state() -> dict[tuple[str, str], object]:
    import triton.language.extra.cuda.libdevice as cuda
    import triton.language.extra.libdevice as generic

    return {(m.__name__, name): value for m in (generic, cuda) for name, value in vars(m).items()}


def test_a_kernel_casting_a_float_and_calling_libdevice_runs_in_the_interpreter() -> None:
    """Liger-Kernel's RMSNorm casts its float `eps` and calls libdevice's `rsqrt`; Triton's
    interpreter passed the float as a Python float ("'float' object has no attribute 'to'") and ran
    libdevice's stubs (None: "cannot convert None ... to tensor"), so compile-only mode skipped such
    launches. They now run, with eager's result, and leave libdevice and the kernel's globals as
    they were."""
    module = load_asset("libdevice_kernel")
    libdevice, kernel_globals = _libdevice_state(), dict(vars(module))
    x = torch.rand(100) + 0.5
    with compile_only() as env:
        out = module.launch(x)
    assert env.problems == []
    torch.testing.assert_close(out, module.reference(x))
    after = _libdevice_state()
    assert [key for key in libdevice.keys() | after.keys() if libdevice.get(key) is not after.get(key)] == []
    assert [k for k in kernel_globals.keys() | vars(module).keys() if kernel_globals.get(k) is not vars(module).get(k)] == []


def test_libdevice_in_the_interpreter_broadcasts_keeps_fp32_and_takes_keywords() -> None:
    """A broadcast pair gives the broadcast shape (the widest operand's did not); an int exponent
    leaves pow fp32 (numpy widened it to fp64); `arg1=` is an argument (it was dropped); a float
    parameter left at its default is a scalar too; 1e300 is inf in fp32, with no numpy warning."""
    import warnings

    module = load_asset("libdevice_kernel")
    x, y = torch.rand(16) + 0.5, torch.randn(16)
    with warnings.catch_warnings(), compile_only() as env:
        warnings.simplefilter("error", RuntimeWarning)
        out = module.launch_mixed(x, y)
    assert env.problems == []
    torch.testing.assert_close(out, module.reference_mixed(x, y))


def test_a_libdevice_function_without_numpy_skips_its_launch_by_name() -> None:
    module = load_asset("libdevice_kernel")
    with compile_only() as env:
        out = module.launch_uncovered(torch.ones(8))
    assert out.sum() == 0
    assert any("libdevice.add_rd is not computed in compile-only mode" in str(p) for p in env.problems), env.problems


def test_libdevice_of_integers_and_of_numbers_alone_is_computed() -> None:
    """`abs(offsets)` (libdevice has integer abs) and `sqrt(2.0)` (Triton makes 2.0 an fp32 scalar)
    were skipped with "no float tensor argument", naming no function."""
    module = load_asset("libdevice_kernel")
    x = torch.randn(16)
    with compile_only() as env:
        out = module.launch_numbers(x)
    assert env.problems == []
    torch.testing.assert_close(out, module.reference_numbers(x))


def test_a_libdevice_name_triton_lacks_fails_the_launch_as_on_a_gpu() -> None:
    """Triton's launch reads the kernel's globals for its cache key and raises AttributeError for
    `libdevice.rsqrtt`; compile-only mode said "could not be compiled ... unknown", then skipped the
    launch as "a limit of compile-only mode", and the run went on."""
    from triton.compiler.errors import CompilationError

    module = load_asset("libdevice_kernel")
    # triton 3.6-3.7 raise AttributeError from the launch's cache key; 3.8 compiles first, and its
    # CompilationError names the attribute
    with compile_only() as env, pytest.raises((AttributeError, CompilationError), match="rsqrtt"):
        module.launch_misspelt(torch.ones(8))
    assert env.problems == []


def test_every_libdevice_function_computed_is_one_triton_has() -> None:
    """The table named fmax, fmin and fabs, which no libdevice module of triton 3.6-3.8 defines."""
    import importlib

    from tritoninspect.capture.compat.libdevice import _MODULES, _functions, _table

    defined = {name for module in _MODULES for name in _functions(importlib.import_module(module))}
    assert sorted(set(_table()) - defined) == []


def test_a_float_argument_takes_the_type_the_launch_was_compiled_with() -> None:
    """Triton compiles a Python float argument as fp32; Inductor's launch signature says fp64 (its
    policy for Python floats): the interpreter computes with what each compiled launch gets. A
    float given to a constexpr parameter stays a Python value."""
    import triton.language as tl

    import inspect

    module = load_asset("libdevice_kernel")
    fn = module._norm_tanh_kernel.fn

    def passed(signature: dict[str, str] | None) -> dict[str, Any]:
        args, kwargs = compat.interpreter.floats_as_tensors(fn, (None, None, 100, 1e-6), {"BLOCK": 128.0}, signature)
        return inspect.signature(fn).bind(*args, **kwargs).arguments

    eager, compiled = passed(None), passed({"eps": "fp64"})
    assert (eager["eps"].dtype, compiled["eps"].dtype) == (tl.float32, tl.float64)
    assert float(compiled["eps"].handle.data[0]) == 1e-6
    assert (eager["n"], eager["BLOCK"]) == (100, 128.0)


@pytest.mark.slow
def test_a_compiled_launch_casting_a_float_and_calling_libdevice_equals_eager() -> None:
    module = load_asset("libdevice_kernel")
    (x,) = module.example_inputs()
    (out,), capture, env = compiled_run(module.Net(), [(x,)])
    assert env.problems == []
    assert any(la.in_graph for la in capture.launches), capture.launches
    torch.testing.assert_close(out, module.reference(torch.exp(x)) * 3)


def test_a_loop_bound_that_is_a_scalar_tensor_runs_on_triton_36s_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Triton 3.6 sets `tl.tensor.__index__` to `int(self.handle.data)`, which numpy 2.4+ refuses for
    a one-element array (triton-lang/triton#9171): the H200's triton 3.6 skipped Liger's RMSNorm
    backward. Here the interpreter is made to set 3.6's `__index__`; the launch still runs."""
    from triton.runtime import interpreter as ti

    patch_tensor = ti._patch_lang_tensor

    def as_in_triton_36(tensor: Any, scope: Any) -> None:
        patch_tensor(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data))

    monkeypatch.setattr(ti, "_patch_lang_tensor", as_in_triton_36)
    module = load_asset("scalar_range_kernel")
    x = torch.randn(5, 8)
    with compile_only() as env:
        out = module.launch(x)
    assert env.problems == []
    torch.testing.assert_close(out, x * 2)


def test_the_docs_list_the_libdevice_functions_computed() -> None:
    import re

    from tritoninspect.capture.compat.libdevice import _table

    docs = (Path(__file__).parents[1] / "docs" / "compile-only.md").read_text()
    listed = docs[docs.index("functions computed"):docs.index("Rounding modes other than")]
    assert f"The {len(_table())} functions computed" in docs
    assert sorted(re.findall(r"`(\w+)`", listed)) == sorted(_table())


def test_a_kernels_loop_variables_are_tensors_as_on_a_gpu() -> None:
    """`for i_t in range(NT): i_t.to(tl.int64)` (flash-linear-attention's chunk kernels) raised
    AttributeError in the interpreter, whose loop variable was a Python int: the launch was skipped."""
    module = load_asset("loop_variable_kernel")
    x = torch.arange(40.0)
    with compile_only() as env:
        doubled, plus_one = module.launch(x)
        widths = module.loop_widths()
    assert env.problems == []
    torch.testing.assert_close((doubled, plus_one), (x * 2, x + 1))
    assert widths.tolist() == [32, 32, 64, 64]  # int32 bounds, then an int64 bound, as Triton compiles them


def test_loop_steps_and_options_as_a_gpu_runs_them() -> None:
    """A negative step given as an argument runs no iteration on the H200 (scf.for steps up); the
    interpreter's Python range ran 4. `tl.range(0, n, 1, 2)` (num_stages by position) was refused."""
    module = load_asset("loop_variable_kernel")
    with compile_only() as env:
        out = module.stepped()
    assert env.problems == []
    assert out.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 2, 3]


def test_a_loop_over_a_static_range_keeps_its_ints_and_python_loops_stay_python() -> None:
    import builtins

    import triton.language as tl

    before = (tl.range, builtins.range, tl.static_range)
    module = load_asset("loop_variable_kernel")
    with compile_only():
        module.launch(torch.arange(8.0))
    assert (tl.range, builtins.range, tl.static_range) == before
    assert "_tritoninspect_loop_range" not in vars(module)


def test_a_launch_computing_on_bfloat16_values_is_said_not_meaningful() -> None:
    """Triton's interpreter holds bf16 values as their uint16 bits: cut-cross-entropy's `tl.dot` on bf16
    tiles gave an lse of 5e10 and NaN losses in compile-only mode, with no word. Now a warning names the
    kernel; one that casts to float32 first (right in the interpreter) gets none (tests/assets/bf16_kernels.py)."""
    from tritoninspect import inspect_module

    module = load_asset("bf16_kernels")
    net, (x, y) = module.Net(), module.example_inputs()
    report = inspect_module(net, (x, y), device="cpu")
    warnings = [d.message for d in report.diagnostics if d.source == "interpreter"]
    assert len(warnings) == 1 and warnings[0].startswith("bf16_dot_kernel computed on bfloat16 values (create_dot)")
    assert "not meaningful" in warnings[0] and all(d.severity == "warning" for d in report.diagnostics
                                                   if d.source == "interpreter")
    with compile_only():  # what the warning is about: the dot is wrong, the upcast kernel right
        out, twice = net(x, y)
    assert torch.equal(twice, (x.float() * 2).bfloat16())
    assert not torch.allclose(out, x.float() @ y.float(), atol=1e-1)


def test_further_bfloat16_launches_are_said_in_one_line_each() -> None:
    """cut-cross-entropy's training model repeated the long bf16 warning in full for each of three kernels."""
    from tritoninspect.capture.session import Environment

    env = Environment()
    env.bf16_launch("dot_kernel", ["create_dot"])
    env.bf16_launch("sum_kernel", ["create_reduce"])
    env.bf16_launch("sum_kernel", ["create_reduce"])
    (first, source), (second, _) = [(text, s) for s, text in env.problems]
    assert source == "interpreter" and "uint16 bits" in first and "not meaningful" in first and len(first) > 300
    assert second == "sum_kernel computed on bfloat16 values (create_reduce) too: its values are not meaningful either"
