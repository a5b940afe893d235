"""The compatibility layer: text formats torch emits, scoped patches, compile-only mode, kernel identity.

Graph-break payloads below are real `dynamo_graph_break_reason` artifacts (torch 2.13; 2.11 emits the
same forms), with paths replaced and torch's own traceback shortened; where a form could not be
triggered on purpose it is built with torch's own formatter or format string (named next to it).
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest
import triton
import triton.language as tl

from tritoninspect.capture import compat
from tritoninspect.capture.patching import Patcher
from tritoninspect.capture.records import OutputKernel
from tritoninspect.capture.session import compile_only

USER = "/home/user/proj/model.py"
TORCH = "/opt/venv/lib/python3.11/site-packages/torch"

# --- graph-break payloads ------------------------------------------------------------------------

UNSUPPORTED = """torch._dynamo.exc.Unsupported: Call to `torch._dynamo.graph_break()`
  Explanation: User-inserted graph break. Message: None
  Hint: Remove the `torch._dynamo.graph_break()` call.

  Developer debug context: Called `torch._dynamo.graph_break()` with args `[]`, kwargs `{}`

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0025.html
"""

TORCH_TRACEBACK = f"""Traceback (most recent call last):
  File "{TORCH}/_dynamo/symbolic_convert.py", line 1076, in wrapper
    return inner_fn(self, inst)
           ^^^^^^^^^^^^^^^^^^^^
  File "{TORCH}/_dynamo/exc.py", line 727, in unimplemented
    raise Unsupported(msg, gb_type, skip_frame)
{UNSUPPORTED}"""

#: symbolic_convert.py log_graph_break: `torch._dynamo.graph_break()` in a compiled function.
GRAPH_BREAK_AT = f"""Graph break in user code at {USER}:12
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Call to `torch._dynamo.graph_break()`
  Explanation: User-inserted graph break. Message: None
  Hint: Remove the `torch._dynamo.graph_break()` call.

  Developer debug context: Called `torch._dynamo.graph_break()` with args `[]`, kwargs `{{}}`

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0025.html

User code traceback:
  File "{USER}", line 35, in <module>
    torch.compile(f, backend="eager")(torch.ones(3))
  File "{USER}", line 12, in f1
    torch._dynamo.graph_break()

{TORCH_TRACEBACK}"""

#: The same break inside `try: ... finally:`, where Dynamo cannot resume: it skips the frame.
GRAPH_BREAK_AT_SKIPPED = f"""Graph break in user code at {USER}:22
Graph Break Reason: Failed to handle graph break gracefully. Skipping the function and falling back to eager. Graph break encountered:

Call to `torch._dynamo.graph_break()`
  Explanation: User-inserted graph break. Message: None
  Hint: Remove the `torch._dynamo.graph_break()` call.

  Developer debug context: Called `torch._dynamo.graph_break()` with args `[]`, kwargs `{{}}`

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0025.html

User code traceback:
  File "{USER}", line 35, in <module>
    torch.compile(f, backend="eager")(torch.ones(3))
  File "{USER}", line 22, in f2
    torch._dynamo.graph_break()

{TORCH_TRACEBACK}"""

#: convert_frame.py (the soft-failure log, torch 2.13 line ~2381): format string filled in.
SKIP_FRAME = f"""Graph break: torch.compile cannot properly resume from this graph break, which results in a skip.
torch.compile will skip tracing the frame f2 ({USER} line 19) and fall back to eager.
The graph break occurred in the following user code:
  File "{USER}", line 22, in f2
    torch._dynamo.graph_break()

{TORCH_TRACEBACK}"""

#: exc.py format_error_msg_verbose (unimplemented_with_warning), produced by calling it.
WONT_CONVERT = f"""WON'T CONVERT forward {USER} line 4
========== TorchDynamo Stack Trace ==========
Traceback (most recent call last):
  File "{TORCH}/_dynamo/output_graph.py", line 1801, in call_user_compiler
    compiled_fn = compiler_fn(gm, example_inputs)
  File "{TORCH}/_subclasses/fake_tensor.py", line 2410, in dispatch
    raise RuntimeError("Cannot access data pointer of Tensor (e.g. FakeTensor)")
