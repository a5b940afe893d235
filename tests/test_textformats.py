"""The torch-free text parsers (tritoninspect.textformats): graph-break reasons, output code, TTIR, paths.

Graph-break payloads below are real `dynamo_graph_break_reason` artifacts (torch 2.13; 2.11 emits the
same forms), with paths replaced and torch's own traceback shortened; where a form could not be
triggered on purpose it is built with torch's own formatter or format string (named next to it).
Output code comes from the saved captures (tests/fixtures/capture_*.json, CPU) and the gpu-mode
reports in tests/fixtures/gpu/ (torch 2.11, H200).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _expect import REPO
from tritoninspect.model.records import Capture, OutputKernel
from tritoninspect.textformats import breaks, origin, output_code, ttir

FIXTURES = Path(__file__).resolve().parent / "fixtures"
USER = "/home/user/proj/model.py"
TORCH = "/opt/venv/lib/python3.11/site-packages/torch"
VENV = "/home/user/venv/lib/python3.11/site-packages"


def test_importing_the_parsers_imports_neither_torch_nor_triton() -> None:
    code = (
        "import sys, tritoninspect.textformats\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'triton')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


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
    reason, file, line, stack, skipped = breaks.parse_graph_break(GRAPH_BREAK_AT)
    assert (file, line, skipped) == (USER, 12, False)
    assert reason.startswith("Call to `torch._dynamo.graph_break()`")  # the preamble line is dropped
    assert "User code traceback" not in reason and "Traceback" not in reason
    assert stack == (f"{USER}:35 in <module>", f"{USER}:12 in f1")  # torch's frames are not the user's


def test_unresumable_graph_break_skips_the_frame() -> None:
    reason, file, line, _, skipped = breaks.parse_graph_break(GRAPH_BREAK_AT_SKIPPED)
    assert (file, line) == (USER, 22)
    assert skipped is True


def test_skip_frame_form() -> None:
    reason, file, line, stack, skipped = breaks.parse_graph_break(SKIP_FRAME)
    assert (file, line, skipped) == (USER, 22, True)
    assert stack == (f"{USER}:22 in f2",)
    assert reason.startswith("Graph break: torch.compile cannot properly resume from this graph break")


def test_skip_frame_reason_names_the_error() -> None:
    reason = breaks.parse_graph_break(SKIP_FRAME)[0]
    assert "Call to `torch._dynamo.graph_break()`" in reason


def test_wont_convert_form() -> None:
    reason, file, line, _, skipped = breaks.parse_graph_break(WONT_CONVERT)
    assert reason == "RuntimeError: Cannot access data pointer of Tensor (e.g. FakeTensor)"
    assert (file, line, skipped) == (USER, 4, True)


@pytest.mark.parametrize("payload", ["something torch never said\nsecond line", "  \n", ""])
def test_unknown_payload_degrades_to_its_first_line(payload: str) -> None:
    reason, file, line, stack, skipped = breaks.parse_graph_break(payload)
    assert reason == (payload.strip().splitlines() or [""])[0]
    assert (file, line, stack, skipped) == (None, None, (), False)


def test_unknown_payload_keeps_a_user_frame() -> None:
    payload = f'Something new\n  File "{USER}", line 7, in forward\n    y = f(x)\n'
    assert breaks.parse_graph_break(payload) == ("Something new", USER, 7, (f"{USER}:7 in forward",), False)


#: The package directory of the tritoninspect under test (its hooks are what Dynamo must never compile).
TOOL = str(Path(origin.__file__).resolve().parents[1])


def test_a_break_in_tritoninspect_s_own_code_is_told_apart_from_the_model_s() -> None:
    """Found on /tmp/hostile3/probe_assert.py: after the model's frame was skipped, Dynamo compiled the
    tool's `x.is_cuda` watch as a frame of its own and broke there; the report showed that break as the
    model's. Where Dynamo broke, or a frame it traced, names the tool's code: not the rest of the
    traceback, where the tool's CLI and capture always are (they call the model)."""
    hook = f"{TOOL}/capture/compat/device_probes.py"
    in_hook = GRAPH_BREAK_AT.replace(f"at {USER}:12", f"at {hook}:174")
    assert breaks.tool_frame(in_hook) == f"{hook}:174"
    traced = (f"{TOOL}/capture/compat/versions.py:20 in _package_roots", "<frozen posixpath>:451 in _joinrealpath")
    lstat = GRAPH_BREAK_AT.replace(f"at {USER}:12", "at <frozen posixpath>:451")
    assert breaks.tool_frame(lstat, traced) == traced[0]
    cli = GRAPH_BREAK_AT.replace("User code traceback:\n", f'User code traceback:\n  File "{TOOL}/cli.py", line 74, in main\n')
    assert breaks.tool_frame(cli, (f"{USER}:12 in f1",)) is None
    assert breaks.tool_frame(WONT_CONVERT) is None
    assert origin.is_tool_file(hook) and not origin.is_tool_file(USER) and not origin.is_tool_file("<string>")


