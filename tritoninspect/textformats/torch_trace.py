"""TORCH_TRACE logs (the structured trace tlparse reads): files, ranks and events, torch-free.

Layout, as torch writes it (torch/_logging/_internal.py `TorchLogsFormatter(trace=True)` and
`trace_structured`, the same in torch 2.11-2.14): one file per process,
`dedicated_log_torch_trace[_rank_<r>]_<random>.log` (read gzipped too, `.log.gz`); each event is one glog line

    V1130 08:00:58.429000 5453 torch/_inductor/graph.py:2745] {"inductor_output_code": {...}, "frame_id": 0, ...}

whose JSON holds the event name as its first key (its metadata under it) beside the
context keys `rank`, `frame_id`, `frame_compile_id`, `attempt`, `compiled_autograd_id`,
`has_payload` (the payload's md5), followed by the payload, one line per payload line,
each prefixed with a tab. `{"str": [text, index]}` events intern stack file names
(`torch/_logging/structured.py`). tlparse reads the same way (pytorch/tlparse src/lib.rs,
`parse_path`: a glog regex, then tab-prefixed payload lines).
"""

from __future__ import annotations

import contextlib
import gzip
import re
import sys
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tritoninspect.model.errors import ReportError
from tritoninspect.textformats.log_text import LogText, lines_in_runs, numbered, payload_text
from tritoninspect.textformats.trace_damage import NotUtf8, refuse_special, trace_json

_GLOG_RE = re.compile(
    r"^[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d{6} (?P<thread>\d+) (?P<path>[^:\]]+):(?P<line>\d+)\] (?P<json>\{.*)$"
)
_RANK_FILE_RE = re.compile(r"_rank_(?P<rank>\d+)_")
_RANK_FIELD_RE = re.compile(r'"rank": (?P<rank>\d+)[,}]')
#: The events tritoninspect reads; others (chromium_event, describe_*, guards...) are skipped
#: without keeping their payloads.
WANTED = frozenset({
    "dynamo_start", "dynamo_output_graph", "aot_forward_graph", "aot_backward_graph", "aot_inference_graph",
    "aot_joint_graph", "inductor_output_code", "compilation_metrics", "artifact", "dynamo_error",
    "missing_fake_kernel", "mismatched_fake_kernel",
})
#: The artifacts whose payload a report reads; others (triton_kernel_info, fx_graph_cache_*,
#: ...) keep their event (its metadata) but not their payload, which is skipped unparsed.
ARTIFACTS_READ = frozenset({
    "before_post_grad_graph", "inductor_post_grad_graph", "dynamo_graph_break_reason",
    "inductor_provenance_tracking_node_mappings", "torch_version",
})

#: What a survey of a log reads (textformats/trace_survey.py): no payload but the torch version's.
SURVEYED = frozenset({"torch_version"})


@dataclass(frozen=True)
class TraceEvent:
    """One structured-trace event."""

    #: The event name: "dynamo_output_graph", "compilation_metrics", "artifact", ...
    name: str
    #: For "artifact" events, the artifact's name ("inductor_post_grad_graph", ...); else "".
    artifact: str
    #: "0/0", "1/2"; "!0/0/0" style ids of compiled autograd keep its prefix; None outside a compile.
    compile_id: str | None
    #: The event's own metadata (what sits under its name).
    meta: dict[str, Any]
    payload: str
    #: 1-based line of the event in its file.
    line: int
    rank: int | None = None
    #: Where the payload lies in the log (None: none, or a .gz log): what records keep in its place.
    stored: LogText | None = None
    #: Dynamo's attempt at the compile (`attempt`: 1, 2, ... after a restart), which `compile_id` leaves out.
    attempt: int = 0
    #: Where its line starts in the file, in bytes (-1: a .gz log's, or a log read as text).
    at: int = -1

    @property
    def text(self) -> str | LogText:
        """The payload as a record keeps it: its place in the log where it has one."""
        return self.stored or self.payload


