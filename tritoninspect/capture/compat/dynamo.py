"""Dynamo: compile ids, frames, the structured trace, the mutation-analysis fallback, bytecode hooks."""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import torch

from tritoninspect import textformats

# --- compile ids, frames ------------------------------------------------------


def current_compile_id() -> str | None:
    """'0/0', '1/0', '0/1' as torch prints it (torch._guards.CompileId.__str__).
    `CompileContext.current_compile_id()` is private, torch 2.11-2.14; PR not found."""
    from torch._guards import CompileContext

    cid = CompileContext.current_compile_id()
    return str(cid) if cid is not None else None


def frames(start: FrameType | None = None) -> Iterator[FrameType]:
    frame = start or sys._getframe(1)
    while frame is not None:
        yield frame
        frame = frame.f_back


def converts_frames(filename: str) -> bool:
    """A frame of Dynamo's conversion of a Python frame (torch/_dynamo/convert_frame.py, torch 2.11-2.14;
    the module predates them): in a traceback, the frames before it called the frame Dynamo traced, and
    those after it ran while Dynamo traced (a custom op's fake implementation, on fake tensors)."""
    return filename.replace("\\", "/").endswith("torch/_dynamo/convert_frame.py")


def never_compiled(fn: Callable[..., Any]) -> None:
    """Dynamo never compiles the frames of `fn` or of what it calls, as for torch's own
    functions (skipped files). For tritoninspect's own code that the user's code reaches
    (a watch behind `x.is_cuda`, a stand-in for a torch.cuda query): run eagerly while
    Dynamo's frame callback is still on (the rest of a frame it skipped, a call it broke the
    graph at), such a frame would be compiled as the user's, and a graph break in it reported
    as theirs. `set_code_exec_strategy(code, FrameExecStrategy(SKIP, SKIP))`, what
    `torch._dynamo.eval_frame.skip_code` does with (SKIP, DEFAULT), torch 2.11-2.14; PR not
    found. Per code object (every closure made from it at once), and kept: the code is ours.
    At run time what `torch.compiler.disable(fn)` does, without its wrapper (and the eval-frame
    switching it does) around every eager `x.device` read."""
    from torch._dynamo.eval_frame import set_code_exec_strategy
    from torch._dynamo.types import FrameAction, FrameExecStrategy

    set_code_exec_strategy(fn.__code__, FrameExecStrategy(FrameAction.SKIP, FrameAction.SKIP))


def interpreted_module(frame: FrameType) -> Any:
    """The GraphModule a `torch.fx.Interpreter` frame is running, else None.

    An autograd.Function that Dynamo traced runs its backward subgraph
    (`bwd_body_0`) through `torch.fx.Interpreter(bwd).run(...)` in
    `AutogradFunctionApply` (torch/_functorch/autograd_function.py, torch 2.13
    and 2.14; earlier releases call the subgraph, whose own code file then
    shows), so the launch's frames name the interpreter, not the graph.
    """
    if frame.f_code.co_name != "run_node" or not frame.f_code.co_filename.endswith("interpreter.py"):
        return None
    interpreter = frame.f_locals.get("self")
    return interpreter.module if isinstance(interpreter, torch.fx.Interpreter) else None


def disabled_function(frame: FrameType) -> Any:
    """The function a `torch.compiler.disable` wrapper frame is calling, else None.

    `DisableContext.__call__` wraps the function in a closure `_fn` whose free variables are the
    context (`self`) and the function (`fn`) (torch/_dynamo/eval_frame.py, torch 2.11-2.14); a
    compiled function's `_fn` closes over an `OptimizeContext` instead. Frame locals: no API, PR
    not found."""
    code = frame.f_code
    if code.co_name != "_fn" or not code.co_filename.endswith("eval_frame.py"):
        return None
    from torch._dynamo.eval_frame import DisableContext

    found = frame.f_locals
    return found.get("fn") if isinstance(found.get("self"), DisableContext) else None


def autograd_function_backward(frame: FrameType) -> type | None:
    """The autograd.Function class whose backward the autograd engine runs from this frame, else None.

    The engine calls a Python Function's backward through `BackwardCFunction.apply(self, *args)`, and
    `self._forward_cls` is the user's Function (torch/autograd/function.py, torch 2.0-2.14)."""
    code = frame.f_code
    if code.co_name != "apply" or not code.co_filename.replace("\\", "/").endswith("torch/autograd/function.py"):
        return None
    cls = getattr(frame.f_locals.get("self"), "_forward_cls", None)
    return cls if isinstance(cls, type) else None


