"""`graph --trace DIR`'s handler (capture/compat/trace_log.py), without compiling: structured-trace
records made by hand go to DIR in TORCH_TRACE's format, and not twice when torch already writes there."""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from tritoninspect.capture.compat import trace_log  # noqa: E402
from tritoninspect.textformats.torch_trace import read_trace  # noqa: E402


def emit(name: str) -> None:
    from torch._logging import trace_structured

    trace_structured("artifact", metadata_fn=lambda: {"name": name, "encoding": "string"},
                     payload_fn=lambda: f"payload of {name}", expect_trace_id=False)


def test_records_go_to_the_directory_in_trace_format(tmp_path: Path) -> None:
    with trace_log.writing_trace(tmp_path / "tr") as written:
        emit("tritoninspect_test")
    emit("after_the_block")
    (log,) = written
    events = read_trace(log).events
    names = [e.artifact for e in events]
    assert "tritoninspect_test" in names and "after_the_block" not in names
    from torch._logging import _internal

    # What torch's own handler logs after its first record, so tlparse knows the version: since
    # https://github.com/pytorch/pytorch/pull/178024 (`_log_torch_version`: in torch 2.13 and 2.14); torch 2.11's
    # handler logs no version (the reader takes it from the compilation metrics then).
    assert ("torch_version" in names) == hasattr(_internal, "_log_torch_version")
    assert next(e for e in events if e.artifact == "tritoninspect_test").payload == "payload of tritoninspect_test"


def test_no_second_handler_where_torch_already_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from torch._logging import _internal

    monkeypatch.setattr(_internal.LOG_TRACE_HANDLER, "root_dir", str(tmp_path))
    handlers = list(_internal.trace_log.handlers)
    with trace_log.writing_trace(tmp_path):
        assert list(_internal.trace_log.handlers) == handlers


def test_provenance_tracking_is_on_inside_and_restored(tmp_path: Path) -> None:
    from torch._inductor import config

    before = config.trace.provenance_tracking_level
    with trace_log.writing_trace(tmp_path):
        assert config.trace.provenance_tracking_level == (before or 1)
    assert config.trace.provenance_tracking_level == before
