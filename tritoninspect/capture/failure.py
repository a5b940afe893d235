"""Turn the exception that stopped a capture into a plain `Failure`.

Dynamo and Inductor wrap what went wrong (`BackendCompilerFailed`,
`InductorError`, `TorchRuntimeError`): the record names the innermost exception,
the stage the recorder was in when it escaped, the user's innermost frame and
the innermost torch or Triton frame, so a report can say where it failed.
"""

from __future__ import annotations

import os
import re
import traceback
from dataclasses import dataclass
from tritoninspect.capture import compat
from tritoninspect.model.errors import ProcessExit
from tritoninspect.model.records import Failure
from tritoninspect.textformats.breaks import original_function
from tritoninspect.textformats.origin import is_library_file, is_own_file

#: Lines of the innermost exception's message kept in the record.
MAX_MESSAGE_LINES = 40
#: And characters per line: a message of megabytes (a tensor's repr, generated text) stays readable.
MAX_LINE_CHARS = 2000

#: Dynamo appends the traced user frames to its errors (torch/_dynamo/exc.py
#: `format_error_msg_verbose` / `augment_exc_message`, 2.0-2.14): "from user code:" then
#: `  File "path", line N, in fn` entries.
_USER_CODE_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@dataclass
class Progress:
    """Where a capture is, as the recorder and the call loop see it."""

    #: Outside the backend: "run" (forward call) or "backward".
    call: str = "run"
    #: The exception that escaped the recording backend, with its stage, compile id and part.
    backend_error: BaseException | None = None
    backend_stage: str = ""
    backend_cid: str | None = None
    backend_part: str = ""
    #: The last frame compile Dynamo reported failed (`compilation_metrics` trace
    #: event: compile id, exception class name, message).
    failed_compile: tuple[str, str, str] | None = None
    #: Calls with backward requested whose outputs held no tensor requiring grad: backward
    #: did not run for them (a raw kernel launch, for one, cuts autograd).
    backward_skipped: int = 0

    def compile_failed(self, cid: str, fail_type: str, fail_reason: str) -> None:
        self.failed_compile = (cid, fail_type, fail_reason)

    def backend_failed(self, exc: BaseException, stage: str, cid: str | None, part: str) -> None:
        """Remember the first (innermost) exception that left a compiler stage."""
        if self.backend_error is None:
            self.backend_error = exc
            self.backend_stage, self.backend_cid, self.backend_part = stage, cid, part


def failure_record(exc: BaseException, progress: Progress) -> Failure:
    """The record of `exc`, which ended a capture in the state `progress` describes."""
    chain = _chain(exc)
    stage, cid, part = _stage(chain, progress)
    for error in chain:
        details = compat.triton_compile.compile_error_details(error)
        if details is not None:
            return _kernel_compile_record(chain, error, details, cid, part)
    inner = chain[-1]
    stack = _user_stack(chain)
    worker = compat.triton_compile.worker_compile_error(inner)
    if worker is not None:  # a GPU's compile worker refused the kernel: its error, not the worker's traceback
        return Failure(stage="kernel_compile", compile_id=cid, part=part, exc_type="CompilationError",
                       message=worker, user_frame=stack[-1] if stack else None, user_stack=stack)
    kernel = None
    if isinstance(inner, compat.kernel_copies.KernelCopyNameError):  # as a GPU's compile of the copy fails
        stage, kernel = "kernel_compile", inner.kernel
    return Failure(
        stage=stage,
        kernel=kernel,
        compile_id=cid,
        part=part,
        exc_type=type(inner).__name__,
        message=_message(inner, _fake_tensor_op(chain)),
        user_frame=stack[-1] if stack else None,
        user_stack=stack,
        # Compile-only mode's refusal names the library line that asked for CUDA; a kernel copy
        # lacking a name, where a GPU's compile of it fails.
        torch_frame=inner.where if isinstance(inner, _SAYS_WHERE) else _torch_frame(chain),
    )


#: Errors raised by compile-only mode that name where the failure they stand for happens.
_SAYS_WHERE = (compat.no_cuda.NoCudaDevice, compat.kernel_copies.KernelCopyNameError)