@dataclass
class TraceLog:
    """The events of one log file (one process, one rank)."""

    path: Path
    rank: int | None
    events: list[TraceEvent] = field(default_factory=list)
    #: Lines that looked like events but did not parse (counted, not fatal: tlparse does the same).
    unreadable: int = 0
    #: 1-based number of the first of them (where the log may have been cut off).
    first_unreadable: int | None = None
    #: Lines that are neither an event nor a payload line (tab first): torch's trace logger wrote none of
    #: them (a damaged log, or another program's output in it). tlparse counts them too ("fail_glog").
    stray: int = 0
    #: 1-based number of the first of them.
    first_stray: int | None = None
    #: Lines read (an event's, or its payload's) holding bytes that are not UTF-8, read as U+FFFD.
    not_utf8: NotUtf8 = field(default_factory=NotUtf8)
    #: The events read, whether kept in `events` or streamed (`stream_trace`).
    count: int = 0
    #: (compile id, line) of each `dynamo_start` read, in order.
    started: list[tuple[str | None, int]] = field(default_factory=list)
    #: Compile ids whose `compilation_metrics` (logged at the end of every compile) was read.
    ended: set[str | None] = field(default_factory=set)
    #: (compile id, line) of each `dynamo_start` of a compile id that had already ended: the traced process
    #: numbered its compiles again (`torch._dynamo.reset()` resets the counters), so ids repeat.
    restarted: list[tuple[str | None, int]] = field(default_factory=list)
    #: The first `torch_version` artifact's version ("" unreadable); None: none read.
    version: str | None = None
    #: Bytes of the file read (where a read in runs stopped: the end of its last run).
    read_to: int = 0

    @property
    def torch_version(self) -> str:
        return self.version or ""


def is_trace_path(text: str) -> bool:
    """Does `text` name a TORCH_TRACE log or a directory holding them (not a model target)?"""
    if not text.strip():
        return False  # Path("") is the current folder: an empty target is refused, not read
    path = Path(text)
    if path.is_dir():
        return any(_log_files(path))
    # A named pipe or device is read, and refused naming it (`_open`), not taken for a model spec.
    return path.name.endswith((".log", ".log.gz")) and path.exists()


def trace_files(path: Path) -> list[Path]:
    """The log files of a trace: the file itself, or the `.log` files of a directory
    (one level down too: a folder of per-rank folders), sorted by rank then name."""
    files = [path] if path.is_file() else list(_log_files(path))
    return _by_rank(files)


@dataclass(frozen=True)
class TraceRun:
    """The logs of one traced job: a single log, or one log per rank."""

    #: The folder (or file) that holds them.
    where: Path
    files: tuple[Path, ...]
    #: Each file's rank (None: the log says none), in `files` order.
    ranks: tuple[int | None, ...]


def trace_runs(path: Path) -> list[TraceRun]:
    """The separate runs under `path`. Logs are ranks of one job only when each says its
    rank (`_rank_<r>_` in its name, else the `rank` field of its events) and no rank
    repeats: then a folder of logs, or of per-rank folders, is one run. Otherwise each
    folder whose logs are one job is a run, and each remaining log is a run of its own
    (a TORCH_TRACE folder shared by several processes, a folder of unrelated traces)."""
    if not path.is_dir():
        return [_run(path, [path])]
    every = list(_log_files(path))
    if _one_job(every):
        return [_run(path, every)] if every else []
    runs: list[TraceRun] = []
    for folder in [path, *sorted(p for p in path.iterdir() if p.is_dir())]:
        files = [f for f in every if f.parent == folder]
        if _one_job(files):
            runs.extend([_run(folder, files)] if files else [])
        else:
            runs.extend(_run(f, [f]) for f in _by_rank(files))
    return runs


def _run(where: Path, files: list[Path]) -> TraceRun:
    ordered = _by_rank(files)
    return TraceRun(where, tuple(ordered), tuple(log_rank(f) for f in ordered))


def _one_job(files: list[Path]) -> bool:
    """One log, or logs that each name a different rank."""
    if len(files) <= 1:
        return True
    ranks = [log_rank(f) for f in files]
    return None not in ranks and len(set(ranks)) == len(ranks)


def log_rank(path: Path, lines: int = 2000) -> int | None:
    """The rank a log names: in its file name, else in the `rank` field of its first events
    (torch writes it once `torch.distributed` is initialised; a log holds no world size
    or process-group id to check more)."""
    rank = _file_rank(path)
    if rank is not None:
        return rank
    try:
        with _open(path) as f:
            for _, raw in zip(range(lines), f):
                match = None if raw.startswith("\t") else _RANK_FIELD_RE.search(raw)
                if match and _GLOG_RE.match(raw.rstrip("\n")):
                    return int(match["rank"])
    except _UNREADABLE:
        return None
    return None


