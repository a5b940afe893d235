"""The structured trace (TORCH_TRACE) written to a directory of ours: `graph --trace DIR`.

torch writes the trace through one private handler on the `torch.__trace` logger,
`torch._logging._internal.LOG_TRACE_HANDLER`, a `LazyTraceHandler(root_dir)` that opens
`dedicated_log_torch_trace[_rank_N]_*.log` in `root_dir` at its first record (and then logs
the torch version) and is formatted by `TorchLogsFormatter(trace=True)` (glog line + JSON
metadata + tab-prefixed payload): torch 2.11-2.14, since pytorch/pytorch#120289 (the
structured trace) and #123440 (LazyTraceHandler). A second handler of the same kind, ours,
writes the same records to our directory; when torch's own already writes to that
directory (TORCH_TRACE=DIR set for the same folder), ours is not added: one log, not two.
The recorder's own handler on that logger only reads records; it writes nothing.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

from tritoninspect.capture.compat.dynamo import TRACE_LOGGER
from tritoninspect.model.errors import CaptureError


def _provenance_config() -> object | None:
    """`torch._inductor.config.trace`, when it has `provenance_tracking_level` (torch 2.11-2.14;
    pytorch/pytorch#147006 and follow-ups): on, each compile also traces which graph nodes
    every kernel came from (`inductor_provenance_tracking_node_mappings`), which names
    each user kernel's `kernel_idx` when the trace is read back (and tlparse
    `--inductor-provenance` shows it)."""
    from torch._inductor import config

    trace = getattr(config, "trace", None)
    return trace if hasattr(trace, "provenance_tracking_level") else None


def torch_trace_dir() -> str | None:
    """The directory torch's own trace handler writes to (TORCH_TRACE), if any."""
    from torch._logging import _internal

    handler = getattr(_internal, "LOG_TRACE_HANDLER", None)
    root = getattr(handler, "root_dir", None)
    return str(root) if root else None


@contextlib.contextmanager
def writing_trace(directory: Path) -> Iterator[list[Path]]:
    """Write the structured trace of the block to `directory`; yields the list that
    holds, after the block, the log files written there."""
    from torch._logging import _internal

    if not hasattr(_internal, "LazyTraceHandler") or not hasattr(_internal, "TorchLogsFormatter"):
        raise CaptureError("--trace: this torch has no LazyTraceHandler/TorchLogsFormatter in torch._logging._internal")
    directory.mkdir(parents=True, exist_ok=True)
    before = set(directory.glob("*.log"))
    written: list[Path] = []
    ours = None
    provenance = _provenance_config()
    previous_level = provenance.provenance_tracking_level if provenance is not None else None
    if provenance is not None and not previous_level:
        provenance.provenance_tracking_level = 1
    own = torch_trace_dir()
    if own is None or os.path.realpath(own) != os.path.realpath(directory):
        ours = _internal.LazyTraceHandler(str(directory))
        ours.setFormatter(_internal.TorchLogsFormatter(trace=True))
        logging.getLogger(TRACE_LOGGER).addHandler(ours)
    try:
        yield written
    finally:
        if provenance is not None:
            provenance.provenance_tracking_level = previous_level
        if ours is not None:
            logging.getLogger(TRACE_LOGGER).removeHandler(ours)
            ours.close()
        else:
            for handler in logging.getLogger(TRACE_LOGGER).handlers:
                handler.flush()
        written.extend(sorted(set(directory.glob("*.log")) - before))