# --- graph breaks: details, library frames ----------------------------------------------------

LIB = f"{VENV}/kernlib/ops.py"
TRITON_JIT = f"{VENV}/triton/runtime/jit.py"

#: The layout symbolic_convert.py (torch 2.13) logs, for a break Dynamo cannot resume from.
NO_RESUME = f"""Graph break in user code at {USER}:16
Graph Break Reason: Encountered graph break that we cannot resume from. Compiling up to the previous resumable state, then skipping the rest of the function. Graph break encountered:

Reconstruction failure
  Explanation: Dynamo has no bytecode reconstruction implemented for sourceless variable TritonKernelVariable().
  Hint: This graph break may have been caused by an earlier graph break.

  Developer debug context: TritonKernelVariable()

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0092.html

User code traceback:
  File "{USER}", line 30, in <module>
    out = net(x)
  File "{USER}", line 16, in forward
    k[grid](x, out, n)

Traceback (most recent call last):
  File "{VENV}/torch/_dynamo/symbolic_convert.py", line 1657, in step
    raise
"""

#: A break in triton's launch wrapper, in a frame Dynamo then skips.
IN_TRITON = f"""Graph break in user code at {TRITON_JIT}:370
Graph Break Reason: Failed to handle graph break gracefully. Skipping the function and falling back to eager. Graph break encountered:

triton kernel unsupported feature
  Explanation: Encountered triton kernel unsupported feature: pre_hook and post_hook are not supported in triton.Autotune or triton.Config


  Developer debug context: 

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0361.html

User code traceback:
  File "{USER}", line 30, in <module>
    out = net(x)
  File "{USER}", line 19, in forward
    k[grid](y, out, n)
  File "{TRITON_JIT}", line 370, in <lambda>
    return lambda *args, **kwargs: self.run(grid=grid, warmup=False, *args, **kwargs)
"""

#: A break inside an installed library the user's code called.
IN_LIBRARY = f"""Graph break in user code at {LIB}:21
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Unsupported Tensor.item() call with capture_scalar_outputs=False
  Explanation: Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False.

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html

User code traceback:
  File "{USER}", line 14, in forward
    return kernlib.scaled(h, factor) + 1
  File "{LIB}", line 21, in scaled
    f = float(factor.item())
"""


def test_details_of_a_break_dynamo_cannot_resume_from() -> None:
    details = breaks.graph_break_details(NO_RESUME)
    assert details["headline"] == "Reconstruction failure"
    assert (details["gb_id"], details["doc_url"]) == (
        "GB0092", "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0092.html"
    )
    assert details["skipped_rest"] is True and details["library_frame"] is None
    assert breaks.parse_graph_break(NO_RESUME)[4] is False  # the frame itself was not skipped


