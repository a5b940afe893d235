"""Bad TORCH_TRACE input: corrupt or cut-off logs, malformed lines, and targets that are no
trace. Each gives one `error:` line naming the file and a documented exit code (7: a log
that cannot be read; 3: a target that is none), or a warning in the report, never an
internal error."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from _trace_expect import TRACES
from _expect import REPO
from tritoninspect.cli import app
from tritoninspect.model.errors import ExitCode

RECOMPILE = next((TRACES / "recompile_constexpr").glob("*.log"))
ONE_LOG = next((TRACES / "add_raw").glob("*.log"))
GOLD_REPORT = REPO / "tests" / "gold" / "report.json"
GLOG = "V1130 08:00:58.429000 5453 torch/_dynamo/x.py:1] "


def cli(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def one_error(result: Result, code: int, *words: str) -> str:
    """The run's single `error:` line, checked: the exit code, the words, no internal error."""
    assert result.exit_code == code, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    assert "internal error" not in result.output and "Traceback" not in result.output
    for word in words:
        assert word in " ".join(result.output.split()), result.output
    return errors[0]


def test_a_cut_gzip_log_is_one_error_naming_it(tmp_path: Path) -> None:
    packed = gzip.compress(RECOMPILE.read_bytes())
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    one_error(cli("graph", str(cut)), ExitCode.REPORT, str(cut), "cut off")
    # In a folder too (the folder's only log): the same line, not exit 6.
    one_error(cli("graph", str(tmp_path)), ExitCode.REPORT, str(cut), "cut off")


def test_a_log_gz_that_is_not_gzip_is_one_error_naming_it_in_graph_and_diff(tmp_path: Path) -> None:
    fake = tmp_path / "fake.log.gz"
    fake.write_text("not gzip at all\n")
    one_error(cli("graph", str(fake)), ExitCode.REPORT, str(fake), "not a valid gzip file")
    one_error(cli("diff", str(fake), str(ONE_LOG)), ExitCode.REPORT, str(fake), "not a valid gzip file")


#: A line nested deeper than Python's json reads (RecursionError, not ValueError: it was exit 6).
_DEEP = '{"a":' * 100_000 + "1" + "}" * 100_000


@pytest.mark.parametrize("bad", ['{"str": 5}', '{"str": ["a", "zz"]}', '{"str": ["a"]}', '{}', '{"x": ', _DEEP],
                         ids=["str-int", "str-key", "str-short", "empty", "cut", "deep"])
def test_malformed_lines_are_skipped_and_reported(tmp_path: Path, bad: str) -> None:
    log = tmp_path / "t.log"
    log.write_text(GLOG + bad + "\n" + ONE_LOG.read_text())
    result = cli("graph", str(log))
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "1 line of" in text and "could not be read (first: line 1;" in text
    # --strict counts it: a report read from a damaged log is not a clean one.
    assert cli("graph", str(log), "--strict").exit_code == ExitCode.FINDINGS
    # Nothing but the bad line: one error line, exit 7.
    log.write_text(GLOG + bad + "\n")
    one_error(cli("graph", str(log)), ExitCode.REPORT, str(log), "no readable TORCH_TRACE events")