RuntimeError: Cannot access data pointer of Tensor (e.g. FakeTensor)

========== The above exception occurred while processing the following code ==========

  File "{USER}", line 5, in forward
    return x.sin()

=========="""


def test_graph_break_at_user_line() -> None:
    reason, file, line, stack, skipped = compat.parse_graph_break(GRAPH_BREAK_AT)
    assert (file, line, skipped) == (USER, 12, False)
    assert reason.startswith("Call to `torch._dynamo.graph_break()`")  # the preamble line is dropped
    assert "User code traceback" not in reason and "Traceback" not in reason
    assert stack == (f"{USER}:35 in <module>", f"{USER}:12 in f1")  # torch's frames are not the user's


def test_unresumable_graph_break_skips_the_frame() -> None:
    reason, file, line, _, skipped = compat.parse_graph_break(GRAPH_BREAK_AT_SKIPPED)
    assert (file, line) == (USER, 22)
    assert skipped is True


def test_skip_frame_form() -> None:
    reason, file, line, stack, skipped = compat.parse_graph_break(SKIP_FRAME)
    assert (file, line, skipped) == (USER, 22, True)
    assert stack == (f"{USER}:22 in f2",)
    assert reason.startswith("Graph break: torch.compile cannot properly resume from this graph break")


def test_skip_frame_reason_names_the_error() -> None:
    reason = compat.parse_graph_break(SKIP_FRAME)[0]
    assert "Call to `torch._dynamo.graph_break()`" in reason


def test_wont_convert_form() -> None:
    reason, file, line, _, skipped = compat.parse_graph_break(WONT_CONVERT)
    assert reason == "RuntimeError: Cannot access data pointer of Tensor (e.g. FakeTensor)"
    assert (file, line, skipped) == (USER, 4, True)


@pytest.mark.parametrize("payload", ["something torch never said\nsecond line", "  \n", ""])
def test_unknown_payload_degrades_to_its_first_line(payload: str) -> None:
    reason, file, line, stack, skipped = compat.parse_graph_break(payload)
    assert reason == (payload.strip().splitlines() or [""])[0]
    assert (file, line, stack, skipped) == (None, None, (), False)


def test_unknown_payload_keeps_a_user_frame() -> None:
    payload = f'Something new\n  File "{USER}", line 7, in forward\n    y = f(x)\n'
    assert compat.parse_graph_break(payload) == ("Something new", USER, 7, (f"{USER}:7 in forward",), False)


# --- output code -------------------------------------------------------------------------------------

OUTPUT_CODE = f"""
cpp_fused_sin_0 = async_compile.cpp_pybinding(['const float*', 'float*'], r'''
extern "C"  void  kernel(const float* in_ptr0, float* out_ptr0) {{}}
''')


# Original path: {USER}:13
add_kernel_0 = async_compile.triton('add_kernel', '''
@triton_heuristics.user_autotune(configs=[], inductor_meta={{'kernel_name': 'add_kernel_0'}}, custom_kernel=True)
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pass
''', device_str='cuda')


# Original path: /home/user/proj/other.py:40
unused_kernel_0 = async_compile.triton('unused_kernel', '''
@triton.jit
def unused_kernel(x_ptr):
    pass
''', device_str='cuda')


async_compile.wait(globals())

class Runner:
    def call(self, args):
        arg0_1, arg1_1 = args
        buf0 = empty_strided_cuda((64, ), (1, ), torch.float32)
        cpp_fused_sin_0(arg0_1, buf0)
        add_kernel_0.run(buf0, arg1_1, buf1, 64, 4, 1, 1, stream=raw_stream0)
        buf2 = torch.ops.mylib.opaque_scale.default(buf1, 2.0)
        buf3 = torch.ops.aten.mm.default(buf2, buf2)
        buf4 = torch.ops.mylib.opaque_scale.default(buf3, 2.0)
        extern_kernels.mm(buf2, buf3, out=buf4)
        return (buf4, )