def test_break_in_triton_reports_the_users_line() -> None:
    reason, file, line, stack, skipped = breaks.parse_graph_break(IN_TRITON)
    assert (file, line, skipped) == (USER, 19, True)
    details = breaks.graph_break_details(IN_TRITON)
    assert details["library_frame"] == f"{TRITON_JIT}:370 in <lambda>"
    # The generic type is completed by the explanation that says what is unsupported.
    assert details["headline"] == (
        "triton kernel unsupported feature: pre_hook and post_hook are not supported in triton.Autotune or "
        "triton.Config"
    )
    assert details["skipped_rest"] is False


def test_break_in_a_library_names_the_library_frame() -> None:
    _, file, line, stack, _ = breaks.parse_graph_break(IN_LIBRARY)
    assert (file, line) == (USER, 14)
    assert stack[-1] == f"{LIB}:21 in scaled"  # the library frame stays in the stack
    details = breaks.graph_break_details(IN_LIBRARY)
    assert details["library_frame"] == f"{LIB}:21 in scaled"
    assert details["headline"] == "Unsupported Tensor.item() call with capture_scalar_outputs=False"


LIB_MODULE = f"{VENV}/kernlib/modules.py"
LIB_FUNCTIONAL = f"{VENV}/kernlib/functional.py"

#: torch 2.13, the model's `forward` calling a library module's `forward` that reaches a disabled
#: dispatcher (tests/reallib/liger_layer_norm.py, compile 0/0): collapse_resume_frames kept only
#: the second of the two `forward` frames, so the traceback has no frame of the model.
COLLAPSED = f"""Graph break in user code at {LIB_FUNCTIONAL}:268
Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):

Skip calling `torch.compiler.disable()`d function
  Explanation: Skip calling function `<function dispatch at 0x7f4ec70e9440>` since it was wrapped with `torch.compiler.disable` (reason: None)

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0098.html

User code traceback:
  File "/home/user/proj/run.py", line 9, in <module>
    out = net(x)
  File "{TORCH}/nn/modules/module.py", line 1789, in _call_impl
    return forward_call(*args, **kwargs)
  File "{LIB_MODULE}", line 52, in forward
    return _functional_layer_norm(
  File "{LIB_FUNCTIONAL}", line 268, in layer_norm
    return dispatch(

{TORCH_TRACEBACK}"""
#: What Dynamo was tracing (the exception's real_stack), the model's frame first.
TRACED = (f"{USER}:27 in forward", f"{LIB_MODULE}:52 in forward", f"{LIB_FUNCTIONAL}:268 in layer_norm")


def test_a_break_under_a_collapsed_forward_is_at_the_users_line() -> None:
    _, file, line, stack, _ = breaks.parse_graph_break(COLLAPSED, TRACED)
    assert (file, line) == (USER, 27)
    assert stack == ("/home/user/proj/run.py:9 in <module>", *TRACED)
    assert breaks.graph_break_details(COLLAPSED)["library_frame"] == f"{LIB_FUNCTIONAL}:268 in layer_norm"
    # Without what Dynamo traced, the payload alone names the innermost own frame it has.
    assert breaks.parse_graph_break(COLLAPSED)[1:3] == ("/home/user/proj/run.py", 9)


def test_traced_frames_go_back_in_order() -> None:
    stack = ("a.py:1 in main", "b.py:5 in forward", "c.py:9 in helper")
    traced = ("m.py:28 in torch_dynamo_resume_in_forward_at_27", "b.py:5 in forward", "c.py:9 in helper", "d.py:3 in inner")
    assert breaks.with_traced_frames(stack, traced) == (
        "a.py:1 in main", "m.py:28 in forward", "b.py:5 in forward", "c.py:9 in helper", "d.py:3 in inner"
    )
    assert breaks.with_traced_frames(stack, ()) == stack
    assert breaks.with_traced_frames(stack, ("b.py:5 in torch_dynamo_resume_in_forward_at_4",)) == stack


