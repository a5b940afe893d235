"""Known Triton-related graph-break causes, and the hint each gives (analyse/breaks.py ties them to breaks).

A cause is spotted from the break's text (`KNOWN_CAUSES`, most specific first) or from where it
happened (`RUNTIME_FOLLOW_ON`); a `.item()` break gets its hint from what the value feeds in the
user's code (`item_hint`): only sizes or kernel arguments, or a Python branch.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class KnownCause:
    """A Triton-related graph-break cause: how to spot it, what to do, and where that comes from."""

    #: Searched in the break's headline and reason.
    pattern: re.Pattern[str]
    hint: str
    #: The torch graph-break id and/or issue (and source file) the entry is based on.
    source: str
    #: Torch's TritonHOPifier refuses the launch itself: `wrap_triton` in a `torch.library.triton_op` runs the
    #: same checks (TracingTritonHOPifier raises them as a RuntimeError, failing the compile instead of breaking
    #: the graph: torch/_higher_order_ops/triton_kernel_wrap.py, read in 2.13 and run there with torchao 0.18's
    #: hqq kernel and its Config pre_hooks), so a triton_op around the same launch is no way out.
    refused_by_wrap_triton: bool = False


def _cause(pattern: str, hint: str, source: str, refused_by_wrap_triton: bool = False) -> KnownCause:
    return KnownCause(re.compile(pattern), hint, source, refused_by_wrap_triton)


#: Known causes, most specific first; the first match gives a break its hint.
KNOWN_CAUSES: tuple[KnownCause, ...] = (
    _cause(
        r"@triton\.heuristics must return constant values",
        "Under dynamic shapes a @triton.heuristics value computed from a size is symbolic, and Dynamo can only "
        "fold constant heuristic values into the autotune configs, so the launch is not traced and the kernel "
        "runs eagerly. Keep that size static (torch._dynamo.mark_static, or compile without dynamic=True), or "
        "drop the heuristic (e.g. always mask) so no constexpr depends on a dynamic size.",
        "GB0361 (torch/_dynamo/variables/functions.py, maybe_unpack_heuristic_result)",
    ),
    _cause(
        r"pre_hook and post_hook are not supported",
        "Dynamo cannot run a Config(pre_hook=...) or an autotuner pre_hook/post_hook at run time, so the launch "
        "is not traced. To zero or restore outputs between autotune trials use "
        "@triton.autotune(reset_to_zero=[...]) or restore_value=[...], which Dynamo supports; or do the work "
        "(e.g. out.zero_()) before the launch.",
        "GB0361, pytorch/pytorch#139059 (torch/_higher_order_ops/triton_kernel_wrap.py)",
        refused_by_wrap_triton=True,
    ),
    _cause(
        r"Only configs, keys, restore_value, and reset_to_zero are supported",
        "Remove warmup=, rep= or use_cuda_graph= from @triton.autotune, or set "
        "torch._inductor.config.unsafe_ignore_unsupported_triton_autotune_args = True (they are then ignored).",
        "GB0361 (torch/_higher_order_ops/triton_kernel_wrap.py)",
        refused_by_wrap_triton=True,
    ),
    _cause(
        r"Passing num_ctas directly to the Triton kernel is not supported",
        "Move num_ctas from the call site into a triton.Config of @triton.autotune, e.g. "
        "configs=[triton.Config({...}, num_ctas=2)].",
        "GB0361 (torch/_higher_order_ops/triton_kernel_wrap.py, call_triton_kernel)",
        refused_by_wrap_triton=True,
    ),
    _cause(
        r"multiple @triton\.autotune decorators",
        "Keep a single @triton.autotune on the kernel (merge the configs).",
        "GB0361 (torch/_higher_order_ops/triton_kernel_wrap.py, call_triton_kernel)",
        refused_by_wrap_triton=True,
    ),
    _cause(
        r"called with a grid|single grid|Only tuple grids|Grid can have at most rank 3",
        "Launch the kernel as kernel[grid](...) with a tuple (or a function returning a tuple) of at most 3 dims.",
        "GB0361 (torch/_higher_order_ops/triton_kernel_wrap.py)",
        refused_by_wrap_triton=True,
    ),
    _cause(
        r"Tensor\.item\(\)",
        "A value read with .item() ends the graph. torch._dynamo.config.capture_scalar_outputs = True keeps it in "
        "one graph only when the value feeds tensor sizes or kernel arguments (the grid, a scalar); when it "
        "decides a Python branch (if, while, assert) the graph breaks there instead, flag or not.",
        "GB0124 (torch/_dynamo/variables/tensor.py); torch._dynamo.config.capture_scalar_outputs",
    ),
    _cause(
        r"torch\.compiler\.disable",
        "Everything the disabled function launches runs eagerly, outside the graph: Inductor cannot see, fuse "
        "or reorder those kernels. If it only dispatches to Triton kernels, drop the torch.compiler.disable "
        "(Dynamo traces kernel[grid](...) launches) or register the launcher as a torch.library.triton_op "
        "calling wrap_triton(kernel).",
        "GB0098 (torch/_dynamo/variables/functions.py, SkipFunctionVariable: calling it), GB0099 "
        "(torch/_dynamo/symbolic_convert.py, InliningInstructionTranslator: inlining it)",
    ),
    _cause(
        r"sourceless variable TritonKernelVariable",
        "A follow-on of the break before it at the same kernel launch: Dynamo cannot resume in the middle of "
        "kernel[grid](...), so it compiles up to the previous resumable point and runs the rest of the frame "
        "eagerly, or skips the frame. Fix the first break.",
        "GB0092 (torch/_dynamo/codegen.py, reconstruction failure)",
    ),
    _cause(
        r"create_tma_descriptor",
        "Create the TMA descriptor right after .data_ptr() with no graph break in between, or use host-side "
        "triton.tools.tensor_descriptor.TensorDescriptor.from_tensor, which Dynamo traces when torch sees TMA "
        "support.",
        "torch/_dynamo/variables/functions.py (invalid ptr argument for create_tma_descriptor)",
    ),
)


#: A `.item()` value whose every use the source shows is a size or a kernel argument (`value_uses`).
ITEM_FEEDS_SIZES = KnownCause(
    re.compile(r"Tensor\.item\(\)"),
    "The value read with .item() only feeds {uses} (line {line}): the code after the break is specialised to "
    "each value (a recompile per new value). Set torch._dynamo.config.capture_scalar_outputs = True before "
    "compiling: the value stays symbolic (an unbacked SymInt) in one graph, and Inductor computes the grid "
    "from it at run time.",
    "GB0124 (torch/_dynamo/variables/tensor.py); torch._dynamo.config.capture_scalar_outputs",
)
#: A `.item()` value that decides a Python branch: capture_scalar_outputs does not help.
ITEM_DECIDES_BRANCH = KnownCause(
    re.compile(r"Tensor\.item\(\)"),
    "The value read with .item() decides a Python branch (line {line}). Dynamo cannot trace a branch on a value "
    "it only knows at run time, and torch._dynamo.config.capture_scalar_outputs = True does not remove this "
    "break: the graph then breaks at the branch instead (generic_jump on a SymNode). To keep one graph, keep "
    "the condition a tensor (no .item()) and compute both sides, selecting with torch.where(cond, a, b).",
    "GB0124 (torch/_dynamo/variables/tensor.py); data-dependent branching, GB0170 (generic_jump) in "
    "torch/_dynamo/symbolic_convert.py",
)
_USE_WORDS = {"kernel": "a kernel's grid or scalar arguments", "size": "tensor sizes"}


def item_hint(value_uses: dict[str, int] | None) -> KnownCause | None:
    """The hint for a `.item()` break from what the value is used for; None: the generic one."""
    if not value_uses:
        return None
    if "branch" in value_uses:
        return dataclasses.replace(ITEM_DECIDES_BRANCH, hint=ITEM_DECIDES_BRANCH.hint.format(line=value_uses["branch"]))
    if set(value_uses) <= set(_USE_WORDS):
        uses = " and ".join(_USE_WORDS[k] for k in _USE_WORDS if k in value_uses)
        line = min(value_uses.values())
        return dataclasses.replace(ITEM_FEEDS_SIZES, hint=ITEM_FEEDS_SIZES.hint.format(uses=uses, line=line))
    return None


def refused_by_wrap_triton(text: str) -> bool:
    """The break's text (headline and reason) names a cause torch also refuses inside a triton_op."""
    cause = known_cause(text)
    return cause is not None and cause.refused_by_wrap_triton