"""


def test_parse_output_code() -> None:
    kernels, ops = compat.parse_output_code(OUTPUT_CODE)
    assert kernels == (
        OutputKernel("add_kernel_0", "add_kernel", USER, 13, True),
        OutputKernel("unused_kernel_0", "unused_kernel", "/home/user/proj/other.py", 40, False),
    )
    assert ops == ("mylib::opaque_scale",)  # once, and never torch's own namespaces


def test_parse_output_code_without_user_kernels() -> None:
    assert compat.parse_output_code("def call(args):\n    return torch.ops.aten.sin.default(args[0])\n") == ((), ())


# --- Patcher -----------------------------------------------------------------------------------------


class Base:
    inherited = "base"


class Child(Base):
    own = "child"


def test_patcher_restores_class_attributes() -> None:
    patcher = Patcher()
    patcher.set(Child, "own", "patched")
    patcher.set(Child, "own", "patched twice")
    patcher.set(Child, "inherited", "shadow")
    patcher.set(Child, "new", "added")
    assert (Child.own, Child.inherited, Child.new) == ("patched twice", "shadow", "added")  # type: ignore[attr-defined]
    patcher.restore()
    assert Child.__dict__["own"] == "child"
    # The inherited attribute is not copied down into the subclass: it is inherited again.
    assert "inherited" not in Child.__dict__ and Child.inherited == "base"
    assert not hasattr(Child, "new")
    assert Base.inherited == "base"


def test_patcher_restores_module_and_instance_attributes() -> None:
    module = types.ModuleType("fake_module")
    module.value = 1  # type: ignore[attr-defined]
    obj = types.SimpleNamespace(slot=None)
    patcher = Patcher()
    patcher.set(module, "value", 2)
    patcher.set(module, "extra", 3)
    patcher.set(obj, "slot", "active")
    assert (module.value, module.extra, obj.slot) == (2, 3, "active")  # type: ignore[attr-defined]
    patcher.restore()
    assert module.value == 1 and not hasattr(module, "extra")  # type: ignore[attr-defined]
    assert obj.slot is None
    patcher.restore()  # a second restore has nothing left to undo
    assert module.value == 1  # type: ignore[attr-defined]


# --- compile-only mode -------------------------------------------------------------------------------

_MISSING = object()


def _patched_objects() -> dict[str, object]:
    """Everything compile_only() may replace, as the objects themselves (compared by identity)."""
    from torch.utils import _triton
    from triton.runtime import driver
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.jit import JITFunction

    caching = compat.caching_autotuner_class()
    found = {
        "JITFunction.run": JITFunction.__dict__.get("run", _MISSING),
        "JITFunction.__call__": JITFunction.__dict__.get("__call__", _MISSING),
        "Autotuner.run": Autotuner.__dict__.get("run", _MISSING),
        "CachingAutotuner.run": caching.__dict__.get("run", _MISSING),
        "driver._active": driver.__dict__.get("_active", _MISSING),
        "cpu backend": triton.backends.backends.get("cpu", _MISSING),
    }
    for name in ("_device_supports_tma", "_device_supports_tensor_descriptor"):
        found[name] = getattr(_triton, name, _MISSING)
    return found


def _assert_same(before: dict[str, object], after: dict[str, object]) -> None:
    assert before.keys() == after.keys()
    changed = [name for name in before if before[name] is not after[name]]
    assert changed == []


def test_compile_only_patches_and_restores() -> None:
    from torch.utils._triton import has_triton
    from triton.runtime import driver

    before, had_triton = _patched_objects(), has_triton()
    with compile_only():
        inside = _patched_objects()
        assert has_triton() is True
        assert driver.active.get_current_target().arch == 90
        replaced = ("JITFunction.run", "JITFunction.__call__", "Autotuner.run", "CachingAutotuner.run", "driver._active")
        assert [name for name in replaced if inside[name] is before[name]] == []
    _assert_same(before, _patched_objects())
    assert has_triton() == had_triton


def test_compile_only_restores_after_an_error() -> None:
    from torch.utils._triton import has_triton

    before, had_triton = _patched_objects(), has_triton()
    with pytest.raises(RuntimeError, match="inside"):
        with compile_only():
            raise RuntimeError("inside")
    _assert_same(before, _patched_objects())
    assert has_triton() == had_triton


def test_compile_only_restores_when_setup_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> None:
        raise compat.CaptureError("no triton for you")

    monkeypatch.setattr(compat, "prime_has_triton", refuse)
    before = _patched_objects()
    with pytest.raises(compat.CaptureError):
        with compile_only():
            pass
    _assert_same(before, _patched_objects())


# --- kernel identity -----------------------------------------------------------------------------------


@triton.jit  # KERNEL-LINE plain_kernel
def plain_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass


@triton.autotune(configs=[triton.Config({"BLOCK": 16})], key=["n"])  # KERNEL-LINE stacked_kernel
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def stacked_kernel(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pass


def _layered(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pass


# Every layer bound to a module-level name: the outermost must still win.
layered_jit = triton.jit(_layered)
layered_heuristics = triton.heuristics({"EVEN": lambda args: True})(layered_jit)
layered_autotune = triton.autotune(configs=[triton.Config({"BLOCK": 32})], key=["n"])(layered_heuristics)


def marker_line(marker: str) -> int:
    return next(n for n, text in enumerate(Path(__file__).read_text().splitlines(), 1) if text.endswith(marker))


def test_innermost_jit_walks_the_decorators() -> None:
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    assert isinstance(stacked_kernel, Autotuner) and isinstance(stacked_kernel.fn, Heuristics)
    inner = compat.innermost_jit(stacked_kernel)
    assert isinstance(inner, JITFunction) and inner.fn.__name__ == "stacked_kernel"
    assert compat.innermost_jit(stacked_kernel.fn) is inner
    assert compat.innermost_jit(plain_kernel) is plain_kernel
    assert compat.innermost_jit(layered_autotune) is layered_jit


def test_innermost_jit_of_something_else_is_none() -> None:
    assert compat.innermost_jit(lambda: None) is None
    loop = types.SimpleNamespace()
    loop.fn = loop  # a wrapper chain that never reaches a JITFunction
    assert compat.innermost_jit(loop) is None


def test_user_kernel_object_is_the_outermost_decorator() -> None:
    assert compat.user_kernel_object(compat.innermost_jit(stacked_kernel)) is stacked_kernel
    assert compat.user_kernel_object(layered_jit) is layered_autotune
    assert compat.user_kernel_object(plain_kernel) is plain_kernel
    layers = compat.decorator_stack(compat.user_kernel_object(layered_jit))
    assert [compat.layer_name(layer) for layer in layers] == ["autotune", "heuristics", "jit"]


def test_kernel_id_and_source() -> None:
    inner = compat.innermost_jit(stacked_kernel)
    assert compat.kernel_id(plain_kernel) == f"{__name__}.plain_kernel"
    assert compat.kernel_id(inner) == f"{__name__}.stacked_kernel"
    assert compat.kernel_id(layered_jit) == f"{__name__}._layered"
    # The first decorator's line: what Inductor prints after "# Original path:".
    assert compat.kernel_source(plain_kernel) == (__file__, marker_line("# KERNEL-LINE plain_kernel"))
    assert compat.kernel_source(inner) == (__file__, marker_line("# KERNEL-LINE stacked_kernel"))
    assert compat.constexpr_params(inner) == ("BLOCK", "EVEN")