def test_callers_of_the_traced_frame_go_back_but_a_resumed_one() -> None:
    """torch 2.14's C++ `Function.apply` leaves the model's `forward` right above the Function's own
    `forward`: that caller stays, as a caller `forward` of the same file (a submodule's) does; a caller
    that the converted resume function carries on goes, also where torch's traceback renamed the traced
    frame to the function it resumes; the traced frames stay as they are."""
    above = ("run.py:9 in <module>", "m.py:37 in forward")
    traced = ("lib.py:548 in forward", "lib.py:389 in helper")
    assert breaks.with_callers(above, traced, "forward") == above + traced
    assert breaks.with_callers(("m.py:51 in forward",), ("m.py:36 in forward",), "forward") == (
        "m.py:51 in forward", "m.py:36 in forward")
    resumed = ("m.py:55 in forward", "c.py:9 in helper")  # the resume function's frame, renamed
    assert breaks.with_callers(("m.py:54 in forward",), resumed, "torch_dynamo_resume_in_forward_at_54") == resumed
    chain = ("m.py:54 in forward", "m.py:60 in torch_dynamo_resume_in_forward_at_54")
    assert breaks.with_callers(chain, resumed, "torch_dynamo_resume_in_forward_at_60") == resumed
    assert breaks.with_callers(above, (), None) == above


def test_unknown_layout_gives_a_headline_and_no_id() -> None:
    details = breaks.graph_break_details("something torch never said\nmore")
    assert details == {"headline": "something torch never said", "gb_id": None, "doc_url": None,
                       "skipped_rest": False, "library_frame": None}


def test_library_and_own_files() -> None:
    assert origin.is_library_file(LIB) and origin.is_user_file(LIB) and not origin.is_own_file(LIB)
    assert origin.is_own_file(USER) and not origin.is_library_file(USER)
    assert not origin.is_own_file(TRITON_JIT)
    assert origin.is_library_file(os.__file__)  # the standard library


# --- output code: user kernels and custom ops ------------------------------------------------

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
    kernels, ops = output_code.parse_output_code(OUTPUT_CODE)
    assert kernels == (
        OutputKernel("add_kernel_0", "add_kernel", USER, 13, True),
        OutputKernel("unused_kernel_0", "unused_kernel", "/home/user/proj/other.py", 40, False),
    )
    assert ops == ("mylib::opaque_scale",)  # once, and never torch's own namespaces


def test_parse_output_code_without_user_kernels() -> None:
    assert output_code.parse_output_code("def call(args):\n    return torch.ops.aten.sin.default(args[0])\n") == ((), ())


# A user kernel as torch 2.13 defines it (tests/assets/globals_kernel.py, plus a backslash and a
# nested @jit helper): after the kernel's own function come its helper, the libdevice name it
# imports and its module-level tl.constexpr, the import with no blank line before it.
KERNEL_SOURCE = r"""def _rsqrt_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + \
        tl.arange(0, BLOCK)
    mask = offsets < n
    x = _load(x_ptr + offsets, mask)
    tl.store(out_ptr + offsets, rsqrt(x) * _SCALE, mask=mask)
"""
GLOBALS_CODE = r"""
# Original path: /home/user/proj/globals_kernel.py:15
_rsqrt_scale_kernel_0 = async_compile.triton('_rsqrt_scale_kernel', '''
import triton
import triton.language as tl

@triton_heuristics.user_autotune(
    configs=[],
    inductor_meta={'kernel_name': '_rsqrt_scale_kernel_0'},
    triton_meta={'signature': {'x_ptr': '*fp32', 'out_ptr': '*fp32', 'n': 'i32', 'BLOCK': 'constexpr'}},
    filename=__file__,
    custom_kernel=True,
)
@triton.jit
def _rsqrt_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + \\
        tl.arange(0, BLOCK)
    mask = offsets < n
    x = _load(x_ptr + offsets, mask)
    tl.store(out_ptr + offsets, rsqrt(x) * _SCALE, mask=mask)

@triton.jit
def _load(ptr, mask):
    return tl.load(ptr, mask=mask)
from triton.language.extra.libdevice import rsqrt as rsqrt

_SCALE: triton.language.core.constexpr = tl.constexpr(2.0)
''', device_str='cpu')
"""


