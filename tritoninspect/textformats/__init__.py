"""Torch-free parsers of the text torch and Triton emit; imports neither torch nor triton.

- `origin`: whose file a frame is in (torch's, Triton's, this tool's, a library's, the user's own).
- `breaks`: graph-break reasons (`dynamo_graph_break_reason` payloads).
- `output_code`: Inductor's output code (user kernels, custom-op calls, what `call()` launches).
- `kernel_access`: a Triton kernel's source (which parameters it loads, stores, updates atomically).
- `ttir`: Triton IR text (from an op to its kernel source line).
- `value_use`: what the user's function does with a value read by `.item()` (a branch, a size, a launch).
- `fx_graph`: FX graph code as reports keep it (nodes and their inputs, for the HTML report's pictures).
- `fx_readable`: `print_readable` graphs of a TORCH_TRACE (kernel HOP nodes with their kwargs, op calls, source lines).
- `torch_trace`: TORCH_TRACE log records.
- `log_text`: a payload kept as its place in the log, read back from there.
- `trace_damage`: what a log is or holds that torch never writes (a named pipe, lone surrogates in its JSON,
  bytes that are not UTF-8), refused or read all the same.

Anything derived from live torch (e.g. the aten op names) is passed in as an argument.
"""

from __future__ import annotations

from tritoninspect.textformats import (
    breaks,
    fx_graph,
    fx_readable,
    kernel_access,
    log_text,
    origin,
    output_code,
    torch_trace,
    ttir,
    value_use,
)

__all__ = [
    "breaks", "fx_graph", "fx_readable", "kernel_access", "log_text", "origin", "output_code", "torch_trace", "ttir", "value_use",
]