def _by_rank(files: list[Path]) -> list[Path]:
    return sorted(files, key=lambda p: (_file_rank(p) is None, _file_rank(p) or 0, str(p)))


def _log_files(directory: Path) -> Iterator[Path]:
    seen: set[Path] = set()  # a link to the folder itself (me -> .) must not show its logs as a second run
    for pattern in ("*.log", "*.log.gz", "*/*.log", "*/*.log.gz"):
        for candidate in _listed(directory, pattern):
            real = candidate.resolve() if candidate.exists() else candidate
            if real in seen:
                continue
            seen.add(real)
            # x.log.gz beside x.log is a compressed copy of the same log, not another rank.
            if candidate.name.endswith(".gz") and candidate.with_name(candidate.name[:-3]).is_file():
                continue
            # A log torch named (dedicated_log_torch_trace_*) is a rank even when it is empty, garbage or a
            # broken link: read, and refused naming it, rather than silently left out of the job.
            if (candidate.is_file() and _looks_like_trace(candidate)) or _torch_named(candidate):
                yield candidate


def _listed(directory: Path, pattern: str) -> list[Path]:
    """`directory.glob(pattern)` in glob's order, for a folder others write to while it is read (a job still
    running, /tmp): pathlib's glob raised FileNotFoundError for a subfolder removed between its listing and its
    scan; such a subfolder, or one that cannot be listed, holds no logs here."""
    folder, _, name = pattern.rpartition("/")
    if not folder:
        return sorted(directory.glob(name))
    found: list[Path] = []
    for sub in _subfolders(directory):
        with contextlib.suppress(OSError):
            found += sub.glob(name)
    return sorted(found)


def _subfolders(directory: Path) -> list[Path]:
    try:
        return [p for p in directory.iterdir() if p.is_dir()]
    except OSError:
        return []


#: How torch names the logs it writes into the TORCH_TRACE folder (torch/_logging/_internal.py).
TORCH_LOG_PREFIX = "dedicated_log_torch_trace"


def _torch_named(path: Path) -> bool:
    """Named as torch names its logs, and no folder: a file, a link (dangling too) or a named pipe."""
    return path.name.startswith(TORCH_LOG_PREFIX) and (path.is_symlink() or path.exists()) and not path.is_dir()


def _looks_like_trace(path: Path) -> bool:
    try:
        with _open(path) as f:
            for _ in range(20):
                line = f.readline()
                if not line:
                    return False
                if _GLOG_RE.match(line.rstrip("\n")):
                    return True
    except (EOFError, zlib.error, gzip.BadGzipFile):
        # A broken x.log.gz among the logs is most likely a rank's log: read (and refused,
        # naming it) rather than silently left out of the job.
        return True
    except OSError:
        # One torch named that cannot be opened (permissions): refused naming it, not left out.
        return path.name.startswith(TORCH_LOG_PREFIX)
    return False


#: What reading a log can raise: a file that cannot be opened, a `.gz` that is not gzip
#: (gzip.BadGzipFile is an OSError) or is corrupt (zlib.error), or one cut off (EOFError).
_UNREADABLE = (OSError, EOFError, zlib.error)


def unreadable_log(path: Path, exc: BaseException) -> ReportError:
    """The one-line error (exit 7) for a log that cannot be read at all, naming it."""
    if isinstance(exc, EOFError):
        why = "the gzip file is cut off (copied while still being written, or truncated)"
    elif isinstance(exc, gzip.BadGzipFile) or isinstance(exc, zlib.error):
        why = f"not a valid gzip file ({exc})"
    elif isinstance(exc, OSError) and exc.strerror:
        why = exc.strerror.lower()
    else:
        why = str(exc)
    return ReportError(f"{path}: cannot read this TORCH_TRACE log: {why}")


def _open(path: Path, binary: bool = False) -> IO[Any]:
    """A log as text (or bytes); `.gz` ones (a cluster's compressed copy) decompressed as read. A path that
    is no regular file is an OSError before it is opened (`refuse_special`)."""
    refuse_special(path)
    if binary:  # (a plain log only: `_raw_lines` reads a .gz one as text)
        return path.open("rb")
    # surrogateescape: a byte that is not UTF-8 stays itself, for `_encoded` to give back as read.
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape")
    return path.open(encoding="utf-8", errors="surrogateescape")