def test_what_inductor_appends_to_a_user_kernel_is_no_rewrite() -> None:
    """Nested functions, imported names and module-level constexprs after the kernel's function,
    and escaped backslashes, are Inductor's emission of the kernel as written."""
    assert output_code.kernel_function(GLOBALS_CODE.split("'''")[1], ("_rsqrt_scale_kernel",)) == KERNEL_SOURCE.strip()
    assert not output_code.user_kernel_rewritten(GLOBALS_CODE, "_rsqrt_scale_kernel_0", "_rsqrt_scale_kernel",
                                                 KERNEL_SOURCE)


def test_a_rewritten_user_kernel_is_found() -> None:
    fused = GLOBALS_CODE.replace("tl.store(out_ptr + offsets, rsqrt(x) * _SCALE, mask=mask)",
                                 "tl.store(out_ptr + offsets, tl.cos(rsqrt(x) * _SCALE) * 2, mask=mask)")
    assert output_code.user_kernel_rewritten(fused, "_rsqrt_scale_kernel_0", "_rsqrt_scale_kernel", KERNEL_SOURCE)
    # Renamed to the Inductor name (config.triton.unique_user_kernel_names), otherwise as written.
    renamed = GLOBALS_CODE.replace("def _rsqrt_scale_kernel(", "def _rsqrt_scale_kernel_0(")
    assert not output_code.user_kernel_rewritten(renamed, "_rsqrt_scale_kernel_0", "_rsqrt_scale_kernel", KERNEL_SOURCE)


@pytest.fixture(scope="module")
def aten_ops() -> frozenset[str]:
    """The op names Inductor joins into fused kernel names: derived from live torch, so passed in."""
    from tritoninspect.capture import compat

    return compat.inductor.aten_op_names()


def load(name: str) -> Capture:
    return Capture.from_json((FIXTURES / f"capture_{name}.json").read_text(encoding="utf-8"))


def gpu_code(name: str) -> str:
    report = json.loads((FIXTURES / "gpu" / f"{name}.json").read_text(encoding="utf-8"))
    (code,) = [g["code"] for g in report["graphs"] if g["stage"] == "output_code"]
    return code


# --- output code: what `call()` launches ------------------------------------------------------


def test_parse_cpu_output_code() -> None:
    code = load("add_raw").output_code[0].code
    calls = output_code.parse_code_calls(code)
    # C++ launches carry no comment: without Inductor's records the ops are unknown, never read off the name.
    assert [(c.kind, c.ops, c.ops_source) for c in calls] == [
        ("inductor", (), "unknown"), ("user", (), ""), ("inductor", (), "unknown"),
    ]
    sin, user, cos = calls
    assert [(a.param, a.access) for a in sin.args] == [("in_ptr0", "r"), ("out_ptr0", "w")]
    # A user kernel's parameters are its own names; whether it writes them is not in the text.
    assert [(a.param, a.access) for a in user.args] == [("x_ptr", ""), ("y_ptr", ""), ("out_ptr", "")]
    assert sin.args[1].buffer == user.args[0].buffer
    assert all(code.splitlines()[c.line - 1].strip().startswith(c.name) for c in calls)