def autograd_function_forward(frame: FrameType) -> type | None:
    """The autograd.Function class whose forward runs eagerly from this frame, else None.

    `Function.apply` is a classmethod that calls the forward through `super().apply(*args)` (C++, which runs
    it with grad off), so the frame of `apply` holds the class as `cls` (torch/autograd/function.py, torch
    2.0-2.14); a compiled training graph's own `CompiledFunction.apply` is one too (its forward is torch's)."""
    code = frame.f_code
    if code.co_name != "apply" or not code.co_filename.replace("\\", "/").endswith("torch/autograd/function.py"):
        return _forward_of_its_ctx(frame)
    cls = frame.f_locals.get("cls")
    return cls if isinstance(cls, type) and issubclass(cls, torch.autograd.Function) else None


def _forward_of_its_ctx(frame: FrameType) -> type | None:
    """The Function whose own `forward(ctx, ...)` this frame runs, found from its `ctx`: torch 2.14's
    `Function.apply` is C++ (`_C._FunctionBase.__dict__["apply"]`, torch/autograd/function.py), no frame of
    its own. An eager ctx is an instance of the Function's backward class, whose `_forward_cls` is the
    Function (torch 2.0-2.14). A forward without ctx (`setup_context` style) is not found this way."""
    code = frame.f_code
    if code.co_name != "forward" or not code.co_argcount:
        return None
    cls = getattr(type(frame.f_locals.get(code.co_varnames[0])), "_forward_cls", None)
    if not (isinstance(cls, type) and issubclass(cls, torch.autograd.Function)):
        return None
    forward = inspect.unwrap(cls.__dict__.get("forward", getattr(cls, "forward", None)))
    own = getattr(getattr(forward, "__func__", forward), "__code__", None)
    # The same function, not the same code object: Dynamo runs a frame it transformed with code of its own.
    same = own is not None and (own.co_filename, own.co_firstlineno) == (code.co_filename, code.co_firstlineno)
    return cls if same else None


def graph_module_code_file(gm: torch.fx.GraphModule) -> str:
    """The file name of `gm`'s generated forward (e.g. "<eval_with_key>.3").

    Dynamo hands backends a _LazyGraphModule whose forward is a stub until
    first called; generate the real code first so the name we remember is the
    one launches will run under. `_LazyGraphModule.real_recompile` since
    https://github.com/pytorch/pytorch/pull/117911 (torch 2.3), unchanged to 2.14.
    """
    real_recompile = getattr(gm, "real_recompile", None)
    if callable(real_recompile):
        real_recompile()
    return gm.forward.__code__.co_filename


# --- mutation analysis fallback ----------------------------------------------

#: Logger and text of the fallback warning (triton_kernel_wrap.py, torch 2.11-2.14).
#: 2.11 names the function identify_mutated_tensors, 2.13-2.14
#: identify_accessed_tensors: the analysis of reads as well as writes
#: (analyze_kernel_access) came with https://github.com/pytorch/pytorch/pull/173662
#: ("User kernel unary epilogue fusion"), most likely the rename too (its diff
#: was not checked). Both names are kept until 2.11 is dropped.
MUTATION_LOGGER = "torch._dynamo"
MUTATION_FALLBACK_TEXT = "assuming every input is mutated"
_MUTATION_FUNCS = ("identify_accessed_tensors", "identify_mutated_tensors")


def kernel_under_mutation_analysis() -> Any:
    """The kernel object being analysed, read from the analysis frame (its
    local `kernel`, torch 2.11-2.14); the warning itself names no kernel."""
    for frame in frames():
        if frame.f_code.co_name in _MUTATION_FUNCS:
            return frame.f_locals.get("kernel")
    return None


def mutation_fallback_location(cause: BaseException | None) -> tuple[str | None, int | None]:
    """(file, line) in the kernel of the op that made mutation analysis give up.

    The exception names a TTIR op ("... do not know how to analyze:
    tt.elementwise_inline_asm", triton_kernel_wrap.py analyze_kernel_access,
    2.11-2.14); the analysis frame still holds the TTIR module (local
    `ttir_module`, 2.13-2.14; `ttir_module` in 2.11's identify_mutated_tensors
    too), whose `loc(...)` attributes lead back to the kernel source. Frame
    locals are no API: PR not found.
    """
    op = re.search(r"\btt\.\w+", str(cause or ""))
    if op is None:
        return None, None
    for frame in frames():
        if frame.f_code.co_name in _MUTATION_FUNCS:
            module = frame.f_locals.get("ttir_module")
            return textformats.ttir.ttir_op_location(str(module), op.group(0)) if module is not None else (None, None)
    return None, None


# --- structured trace ---------------------------------------------------------

#: torch/_logging/_internal.py: trace_structured emits here whenever the
#: logger has a handler (TORCH_TRACE not needed). Added by
#: https://github.com/pytorch/pytorch/pull/120289 (torch 2.3), same to 2.14.
TRACE_LOGGER = "torch.__trace"