def known_cause(text: str) -> KnownCause | None:
    """The first known cause whose pattern occurs in `text`."""
    return next((c for c in KNOWN_CAUSES if c.pattern.search(text)), None)


#: Given by where a break is, not by its text: Dynamo broke while compiling a frame of
#: Triton's own runtime that ran eagerly because of an earlier break at the same launch.
RUNTIME_FOLLOW_ON = KnownCause(
    # Not jit.py: its frames are the `kernel[grid](...)` launch itself, where the text's cause holds.
    re.compile(r"(^|/)(triton/runtime/(?!jit\.py)|triton/knobs\.py|triton/testing\.py|torch/_dynamo/polyfills/)"),
    "A follow-on of the first break at this launch: the launch ran eagerly, and Dynamo then compiled the "
    "frames of Triton's own runtime it went through (Autotuner.run, benchmark, _bench, knobs) and "
    "broke there, since Triton's runtime is not traceable. These cost compile time only; fix "
    "the first break and they go away. Compile-only mode shows them only behind a bare @triton.heuristics "
    "(Heuristics.run; no autotuner): it launches autotuned kernels through tritoninspect's interpreter "
    "launcher, which Dynamo does not compile.",
    "torch/_dynamo/trace_rules.py: SKIP_DIRS skips triton/backends only, so triton/runtime frames are "
    "compiled (seen on torch 2.11 + triton 3.6, H200: breaks GB0150, GB0156, GB0059, GB0175, GB0007, GB0364 "
    "inside autotuner.py)",
)