def test_parse_code_calls_takes_inductor_records_per_call_in_order() -> None:
    code = "\n".join([
        "cpp_fused_add_mul_softmax_cop_0 = async_compile.cpp_pybinding(['float*'], r'''",
        'extern "C" void kernel(const float* in_ptr0, float* out_ptr0) {}',
        "''')",
        "def call(args):",
        "    arg0_1, = args",
        "    buf0 = empty_strided_cpu((64, ), (1, ), torch.float32)",
        "    cpp_fused_add_mul_softmax_cop_0(arg0_1, buf0)",
        "    buf1 = torch.ops.copdemo.softmax_cop.default(buf0)",
        "    buf2 = empty_strided_cpu((64, ), (1, ), torch.float32)",
        "    cpp_fused_add_mul_softmax_cop_0(buf1, buf2)",
        "    return (buf2, )",
    ])
    recorded = {"cpp_fused_add_mul_softmax_cop_0": [("add", "mul"), ("mul",)]}
    first, op, second = output_code.parse_code_calls(code, recorded)
    assert (first.ops, first.ops_source) == (("add", "mul"), "inductor")
    assert (op.kind, op.ops, op.ops_source) == ("extern", (), "")
    # The same kernel called again (Inductor reuses the name for identical source): its own record.
    assert (second.ops, second.ops_source) == (("mul",), "inductor")
    assert recorded["cpp_fused_add_mul_softmax_cop_0"] == [("add", "mul"), ("mul",)]  # not consumed


def test_parse_gpu_output_code_with_comments() -> None:
    calls = output_code.parse_code_calls(gpu_code("add_raw"))
    assert [c.kind for c in calls] == ["inductor", "user", "inductor"]
    assert all(c.name.startswith("triton_") for c in calls if c.kind == "inductor")
    assert calls[2].ops == ("cos", "mul") and calls[2].source_nodes == ("cos", "mul")
    assert calls[2].ops_source == "comment"
    # The comment above a user kernel repeats its neighbour's: it is not the kernel's.
    assert calls[1].ops == () and calls[1].source_nodes == ()


def test_parse_gpu_extern_call_alias_and_inplace_reuse() -> None:
    sin, op, cos = output_code.parse_code_calls(gpu_code("custom_op"))
    assert (op.kind, op.name) == ("extern", "torch.ops.tisample_custom_op.add.default")
    out = next(a for a in op.args if a.param == "out")
    (inout,) = cos.args
    # buf1 = op(...); buf2 = buf1; buf3 = buf2  # reuse; cos_mul updates buf3 in place.
    assert (inout.access, inout.reuses) == ("rw", out.storage)
    assert sin.ops == ("sin", "tisample_custom_op.add")  # Inductor's comment, before the analysis filters it
    assert sin.ops_source == "comment"


def test_split_call_args() -> None:
    assert output_code.split_call_args("buf0, reinterpret_tensor(buf1, (64, ), (1, ), 0), 64, stream=s0") == [
        "buf0", "reinterpret_tensor(buf1, (64, ), (1, ), 0)", "64", "stream=s0",
    ]


# --- TTIR ------------------------------------------------------------------------------------------


def test_ttir_op_location_follows_named_locations() -> None:
    text = "\n".join([
        '#loc = loc("/k.py":4:0)',
        "module {",
        '    %y = tt.elementwise_inline_asm "mov.b32 $0, $1;" {pure = false} %x : tensor<16xf32> loc(#loc22)',
        "}",
        '#loc8 = loc("/k.py":9:61)',
        '#loc22 = loc("y"(#loc8))',
    ])
    assert ttir.ttir_op_location(text, "tt.elementwise_inline_asm") == ("/k.py", 9)
    assert ttir.ttir_op_location(text, "tt.store") == (None, None)


@pytest.mark.parametrize("line, probes", [
    ('if x.device.type == "cuda":', True),
    ("if x.device.type != 'cuda':", True),
    ('return x.device == torch.device("cuda")', True),
    ('if x.device.type in ("cuda", "xpu"):', True),
    ('if "cuda" == x.device.type:', True),
    ('ok = x.device.type == "cuda:0"', True),
    ("y = torch.empty(n, device=x.device)", False),
    ('if x.device.type == "cpu":', False),
    ('pass  # x.device.type == "cuda"', False),
    ('dev = "cuda" if torch.cuda.is_available() else "cpu"', False),
])
def test_a_line_comparing_a_tensor_s_device_with_cuda(line: str, probes: bool) -> None:
    from tritoninspect.textformats.device_checks import compares_device_with_cuda

    assert compares_device_with_cuda(line) is probes
