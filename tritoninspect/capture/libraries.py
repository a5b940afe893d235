"""Whose code the kernels and custom ops are: the user's, or an installed library's (which one)."""

from __future__ import annotations

from tritoninspect.capture import compat
from tritoninspect.model.records import Capture
from tritoninspect.textformats.origin import library_of
from tritoninspect.textformats.breaks import frame_location


def record_libraries(capture: Capture) -> None:
    """Fill `capture.op_sources` and `capture.libraries` (called after the run, while the ops are
    registered and the user's directory is still the user's: origin.user_tree)."""
    ops = {n.op for n in capture.nodes if n.form == "op" and n.op}
    ops |= {la.custom_op for la in capture.launches if la.custom_op}
    capture.op_sources = {op: compat.library.op_source(op) for op in sorted(ops)}
    files = {k.file for k in capture.kernels.values() if k.file}
    files |= {file for file, _ in capture.op_sources.values() if file}
    files |= {frame_location(b.library_frame)[0] or "" for b in capture.breaks if b.library_frame} - {""}
    # A break inside Triton's runtime at a library's launch is that library's (analyse/breaks.py `_in_library`).
    files |= {frame_location(b.user_stack[-1])[0] or "" for b in capture.breaks if b.user_stack} - {""}
    # Whose disable or autograd.Function kept an eager launch out of the graph.
    sites = [s for la in capture.launches for s in (*la.disabled, *([la.backward_of] if la.backward_of else []))]
    files |= {frame_location(s)[0] or "" for s in sites} - {""}
    for file in sorted(files):
        found = library_of(file)
        if found is not None:
            capture.libraries[file] = found