def raised_in_tool(exc: BaseException) -> bool:
    """Was `exc`, which ended a capture, raised in tritoninspect's own code (a bug of ours, not
    the user's or torch's failure)? Never for a kernel that Triton could not compile."""
    chain = _chain(exc)
    if any(compat.triton_compile.compile_error_details(error) is not None for error in chain):
        return False
    return _in_tool(chain[-1])


def _kernel_compile_record(chain: list[BaseException], error: BaseException,
                           details: compat.triton_compile.CompileErrorDetails, cid: str | None,
                           part: str) -> Failure:
    """Triton could not compile a kernel: its whole message (the kernel's error, then a
    nested @jit function's), the kernel, and the kernel lines the errors are at, innermost
    last (after the user's frames that launched it)."""
    stack = _user_stack(chain) + details.frames
    return Failure(
        stage="kernel_compile",
        compile_id=cid,
        part=part,
        exc_type=type(error).__name__,
        message=details.message.strip(),
        user_frame=stack[-1] if stack else None,
        user_stack=stack,
        torch_frame=_torch_frame(chain),
        kernel=details.kernel,
    )


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc`, then each exception it wraps, outermost first: Dynamo's and Inductor's
    `inner_exception`, else the cause, else the context (also when suppressed:
    Dynamo raises `TorchRuntimeError(...) from None` over the real error)."""
    chain = [exc]
    while True:
        last = chain[-1]
        inner = getattr(last, "inner_exception", None) or last.__cause__ or last.__context__
        if inner is None or inner in chain:
            return chain
        chain.append(inner)


def _stage(chain: list[BaseException], progress: Progress) -> tuple[str, str | None, str]:
    if progress.backend_error is not None and any(e is progress.backend_error for e in chain):
        return progress.backend_stage, progress.backend_cid, progress.backend_part
    failed = progress.failed_compile
    # Dynamo names the failing exception's class (convert_frame.py, `fail_type = type(e).__qualname__`):
    # a frame that failed earlier and was skipped is not this failure.
    cid = failed[0] if failed and any(type(e).__qualname__ == failed[1] for e in chain) else None
    if any(compat.versions.is_triton_compilation_error(e) for e in chain):
        return "kernel_compile", cid, ""
    if cid is not None:
        return "dynamo", cid, ""
    return progress.call, None, ""


def _message(exc: BaseException, op: str | None = None) -> str:
    """The exception's message, Dynamo's footer removed, prefixed with the op it came from."""
    lines = str(exc).strip().splitlines() or [""]
    # Dynamo's own footer adds nothing the record does not say in its fields.
    for marker in ("from user code:", "Set TORCH_LOGS=", "You can suppress this exception", "Developer debug context:"):
        lines = _until(lines, marker)
    if op:
        lines[0] = f"{op}: {lines[0]}"
    kept = [_cut(line.rstrip()) for line in lines[:MAX_MESSAGE_LINES]]
    if len(lines) > MAX_MESSAGE_LINES:
        kept.append(f"... ({len(lines) - MAX_MESSAGE_LINES} more lines)")
    return "\n".join(kept).strip()


def _cut(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]}... ({len(line) - MAX_LINE_CHARS} more characters)"


#: Dynamo's text when an op fails on fake tensors (torch/_dynamo/utils.py `get_fake_value`,
#: "Dynamo failed to run FX node with fake tensors: call_function <fn>(*(args), **{})", 2.6-2.14).
_FAKE_OP_RE = re.compile(
    r"failed to run FX node with fake tensors: call_\w+ (?:<built-in (?:function|method) (\w+)[ >]|<?([\w.]+))")


def _fake_tensor_op(chain: list[BaseException]) -> str | None:
    """The op whose shapes did not fit, when Dynamo says which (the innermost error does not)."""
    for exc in chain:
        match = _FAKE_OP_RE.search(str(exc))
        if match:
            return match[1] or match[2]
    return None


def _until(lines: list[str], marker: str) -> list[str]:
    for i, line in enumerate(lines):
        if line.strip().startswith(marker):
            return lines[:i]
    return lines


def _frames(chain: list[BaseException]) -> list[traceback.FrameSummary]:
    """Every frame of every exception in the chain, outermost exception first."""
    return [f for e in chain for f in traceback.extract_tb(e.__traceback__)]


def _user_stack(chain: list[BaseException]) -> tuple[str, ...]:
    """The user's own frames, outermost first, each in the user's function at its line
    (`_collapse_resumes`): from the tracebacks, with the frames Dynamo was tracing (its "from user
    code:" section: a traced frame is not in the Python traceback) between those that called it and
    those that ran while it traced (a custom op's fake implementation)."""
    frames = _frames(chain)
    own = _own_frames(chain)
    traced = _traced_user_code(chain)
    at = next((i for i, f in enumerate(frames) if compat.dynamo.converts_frames(f.filename)), None)
    if own and (not traced or at is None):
        stack = own  # not where Dynamo traced, or no telling which frames called it
    else:
        calling = [(f.filename, f.lineno, f.name) for f in frames[:at] if is_own_file(f.filename)]
        stack = calling + traced + own[len(calling):]
    return tuple(_where(*frame) for frame in _collapse_resumes(stack))


def _own_frames(chain: list[BaseException]) -> list[tuple[str, int | None, str]]:
    """The user's frames of each exception of the chain, in order, a frame that ends one exception's
    traceback and begins the next one's once: torch 2.14 raises an exception chained to a custom op's fake
    implementation's error with a traceback that repeats the fake's frame (it was listed twice)."""
    own: list[tuple[str, int | None, str]] = []
    for exc in chain:
        frames = [(f.filename, f.lineno, f.name) for f in traceback.extract_tb(exc.__traceback__)
                  if is_own_file(f.filename)]
        overlap = next((k for k in range(min(len(own), len(frames)), 0, -1) if own[-k:] == frames[:k]), 0)
        own += frames[overlap:]
    return own


def _traced_user_code(chain: list[BaseException]) -> list[tuple[str, int | None, str]]:
    """The user's frames of Dynamo's "from user code:" section, innermost exception's first found."""
    for exc in reversed(chain):
        text = str(exc)
        if "from user code:" in text:
            found = [(m["file"], int(m["line"]), m["func"])
                     for m in _USER_CODE_RE.finditer(text.split("from user code:", 1)[1]) if is_own_file(m["file"])]
            if found:
                return found
    return []


def _collapse_resumes(frames: list[tuple[str, int | None, str]]) -> list[tuple[str, int | None, str]]:
    """`frames` with each Dynamo resume function (`torch_dynamo_resume_in_forward_at_7`) named as the
    user's function it continues (`forward`), and the frame that called it dropped when that is the
    same function: after a graph break, `forward` calls its resume function at the break's line, so
    the traceback said the failure was at the break, in `torch_dynamo_resume_in_forward_at_7`."""
    kept: list[tuple[str, int | None, str]] = []
    for file, line, name in frames:
        function = original_function(name)
        if function != name and kept and kept[-1][0] == file and kept[-1][2] == function:
            kept.pop()
        kept.append((file, line, function))
    return kept


def _torch_frame(chain: list[BaseException]) -> str | None:
    """The innermost torch, Triton or installed-library frame, when it is inside the
    user's innermost frame (one of them raised); None when the user's own code raised.

    A library counts: Liger's backward raising under torch's autograd.Function.apply
    was reported as raised in torch/autograd/function.py, which only called it."""
    frames = _frames(chain)
    own = [i for i, f in enumerate(frames) if is_own_file(f.filename)]
    inner = frames[own[-1] + 1:] if own else frames
    found = [f for f in inner if compat.versions.is_torch_or_triton_file(f.filename) or is_library_file(f.filename)]
    return _where(found[-1].filename, found[-1].lineno, found[-1].name) if found else None


def _in_tool(exc: BaseException) -> bool:
    if isinstance(exc, (*_SAYS_WHERE, ProcessExit)):
        return False  # compile-only mode's answer to the user's code, or their os._exit(), raised in ours on purpose
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and frames[-1].filename.startswith(_PACKAGE_DIR)


def _where(file: str, line: int | None, func: str) -> str:
    return f"{file}:{line} in {func}"


def first_line(record: Failure) -> str:
    """`TypeError: launcher() missing ...`: the record's exception in one line."""
    head = record.message.splitlines()[0] if record.message else ""
    return f"{record.exc_type}: {head}" if head else record.exc_type


