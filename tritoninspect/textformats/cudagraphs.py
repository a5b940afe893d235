"""Inductor's CUDA-graph skip messages, read torch-free: what kind of reason, and the user's line in it.

The messages are what `log_cudagraph_skip_and_bump_counter` logs (torch/_inductor/cudagraph_utils.py,
torch 2.11-2.14), e.g. "skipping cudagraphs due to mutated inputs (1 instances). Found from : \\n File
"model.py", line 25, in forward\\n    kernel[grid](x, ...)". The words below are torch's own, from
cudagraph_utils.py, compile_fx.py, output_code.py, lowering.py and cudagraph_trees.py (2.13 and 2.14.1).
"""

from __future__ import annotations

import re

#: (kind, words of torch's message that say it), first match wins.
_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("input_storage_mutation", ("input storage mutation",)),
    ("mutated_inputs", ("mutated inputs",)),
    ("non_tensor_inputs", ("non-Tensor inputs",)),
    ("incompatible_op", ("incompatible op",)),
    ("dynamic_shapes", ("symbolic shapes", "distinct sizes")),
    ("device", ("cpu device", "multiple devices", "caching allocator")),
    ("rerecord_limit", ("re-recording limit",)),
    ("control_flow", ("control flow operator",)),
    ("index_put", ("boolean indexing",)),
)

_FRAME_RE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_FOUND_RE = re.compile(r"\.?\s*Found from\s*:?\s*", re.S)


def skip_kind(text: str) -> str:
    """The kind of reason a skip message gives (see `CudagraphSkip.kind`), "other" when unknown."""
    for kind, words in _KINDS:
        if any(w in text for w in words):
            return kind
    return "other"


def headline(text: str) -> str:
    """The message without its "Found from" stack trace, on one line."""
    head = _FOUND_RE.split(text, maxsplit=1)[0]
    return " ".join(head.split()).rstrip(".")


def found_at(text: str) -> tuple[str | None, int | None]:
    """The innermost frame of the message's "Found from" stack trace: (file, line), or (None, None)."""
    parts = _FOUND_RE.split(text, maxsplit=1)
    frames = list(_FRAME_RE.finditer(parts[1])) if len(parts) > 1 else []
    if not frames:
        return None, None
    last = frames[-1]
    return last["file"], int(last["line"])


def stack_site(stack_trace: str | None) -> str | None:
    """"file:line" of the innermost frame of an FX node's `stack_trace`, None without one."""
    frames = list(_FRAME_RE.finditer(stack_trace or ""))
    return f"{frames[-1]['file']}:{frames[-1]['line']}" if frames else None