def log_rank_in_name(path: Path) -> int | None:
    """The rank a log's file name says (`_rank_<r>_`), None if it says none."""
    return _file_rank(path)


def _file_rank(path: Path) -> int | None:
    match = _RANK_FILE_RE.search(path.name)
    return int(match["rank"]) if match else None


def read_trace(path: Path) -> TraceLog:
    """Every wanted event of one log file, payloads joined, stack file names uninterned."""
    log = TraceLog(path, _file_rank(path))
    log.events = list(stream_trace(log))
    return log


def stream_trace(log: TraceLog, artifacts: frozenset[str] | None = None, *, strings: dict[int, str] | None = None,
                 runs: Iterable[tuple[int, int, int]] | None = None) -> Iterator[TraceEvent]:
    """The wanted events of `log.path`, one at a time as read: no event is kept here, so
    reading holds one event's payload at a time whatever the log's size. `artifacts`: the
    artifacts whose payload is read (`ARTIFACTS_READ`: those a report needs), the others'
    lines skipped unjoined and their payload ""; None: every payload; `SURVEYED`: the torch version's
    only (textformats/trace_survey.py). As they pass,
    `log` gets what is known only at the end: `unreadable`, `rank`, `torch_version`,
    `count`, and the compiles that `started` but never `ended`. `strings`: the stack file names
    interned so far, filled as `str` events pass. `runs`: only these parts of the log, each
    (byte offset, its line's number, the offset where it ends), in order (textformats/trace_segments.py)."""
    path, strings = log.path, {} if strings is None else strings
    head: tuple[dict[str, Any], int, bool, int] | None = None
    payload: list[bytes] = []  # its lines as read, tab and newline on: joined once, in `_finish`
    keep, start = False, 0
    try:
        # Runs are read from a log surveyed as a plain file (textformats/trace_survey.py): seekable, no CR.
        lines, at = _raw_lines(path) if runs is None else (_open(path, True), str(path.absolute()))
        with lines as f:
            for number, offset, raw in numbered(f) if runs is None else lines_in_runs(f, runs):
                if raw[:1] == b"\t":
                    if keep:
                        payload.append(raw)
                    log.read_to = offset + len(raw)
                    continue
                if head is not None:
                    yield _finish(log, head, _joined(log, at, start, payload, head[1] + 1), strings)
                line = raw.decode("utf-8", "replace").rstrip("\n")
                head, payload = _head(log, line, number, strings, artifacts, offset if at else -1), []
                if head is not None and "\ufffd" in line:
                    log.not_utf8.count([raw], number)
                keep = head is not None and head[2]
                start = offset + len(raw)
                log.read_to = start
    except _UNREADABLE as exc:
        raise unreadable_log(path, exc) from exc
    if head is not None:
        yield _finish(log, head, _joined(log, at, start, payload, head[1] + 1), strings)


def _raw_lines(path: Path) -> tuple[Any, str | None]:
    """The log's lines as bytes, and the path its payloads' places are read back from (None: none).

    Read as bytes, to know where each payload lies in the file: a report keeps a graph's text as that
    place (`LogText`), not as a string, so that its memory does not grow with the log's texts. A place
    in a .gz is not one to read back, and a log holding a carriage return is read as text (universal
    newlines: a lone CR ends a line there, as it always did) with its texts kept; the path is absolute,
    for a reader in another folder."""
    if path.name.endswith(".gz") or _holds_cr(path):
        return _encoded(_open(path)), None
    return _open(path, True), str(path.absolute())


@contextlib.contextmanager
def _encoded(f: IO[str]) -> Iterator[Iterator[bytes]]:
    with f:
        yield (line.encode("utf-8", "surrogateescape") for line in f)  # the bytes `_open` read


def _holds_cr(path: Path) -> bool:
    with _open(path, True) as f:
        while chunk := f.read(1 << 18):  # a quarter MiB: what is held while looking does not grow with the log
            if b"\r" in chunk:
                return True
    return False


def _joined(log: TraceLog, at: str | None, start: int, lines: list[bytes], number: int) -> tuple[str, LogText | None]:
    """The payload of its lines as read (the first is line `number`) and where they lie (None: a .gz
    log, or no payload)."""
    data = b"".join(lines)
    text = payload_text(data)
    if "\ufffd" in text:
        log.not_utf8.count(lines, number)
    return text, LogText.at(at, start, len(data), zlib.crc32(data)) if at and data else None


