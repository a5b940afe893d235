"""A source -> its report: the one way every command gets the report it works on.

A saved report is read as it is (validated against its schema), a trace's one log is read
without torch (`run/traces.py`), and a model is captured through a `route`: by default the
pipeline's route in this process (`run/pipeline.py` for `CaptureOptions`,
`run/pipeline_export.py` for `ExportOptions`); the CLI passes its own, which shows progress
and bounds the time (commands/_capture.py). A trace of several ranks has a report per rank:
`run.traces.trace_reports`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Union

from tritoninspect.source.parse import SavedReport, Source, TraceLogs

if TYPE_CHECKING:
    from tritoninspect.model.report import Report
    from tritoninspect.run.pipeline import CaptureOptions
    from tritoninspect.run.pipeline_export import ExportOptions
    from tritoninspect.source.spec import TargetSpec

#: How to capture: a compile's options (`graph`, `breaks`, `check`, diff's sides) or an export's.
Options = Union["CaptureOptions", "ExportOptions"]
#: How a model becomes its report: captured with the options, analysed.
Route = Callable[["TargetSpec", Options], "Report"]


def acquire(source: Source, options: Options, *, route: Route | None = None) -> Report:
    """The report `source` stands for: read (a trace's one log, a saved report), or the model
    captured with `options` through `route` (default: `run_route`, in this process, quietly)."""
    if isinstance(source, TraceLogs):
        from tritoninspect.run.traces import one_report

        return one_report(source)
    if isinstance(source, SavedReport):
        from tritoninspect.model.report import read_report

        return read_report(source.path)
    return (route or run_route)(source, options)


def run_route(spec: TargetSpec, options: Options) -> Report:
    """The pipeline's route for `options`, in this process: compile (or export), then analyse."""
    from tritoninspect.run.pipeline_export import ExportOptions, run_export

    if isinstance(options, ExportOptions):
        return run_export(spec, options)
    from tritoninspect.run.pipeline import run

    return run(spec, options)
