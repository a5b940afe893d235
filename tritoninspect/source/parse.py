"""What the user points at, decided once: a model spec, a saved report, or a TORCH_TRACE trace.

`parse_source(text)` reads the command line's TARGET into one of three kinds, without
importing torch: a `*.json` is a `SavedReport`; a `.log` file or a folder holding TORCH_TRACE
logs is a `TraceLogs` (one log, the ranks of one job, or several runs, said when read); anything
else is a model spec (`TargetSpec`, `path/to/model.py:Net` or `package.module:Net`), and a typo
fails here, in a fraction of a second. Commands then take the parsed source, never the text:
`tritoninspect.run.acquire` turns it into a report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Union

from tritoninspect.source.spec import TargetSpec, parse_spec
from tritoninspect.textformats.torch_trace import TraceRun, is_trace_path, trace_runs


@dataclass(frozen=True)
class SavedReport:
    """A report saved as JSON (`-o report.json`, `--save`): re-rendered as it is, nothing compiled."""

    #: As given.
    text: str

    @property
    def path(self) -> Path:
        return Path(self.text)

    @property
    def files(self) -> tuple[Path, ...]:
        """What reading it reads (an `-o` must not overwrite it)."""
        return (self.path,)


@dataclass(frozen=True)
class TraceLogs:
    """A TORCH_TRACE log, or a folder of them: a run captured elsewhere, read without torch."""

    #: As given.
    text: str
    #: The separate runs under it (`textformats.torch_trace.trace_runs`): one, of one log or of
    #: the ranks of one job, or several (refused when read, naming them).
    runs: tuple[TraceRun, ...]

    @property
    def path(self) -> Path:
        return Path(self.text)

    @property
    def ranked(self) -> bool:
        """More than one log: the ranks of a job (a report each), or several runs (refused when read)."""
        return len(self.runs) > 1 or (len(self.runs) == 1 and len(self.runs[0].files) > 1)

    @property
    def files(self) -> tuple[Path, ...]:
        """What reading it reads (an `-o` must not overwrite it): the log, or the logs of the folder's runs
        (`trace_runs`: the folder's and its subfolders' logs). Not every file under the folder: for a folder
        like /tmp that walked whole virtual environments, and failed on a file removed meanwhile."""
        return tuple(f for run in self.runs for f in run.files) if self.path.is_dir() else (self.path,)


#: What a command's TARGET names.
Source = Union[TargetSpec, SavedReport, TraceLogs]


def parse_source(text: str) -> Source:
    """The kind of `text`: a saved report, a trace, or a model spec (a `TargetError` when it is none)."""
    if text.endswith(".json"):
        return SavedReport(text)
    if is_trace_path(text):
        return TraceLogs(text, tuple(trace_runs(Path(text))))
    return parse_spec(text)