def traced_stack() -> tuple[str, ...]:
    """The frames Dynamo was tracing when the graph break it is logging now happened, outermost
    first, as "file:line in func"; () outside a trace.

    Dynamo logs `dynamo_graph_break_reason` inside the `except` that caught the break
    (symbolic_convert.py `log_graph_break`, ~line 5026 in torch 2.13, ~line 5270 in 2.14: its
    payload ends with `traceback.format_exc()`), and builds the payload's "User code traceback"
    from that exception's `real_stack`, or `TracingContext.extract_stack()` when it has none: read
    the same here, before torch's `collapse_resume_frames` edits it. `real_stack`: exc.py
    Unsupported / torch/_guards.py `current_frame`, torch 2.11-2.14; PR not found.
    """
    from torch._guards import TracingContext

    stack = getattr(sys.exc_info()[1], "real_stack", None)
    if stack is None:
        stack = TracingContext.extract_stack()
    return tuple(f"{f.filename}:{f.lineno} in {f.name}" for f in stack)


def stack_above_trace() -> tuple[str, ...]:
    """The Python frames that called the frame Dynamo is converting, outermost first, as
    "file:line in func"; () where torch has no such helper.

    The payload's "User code traceback" starts with them (symbolic_convert.py `log_graph_break`:
    `get_stack_above_dynamo() + user_stack`, then `collapse_resume_frames`; torch/_dynamo/exc.py,
    torch 2.11-2.14; PR not found). On torch 2.14 `autograd.Function.apply` is C++: a model's
    `forward` calling `Fn.apply` is followed directly by the Function's `forward`, and the collapse,
    meant for resume functions, drops the model's frame (on 2.11-2.13 function.py's `apply` frame
    stood between them). Read here, the same way, before that collapse."""
    above = getattr(torch._dynamo.exc, "get_stack_above_dynamo", None)
    if above is None:
        return ()
    return tuple(f"{f.filename}:{f.lineno} in {f.name}" for f in above())


def converted_function() -> str | None:
    """The name of the code Dynamo is converting (`torch_dynamo_resume_in_forward_at_27` for a resume
    function), read from the instruction translator tracing it (`InstructionTranslator.current_tx()`,
    its `f_code`: torch/_dynamo/symbolic_convert.py, torch 2.11-2.14; PR not found): torch's collapse of
    resume frames renames the frame in the traceback it logs. None outside a trace."""
    from torch._dynamo.symbolic_convert import InstructionTranslator

    try:
        tx = InstructionTranslator.current_tx()
    except AttributeError:  # no translator on this thread
        return None
    code = getattr(tx, "f_code", None)
    return code.co_name if code is not None else None


def trace_compile_id(record: Any) -> str | None:
    # `record.metadata` frame_id / frame_compile_id (pytorch/pytorch#120289), 2.11-2.14.
    meta = getattr(record, "metadata", {})
    if "frame_id" not in meta:
        return None
    return f"{meta['frame_id']}/{meta['frame_compile_id']}"


def trace_attempt(record: Any) -> int:
    """Dynamo's attempt at the compile a trace record was logged in (`record.metadata["attempt"]`, from
    `CompileContext.current_trace_id()`; torch._guards.TraceId prints it as `1/0_1`), torch 2.11-2.14;
    0 when the record has none."""
    attempt = getattr(record, "metadata", {}).get("attempt")
    return attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else 0


def trace_event(record: Any) -> tuple[str, str | None, dict[str, Any]]:
    """(event name, artifact name, event metadata) of a trace record: the
    metadata's first key is the event (pytorch/pytorch#120289), torch 2.11-2.14."""
    meta = getattr(record, "metadata", {})
    name = next(iter(meta), "")
    body = meta.get(name) if isinstance(meta.get(name), dict) else {}
    sub = body.get("name") if name == "artifact" else None
    return name, sub, body


# --- Dynamo bytecode hooks (for --decompile) ----------------------------------------


def register_bytecode_hook(hook: Any) -> Any:
    """Call `hook(original_code, transformed_code)` for every frame Dynamo
    converts; returns a handle with `.remove()`. torch/_dynamo/convert_frame.py
    `register_bytecode_hook`, added for depyf by
    https://github.com/pytorch/pytorch/pull/110714 (torch 2.2), unchanged to 2.14."""
    from torch._dynamo.convert_frame import register_bytecode_hook as register

    return register(hook)


def node_user_line(node: torch.fx.Node) -> str | None:
    """"file:line" of the user's innermost frame in the node's `meta["stack_trace"]` (torch's
    formatted stack of the traced call, `File "...", line N, in f` lines; torch 2.11-2.14), or None."""
    trace = node.meta.get("stack_trace") or ""
    places = re.findall(r'File "([^"]+)", line (\d+)', str(trace))
    users = [(f, n) for f, n in places if textformats.origin.is_user_file(f)]
    return f"{users[-1][0]}:{users[-1][1]}" if users else None