#: Frames of Triton's own code (its launch lambda in jit.py included) and of Dynamo's polyfills.
_TRITON_FRAME = re.compile(r"(^|/)(triton/|torch/_dynamo/polyfills/)")


def cause_of(
    headline: str, reason: str, library_frame: str | None, kernel: str | None, traced_from: str | None = None
) -> KnownCause | None:
    """The known cause of a break. A break inside Triton's runtime (autotuner, knobs) at a
    kernel launch is a follow-on of the first break there, whatever its text (e.g. the
    autotuner's own num_ctas argument), when Dynamo was compiling a frame of Triton's own
    (`traced_from`; not known: assumed). Traced from the user's or a library's frame, the break
    is the launch's own: Dynamo inlines a bare `triton.heuristics` wrapper's `Heuristics.run`
    (cut-cross-entropy's kernels) and breaks inside it. Otherwise the text decides."""
    if kernel is not None and runtime_follow_on(library_frame, traced_from):
        return RUNTIME_FOLLOW_ON
    return known_cause(f"{headline}\n{reason}")


def runtime_follow_on(library_frame: str | None, traced_from: str | None) -> bool:
    """Dynamo broke inside Triton's runtime (not its launch lambda in jit.py, where the text's cause holds)
    while compiling a frame of Triton's own (`traced_from`; assumed where not known, as in a TORCH_TRACE
    log): an eager launch's frames, after an earlier break at that launch."""
    in_runtime = bool(library_frame and RUNTIME_FOLLOW_ON.pattern.search(library_frame))
    return in_runtime and (traced_from is None or _TRITON_FRAME.search(traced_from) is not None)