def test_a_cut_off_log_warns_that_it_ends_mid_compile(tmp_path: Path) -> None:
    """`head -c 60%` of a log whose second compile is a recompile: the report cannot show it,
    and says the log ends in the middle of that compile."""
    data = RECOMPILE.read_bytes()
    half = tmp_path / "half.log"
    half.write_bytes(data[: len(data) * 6 // 10])
    result = cli("graph", str(half))
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "ends in the middle of compile 0/1" in text, text
    assert "the job crashed or is still running" in text
    # `check` cannot vouch for a log it read only half of: every condition fails, saying why once.
    checked = cli("check", str(half), "--no-breaks", "--max-graphs", "9")
    assert checked.exit_code == ExitCode.FINDINGS, checked.output
    fails = [line for line in checked.stdout.splitlines() if line.startswith("FAIL")]
    assert len(fails) == 2 and all(line.startswith("FAIL incomplete log:") for line in fails), fails
    assert cli("check", str(RECOMPILE), "--no-breaks", "--max-graphs", "9").exit_code == 0
    # The whole log: no such warning.
    whole = " ".join(cli("graph", str(RECOMPILE)).output.split())
    assert "ends in the middle" not in whole and "could not be read" not in whole


def test_a_log_whose_compile_ids_start_again_says_its_report_mixes_two_runs(tmp_path: Path) -> None:
    """`torch._dynamo.reset()` between two compiles of one model in one traced process: the second run's compile
    ids (and kernel_idx) are the first's again, as in the same log written twice; its report mixed the two runs
    (a recompile_constexpr run twice showed 2 recompiles of 0/1) without a word. It warns, naming where the ids
    start again, and `check` fails; the first part alone reads as the one run."""
    data = RECOMPILE.read_text(encoding="utf-8")
    twice = tmp_path / "twice.log"
    twice.write_text(data + data, encoding="utf-8")
    again = data.count("\n") + 1 + next(n for n, line in enumerate(data.splitlines()) if '"dynamo_start"' in line)
    result = cli("graph", str(twice))
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"starts compile 0/0 again at line {again} (3 compile ids repeat)" in text, text
    assert f"head -n {again - 1} LOG > first.log" in text
    checked = cli("check", str(twice), "--no-breaks")
    assert checked.exit_code == ExitCode.FINDINGS, checked.output
    assert [line for line in checked.stdout.splitlines() if line.startswith("FAIL")][0].startswith("FAIL mixed log:")
    first = tmp_path / "first.log"
    first.write_text("".join(twice.read_text(encoding="utf-8").splitlines(keepends=True)[: again - 1]), encoding="utf-8")
    assert "mixed log" not in cli("graph", str(first)).output
    assert cli("check", str(first), "--no-breaks").exit_code == 0


def test_an_unreadable_log_in_a_rank_folder_is_one_error_naming_it(tmp_path: Path) -> None:
    ranks = tmp_path / "ranks"
    shutil.copytree(TRACES / "ranks", ranks)
    (rank1,) = ranks.glob("*_rank_1_*.log")
    packed = gzip.compress(rank1.read_bytes())
    rank1.unlink()
    cut = ranks / (rank1.name + ".gz")
    cut.write_bytes(packed[: len(packed) * 3 // 4])
    one_error(cli("graph", str(ranks)), ExitCode.REPORT, str(cut))


def test_the_same_log_as_log_and_log_gz_is_one_log(tmp_path: Path) -> None:
    log = tmp_path / ONE_LOG.name
    shutil.copy(ONE_LOG, log)
    (tmp_path / (ONE_LOG.name + ".gz")).write_bytes(gzip.compress(ONE_LOG.read_bytes()))
    result = cli("graph", str(tmp_path), "--json")
    assert result.exit_code == 0, result.output
    assert '"ranks"' not in result.stdout  # one report, not a document of two logs


@pytest.mark.parametrize(("make", "words"), [
    (lambda d: None, ["no TORCH_TRACE logs in", "the folder is empty"]),
    (lambda d: [(d / n).write_text("INFO starting\n") for n in ("a.log", "b.log")],
     ["no TORCH_TRACE logs in", "found 2 .log files that are not torch traces"]),
    (lambda d: shutil.copy(GOLD_REPORT, d / "report.json"),
     ["no TORCH_TRACE logs in", "it holds report.json: name a saved report, e.g. ", "report.json"]),
    # `graph /` named /container_info.json as "a saved report" (hostile, finding K b): other JSON is none.
    (lambda d: [(d / "container_info.json").write_text('{"container_name": "x"}'), (d / "r.json").write_text("{}")],
     ["no TORCH_TRACE logs in", "no .log files, and none of its 2 .json files is a saved tritoninspect report"]),
    (lambda d: (d / "container_info.json").write_text('{"container_name": "x"}'),
     ["no TORCH_TRACE logs in", "no .log files, and container_info.json is not a saved tritoninspect report"]),
])
def test_a_folder_without_trace_logs_says_what_it_holds(tmp_path: Path, make, words: list[str]) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    make(folder)
    line = one_error(cli("graph", str(folder)), ExitCode.TARGET, *words)
    assert "Bad target" not in line
    if "a saved tritoninspect report" in words[1]:
        assert "name a saved report" not in line


def test_targets_that_are_not_what_they_seem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one_error(cli("graph", str(tmp_path / "x.log")), ExitCode.TARGET, "x.log: no such file")
    # An empty target is refused, not read as the current folder's logs.
    monkeypatch.chdir(TRACES / "add_raw")
    one_error(cli("graph", ""), ExitCode.TARGET, "empty target")
    one_error(cli("export", str(TRACES / "add_raw")), ExitCode.TARGET, "export needs a model target")


def test_a_broken_log_gz_beside_good_logs_is_not_left_out_silently(tmp_path: Path) -> None:
    shutil.copytree(TRACES / "ranks", tmp_path / "ranks")
    (rank1,) = (tmp_path / "ranks").glob("*_rank_1_*.log")
    broken = rank1.with_name(rank1.name + ".gz")
    rank1.rename(broken)
    broken.write_bytes(b"not gzip\n")
    one_error(cli("graph", str(tmp_path / "ranks")), ExitCode.REPORT, str(broken), "not a valid gzip file")


def test_compile_ids_of_compiled_autograd_sort_beside_dynamo_ids() -> None:
    from tritoninspect.render._format import compile_id_key

    ids = ["!0/0/0", "0/0", None, "10/0", "2/1", "!1"]
    assert sorted(ids, key=compile_id_key) == ["0/0", "2/1", "10/0", "!0/0/0", "!1", None]


def test_an_event_with_a_damaged_compile_id_does_not_break_the_report(tmp_path: Path) -> None:
    lines = ONE_LOG.read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if '"inductor_post_grad_graph"' in line or '"dynamo_output_graph"' in line)
    lines[i] = lines[i].replace('"frame_id": 0', '"frame_id": [[1]]')
    assert '"frame_id": [[1]]' in lines[i]
    log = tmp_path / "t.log"
    log.write_text("\n".join(lines) + "\n")
    for args in ((), ("--detail",)):
        assert cli("graph", str(log), *args).exit_code == 0
    assert cli("graph", str(log), "-o", str(tmp_path / "t.html")).exit_code == 0


def test_a_torch_log_that_cannot_be_opened_is_named_not_left_out(tmp_path: Path, monkeypatch) -> None:
    from tritoninspect.textformats import torch_trace

    shutil.copytree(TRACES / "ranks", tmp_path / "ranks")
    (rank1,) = (tmp_path / "ranks").glob("*_rank_1_*.log")
    real_open = torch_trace._open

    def no_permission(path: Path, *how):
        if path == rank1:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *how)

    monkeypatch.setattr(torch_trace, "_open", no_permission)
    one_error(cli("graph", str(tmp_path / "ranks")), ExitCode.REPORT, str(rank1), "permission denied")


def test_lines_no_trace_logger_writes_are_a_warning_not_silence(tmp_path: Path) -> None:
    """A log whose events are followed (or broken up) by lines torch never writes: the report is
    still read, and says how many lines it could not place and where the first one is."""
    log = tmp_path / "t.log"
    lines = ONE_LOG.read_text().splitlines(keepends=True)
    log.write_text("".join(lines) + "\x00\x01garbage\nmore garbage\n\n")
    result = cli("graph", str(log))
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert f"2 lines of {log} are not TORCH_TRACE output (first: line {len(lines) + 1};" in text, text
    assert cli("graph", str(log), "--strict").exit_code == ExitCode.FINDINGS
    # A clean log says nothing of the kind.
    assert "not TORCH_TRACE output" not in " ".join(cli("graph", str(ONE_LOG)).output.split())


@pytest.mark.parametrize(("frame", "mine"), [("/opt/venv/lib/python3.11/site-packages/triton/runtime/driver.py", False),
                                             ("/home/me/project/model.py", True)])
def test_a_failed_compiles_frame_is_the_users_only_when_it_is_in_the_users_code(
        tmp_path: Path, frame: str, mine: bool) -> None:
    """Dynamo logs the innermost frame it traced as the failure's "user frame", Triton's runtime included
    (a CPU run: `triton/runtime/driver.py:18`, "0 active drivers"); the report said "your code" of it
    (newcomer pass, helper-31)."""
    import json

    lines = ONE_LOG.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '{"compilation_metrics"' in line)
    head, body = lines[at].split("] ", 1)
    record = json.loads(body)
    record["compilation_metrics"].update(fail_type="torch._dynamo.exc.Unsupported", fail_user_frame_lineno=18,
                                         fail_reason="Attempted to call function marked as skipped",
                                         fail_user_frame_filename=frame)
    lines[at] = f"{head}] {json.dumps(record)}\n"
    log = tmp_path / "dedicated_log_torch_trace_x.log"
    log.write_text("".join(lines))
    from tritoninspect.run import traces

    failure = traces.file_report(log, str(log)).failure
    assert failure is not None and failure.message.startswith("Attempted to call function marked as skipped")
    assert (failure.user_frame, failure.torch_frame) == ((f"{frame}:18", None) if mine else (None, f"{frame}:18"))


#: Header fields of another type than torch writes (an edited log, another torch): each was an
#: internal error (exit 6), or an `Infinity` that made the --json output and a saved report unreadable.
_EDITS = {
    "artifact name a list": ('{"name": "before_post_grad_graph"', '{"name": ["before_post_grad_graph"]'),
    "inductor_config a number": ('"inductor_config": "', '"inductor_config": 5, "x": "'),
    "op count a string": ('"graph_op_count": 5', '"graph_op_count": "5"'),
    "op count infinite": ('"graph_op_count": 5', '"graph_op_count": 1e999'),
    "compile time a list": ('"backend_compile_time_s": 30.498909', '"backend_compile_time_s": [30]'),
    "compile time infinite": ('"backend_compile_time_s": 30.498909', '"backend_compile_time_s": 1e999'),
    "compile time NaN": ('"backend_compile_time_s": 30.498909', '"backend_compile_time_s": NaN'),
}


@pytest.mark.parametrize("edit", list(_EDITS))
def test_header_fields_of_the_wrong_type_leave_the_report_strict_json(tmp_path: Path, edit: str) -> None:
    import json

    old, new = _EDITS[edit]
    text = ONE_LOG.read_text()
    assert old in text
    log = tmp_path / "t.log"
    log.write_text(text.replace(old, new, 1))
    result = cli("graph", str(log), "--json")
    assert result.exit_code == 0, result.output

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the --json output")

    document = json.loads(result.stdout, parse_constant=refuse)
    assert document["graphs"][0]["compile_time_s"] in (None, 30.498909)
    saved = tmp_path / "r.json"
    assert cli("graph", str(log), "-o", str(saved)).exit_code == 0
    assert cli("graph", str(saved)).exit_code == 0


def test_a_compile_without_its_dynamo_graph_says_the_entry_is_a_guess(tmp_path: Path) -> None:
    """A raw launch (hop) read from AOTAutograd's graphs alone looks like a triton_op's: with the Dynamo
    graph's event named as another torch might name it, add_raw's kernel was reported as a triton_op,
    with nothing saying the log lacked what tells them apart."""
    log = tmp_path / "t.log"
    log.write_text(ONE_LOG.read_text().replace('"dynamo_output_graph"', '"dynamo_output_graph_v2"'))
    result = cli("graph", str(log))
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "holds no Dynamo graph for compile 0/0" in text and "is a guess" in text, result.output
    assert cli("graph", str(log), "--strict").exit_code == ExitCode.FINDINGS
    assert "holds no Dynamo graph" not in " ".join(cli("graph", str(ONE_LOG), "--detail").output.split())


def test_a_log_cut_inside_the_output_code_reports_no_kernel_it_never_launches(tmp_path: Path) -> None:
    """Cut in the middle of the output code's text (the job crashed while logging it), the launch past
    the cut was missing from what was read: the report said the compiled code never launches the kernel,
    with advice to use its outputs, a finding the log does not support."""
    text = ONE_LOG.read_text()
    start = text.index('"inductor_output_code"')
    log = tmp_path / "t.log"
    log.write_text(text[:text.index("\n", start) + 200])
    result = cli("graph", str(log), "--detail")
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "never launches it" not in out and "output code left out: the log ends in it" in out, result.output


def test_break_lines_come_from_a_source_unchanged_since_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trace holds no source: the break's lines are read from the file here. Edited after the run, its lines
    may have moved, and another line would be shown as the break's (hostile: a log from elsewhere)."""
    import os

    from tritoninspect.run import traces

    (tmp_path / "samples").mkdir()
    source = tmp_path / "samples" / "graph_break.py"
    shutil.copy(REPO / "samples" / "graph_break.py", source)
    log = tmp_path / "dedicated_log_torch_trace_g.log"
    shutil.copy(next((TRACES / "graph_break").glob("*.log")), log)
    monkeypatch.chdir(tmp_path)  # the log names samples/graph_break.py, relative to where torch ran

    def first_break() -> tuple[tuple[str, ...], list[str]]:
        report = traces.file_report(log, str(log))
        notes = [d.message for d in report.diagnostics if "changed since the log" in d.message]
        return report.graph_breaks[0].context, notes

    os.utime(log, (source.stat().st_mtime + 60,) * 2)
    context, notes = first_break()
    assert any("h = scale(h, 0.5).relu()" in line for line in context) and not notes
    os.utime(source, (log.stat().st_mtime + 60,) * 2)
    context, notes = first_break()
    assert context == () and len(notes) == 1 and "samples/graph_break.py" in notes[0], notes


@pytest.mark.parametrize("kind", ["fifo", "link-to-fifo", "target-fifo"])
def test_a_named_pipe_among_the_ranks_is_named_not_waited_on(tmp_path: Path, kind: str) -> None:
    """Found by a hostile user: a rank torch named that is a named pipe was silently left out of the job, a link
    to one hung the run (opening a pipe waits for a writer), and a pipe given as the target was "Bad target
    (no ':')". A log that is no regular file is refused naming it, exit 7, as a dangling link is."""
    from _expect import run_cli

    shutil.copytree(TRACES / "ranks", tmp_path / "ranks")
    pipe = tmp_path / "ranks" / "dedicated_log_torch_trace_rank_2_pipe.log"
    if kind == "link-to-fifo":
        os.mkfifo(tmp_path / "elsewhere")
        pipe.symlink_to(tmp_path / "elsewhere")
    else:
        os.mkfifo(pipe)
    target = pipe if kind == "target-fifo" else tmp_path / "ranks"
    done = run_cli(["graph", str(target)], timeout=60)
    assert done.returncode == ExitCode.REPORT, done.stderr
    assert done.stderr.splitlines() == [f"error: {pipe}: cannot read this TORCH_TRACE log: a named pipe, "
                                        "not a regular file"], done.stderr


def test_a_lone_surrogate_in_a_logs_json_is_read_as_a_replacement_character(tmp_path: Path) -> None:
    """Found by a hostile user: torch's json.dumps writes `\\udcff` for a name read with surrogateescape (a path
    holding bytes that are not UTF-8), json.loads makes it a str no UTF-8 can hold, and printing the report
    failed: exit 2, "'utf-8' codec can't encode character '\\ud800'". Read as U+FFFD, as invalid bytes are."""
    log = tmp_path / "t.log"
    text = RECOMPILE.read_text()
    assert '"recompile_reason": "' in text
    log.write_text(text.replace('"recompile_reason": "', '"recompile_reason": "bad\\udcff\\ud800 '))
    for args in ((), ("--detail",), ("--json",), ("-o", str(tmp_path / "r.html")), ("-o", str(tmp_path / "r.json"))):
        result = cli("graph", str(log), *args)
        assert result.exit_code == 0, (args, result.output)
    assert "bad\ufffd\ufffd " in cli("breaks", str(log)).output
    saved = json.loads((tmp_path / "r.json").read_text())
    assert "bad\ufffd\ufffd " in json.dumps(saved, ensure_ascii=False)


@pytest.mark.parametrize("packed", [False, True], ids=["log", "log.gz"])
def test_bytes_that_are_not_utf8_are_read_as_replacement_characters_and_said(tmp_path: Path, packed: bool) -> None:
    """Found by a hostile user: a log whose kernel name holds bytes that are not UTF-8 (a damaged log) was read
    with U+FFFD in their place, silently: the name no longer matched the graph's, and the report said the
    compiled code never launches the kernel. The damage is said, as stray lines are (an incomplete-log warning,
    which `check` fails on), and the texts are still read back from the log by byte offset and checksum."""
    (source,) = (TRACES / "triton_op").glob("*.log")
    log = tmp_path / ("t.log.gz" if packed else "t.log")
    data = source.read_bytes().replace(b"add_kernel", b"add_\xff\xfekernel")
    log.write_bytes(gzip.compress(data) if packed else data)  # a .gz log is read as text, not by offset
    lines = data.split(b"\n")
    damaged = [i + 1 for i, line in enumerate(lines) if b"\xff" in line]
    report = json.loads(cli("graph", str(log), "--json").output)
    warnings = [d["message"] for d in report["diagnostics"] if d["source"] == "incomplete log"]
    assert warnings == [f"{len(damaged)} lines of {log} hold bytes that are not UTF-8 (first: line {damaged[0]}; "
                        "the log is damaged), read as \ufffd: a kernel or file name in them may not match the "
                        "rest of the log"]
    shown = cli("graph", str(log), "--show", "code")
    assert shown.exit_code == 0 and "add_\ufffd\ufffdkernel_0 = async_compile.triton(" in shown.output
    checked = cli("check", str(log))
    assert checked.exit_code == ExitCode.FINDINGS and f"FAIL incomplete log: {len(damaged)} lines of" in checked.output
    # The log as torch wrote it: no such warning.
    assert "not UTF-8" not in cli("graph", str(source), "--detail").output