def _head(log: TraceLog, line: str, number: int, strings: dict[int, str],
          artifacts: frozenset[str] | None, offset: int) -> tuple[dict[str, Any], int, bool, int] | None:
    match = _GLOG_RE.match(line)
    if match is None:
        if line.strip():
            log.stray += 1
            log.first_stray = log.first_stray or number
        return None
    try:
        record = trace_json(match["json"])
    except (ValueError, RecursionError):  # RecursionError: nested deeper than Python's json can read
        record = None
    if not isinstance(record, dict) or not record:
        _unreadable(log, number)
        return None
    name = next(iter(record))
    if name == "str":
        interned = record["str"]
        if not (isinstance(interned, list) and len(interned) == 2 and isinstance(interned[1], int)):
            _unreadable(log, number)
            return None
        strings[interned[1]] = str(interned[0])
        return None
    if name not in WANTED:
        return None
    meta = record[name]
    named = isinstance(meta, dict) and isinstance(meta.get("name"), str) and meta["name"] in (artifacts or ())
    keep = artifacts is None or named or (name != "artifact" and artifacts is not SURVEYED) or (
        name == "artifact" and not isinstance(meta, dict) and artifacts is not SURVEYED)
    return record, number, keep, offset


def _unreadable(log: TraceLog, number: int) -> None:
    log.unreadable += 1
    if log.first_unreadable is None:
        log.first_unreadable = number


def _finish(log: TraceLog, head: tuple[dict[str, Any], int, bool, int], joined: tuple[str, LogText | None],
            strings: dict[int, str]) -> TraceEvent:
    record, number, _, offset = head
    payload, stored = joined
    name = next(iter(record))
    meta = record[name] if isinstance(record[name], dict) else {}
    if strings and isinstance(meta.get("stack"), list):
        meta = {**meta, "stack": [_unintern(frame, strings) for frame in meta["stack"]]}
    artifact = str(meta.get("name", "")) if name == "artifact" else ""
    rank = record.get("rank")
    cid = compile_id(record)
    # One string per compile id, not one per event: the records of a compile (tens of them) keep it.
    event = TraceEvent(name, artifact, cid and sys.intern(cid), meta, payload, number,
                       int(rank) if isinstance(rank, int) else None, stored, _int(record.get("attempt")) or 0,
                       offset)
    _note(log, event)
    return event


def _note(log: TraceLog, event: TraceEvent) -> None:
    """What `log` keeps of an event that streams past (see `stream_trace`)."""
    log.count += 1
    if log.rank is None and event.rank is not None:
        log.rank = event.rank
    if event.name == "dynamo_start":
        if event.compile_id in log.ended:
            log.restarted.append((event.compile_id, event.line))
        log.started.append((event.compile_id, event.line))
    elif event.name == "compilation_metrics":
        log.ended.add(event.compile_id)
    elif event.artifact == "torch_version" and log.version is None:
        log.version = _torch_version(event.payload)


def _torch_version(payload: str) -> str:
    try:
        return str(trace_json(payload).get("pytorch_version", ""))
    except (ValueError, AttributeError, RecursionError):
        return ""


def _unintern(frame: Any, strings: dict[int, str]) -> Any:
    if isinstance(frame, dict) and isinstance(frame.get("filename"), int):
        return {**frame, "filename": strings.get(frame["filename"], str(frame["filename"]))}
    return frame


def compile_id(record: dict[str, Any]) -> str | None:
    """The compile id as torch prints it (torch._guards.CompileId.__str__, the same in tlparse):
    "0/1"; compiled autograd's "!2/0/1", or "!2" outside a Dynamo frame. The attempt (Dynamo's
    restarts of one compile) is left out, as in a live capture's ids: a break logged by an
    attempt Dynamo restarted belongs to that compile (`TraceEvent.attempt` keeps the attempt)."""
    frame, count = _int(record.get("frame_id")), _int(record.get("frame_compile_id"))
    autograd = _int(record.get("compiled_autograd_id"))
    text = f"{frame}/{count}" if frame is not None and count is not None else None
    if autograd is not None:
        return f"!{autograd}/{text}" if text else f"!{autograd}"
    return text


def _int(value: Any) -> int | None:
    """A context field as torch writes it (an int); anything else (a damaged line) is none."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
