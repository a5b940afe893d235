"""Reading traces fast changes no report: streamed against kept events, parallel ranks against
one at a time, indexed analyses against a fresh capture, and the benchmark's generated logs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from _trace_expect import make_traces

from tritoninspect.analyse import build_report
from tritoninspect.analyse.trace import capture_from_trace
from tritoninspect.run import traces
from tritoninspect.source.parse import parse_source
from tritoninspect.textformats.torch_trace import read_trace

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "traces"
LOGS = sorted(FIXTURES.rglob("dedicated_log_torch_trace_*.log"))


def _make_traces():
    return make_traces()


@pytest.mark.parametrize("log", LOGS[:8], ids=lambda p: p.parent.name)
def test_a_streamed_log_gives_the_report_its_kept_events_give(log: Path) -> None:
    streamed = traces.file_report(log, str(log))
    kept = read_trace(log)
    report = build_report(capture_from_trace(kept, str(log)))
    assert streamed.to_dict()["kernels"] == report.to_dict()["kernels"]
    assert streamed.to_dict()["graphs"] == report.to_dict()["graphs"]
    assert streamed.meta.rank == kept.rank and streamed.meta.torch == report.meta.torch


def test_ranks_read_in_parallel_equal_ranks_read_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    logs = parse_source(str(FIXTURES / "ranks"))
    parallel = [r.to_json() for r in traces.trace_reports(logs)]
    monkeypatch.setattr(traces, "_in_parallel", lambda files, names, json_text: {})
    assert [r.to_json() for r in traces.trace_reports(logs)] == parallel


def test_a_rank_no_worker_could_read_is_read_here_with_its_own_error(tmp_path: Path) -> None:
    from tritoninspect.model.errors import ReportError

    for log in (FIXTURES / "ranks").glob("*.log"):
        shutil.copy(log, tmp_path / log.name)
    (tmp_path / "dedicated_log_torch_trace_rank_2_empty.log").write_text(
        'V1130 09:20:04.493000 1 torch/x.py:1] {"rank": 2, "chromium_event": {}}\n')
    with pytest.raises(ReportError, match="rank_2_empty.log: no TORCH_TRACE events in it"):
        traces.trace_reports(parse_source(str(tmp_path)))


def test_the_generated_logs_are_real_lines_with_compiles_renumbered(tmp_path: Path) -> None:
    make_traces = _make_traces()
    sources = make_traces.real_logs()[:2]
    path = tmp_path / "dedicated_log_torch_trace_gen.log"
    make_traces.write_log(path, sources, sum(s.stat().st_size for s in sources) * 2)
    once = [build_report(capture_from_trace(read_trace(s), str(s))) for s in sources]
    (twice,) = traces.trace_reports(parse_source(str(path)))
    compiles = lambda r: {g.compile_id for g in r.graphs}  # noqa: E731
    assert len(compiles(twice)) >= 2 * sum(len(compiles(r)) for r in once)


def test_each_output_module_is_parsed_for_user_kernels_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hazard analyses ask each kernel's compiled launches per compile: parsing every output module per
    ask made a 1.4 MiB rank take 4 s and 64 ranks 2 minutes (user_kernel_metas ran 6,600 times for 160 modules)."""
    from tritoninspect.analyse import indexes
    from tritoninspect.analyse.hazards import _common
    from tritoninspect.textformats.user_kernels import user_kernel_metas

    make_traces = _make_traces()
    sources = make_traces.real_logs()
    path = tmp_path / "dedicated_log_torch_trace_gen.log"
    make_traces.write_log(path, sources, sum(s.stat().st_size for s in sources) * 2)
    parsed = []
    for module in (indexes, _common):  # wherever the analyses call it from
        monkeypatch.setattr(module, "user_kernel_metas", lambda code: parsed.append(1) or user_kernel_metas(code),
                            raising=False)
    capture = capture_from_trace(read_trace(path), str(path))
    report = build_report(capture)
    with_kernels = sum(1 for code in capture.output_code if code.user_kernels)
    assert report.kernels and with_kernels > 10
    assert len(parsed) <= with_kernels, (len(parsed), with_kernels)


def test_the_ranks_document_spliced_from_the_workers_texts_is_the_document() -> None:
    """`graph DIR --json` splices each rank's JSON text, made in the worker that read it, into the document:
    byte for byte what one json.dumps of the whole document gives."""
    import json

    from tritoninspect.analyse.ranks import summarise_ranks

    logs = parse_source(str(FIXTURES / "gpu" / "ranks"))
    reports = traces.trace_reports(logs, json_text=True)
    assert len(reports) > 1 and all("json_text" in vars(r) for r in reports)  # made in the workers
    summary = summarise_ranks(logs.text, reports)
    assert summary.to_json() == json.dumps(summary.to_dict(), indent=2, default=str)
    assert summary.to_json(indent=None) == json.dumps(summary.to_dict(), default=str)
    empty = summarise_ranks(logs.text, [])
    assert empty.to_json() == json.dumps(empty.to_dict(), indent=2, default=str)


@pytest.mark.parametrize("broken", ["empty", "garbage", "dangling"])
def test_a_broken_rank_torch_named_is_refused_not_left_out(tmp_path: Path, broken: str) -> None:
    """Found by a hostile user: an empty, garbage or dangling-link rank was silently dropped from the job, and the
    other ranks' report passed `check`. A log torch named is a rank: refused naming it, exit 7."""
    from tritoninspect.model.errors import ReportError

    for log in (FIXTURES / "ranks").glob("*.log"):
        shutil.copy(log, tmp_path / log.name)
    bad = tmp_path / "dedicated_log_torch_trace_rank_7_bad.log"
    if broken == "empty":
        bad.write_bytes(b"")
    elif broken == "garbage":
        bad.write_bytes(bytes(range(256)) * 20)
    else:
        bad.symlink_to(tmp_path / "gone.log")
    with pytest.raises(ReportError, match="rank_7_bad.log"):
        traces.trace_reports(parse_source(str(tmp_path)))


def test_a_link_to_the_trace_folder_itself_is_not_a_second_run(tmp_path: Path) -> None:
    for log in (FIXTURES / "ranks").glob("*.log"):
        shutil.copy(log, tmp_path / log.name)
    (tmp_path / "me").symlink_to(".")
    assert len(traces.trace_reports(parse_source(str(tmp_path)))) == len(list((FIXTURES / "ranks").glob("*.log")))


def test_ranks_that_share_payloads_parse_each_distinct_payload_once(tmp_path: Path) -> None:
    """The ranks of one job write the same graphs and output modules: a process that reads several ranks
    parses each distinct payload text once (textformats/memo.py), and the reports are the ones fresh parses
    give. Before, 64 ranks of 1.4 MiB parsed the same 170 payloads 64 times over (half of each rank's CPU)."""
    from tritoninspect.analyse import trace as trace_module
    from tritoninspect.textformats import fx_readable
    make_traces = _make_traces()
    rank_log = sorted((FIXTURES / "ranks").glob("*.log"))[0]
    files = []
    for r in range(3):
        files.append(tmp_path / f"dedicated_log_torch_trace_rank_{r}_{r:08d}.log")
        make_traces.write_log(files[-1], [rank_log], rank_log.stat().st_size, rank=r)
    memos = [getattr(trace_module, name) for name in ("PARSED_GRAPHS", "PARSED_CODES", "PARSED_CALLS")]
    for memo in memos:
        memo.clear()
    before = [m.parses for m in memos]
    reports = [traces.file_report(f, str(f)) for f in files]
    graphs = {g.code for g in reports[0].graphs if g.stage != "output_code"}
    assert graphs and all({g.code for g in r.graphs if g.stage != "output_code"} == graphs for r in reports)
    assert memos[0].parses - before[0] == len(graphs)  # not len(graphs) * 3
    assert memos[1].parses - before[1] == len({g.code for g in reports[0].graphs if g.stage == "output_code"})
    # Compile ids and ranks come from each event, not from the rank whose parse was kept.
    assert [r.meta.rank for r in reports] == [0, 1, 2]
    # What was kept was not changed by the analyses that read it, and fresh parses give the same reports.
    for code in graphs:
        assert memos[0](code, trace_module.TORCH_OP_NAMESPACES) == fx_readable.parse_graph(
            code, trace_module.TORCH_OP_NAMESPACES)
    assert [r.json_text for r in _fresh_reports(files, memos)] == [r.json_text for r in reports]


def test_the_payload_memo_keeps_at_most_its_limit_of_text_least_recently_used_first() -> None:
    from tritoninspect.textformats.memo import TextMemo

    memo = TextMemo(len, limit=10)
    assert [memo(t) for t in ("aaaa", "bbbb", "aaaa", "cccc")] == [4, 4, 4, 4]
    assert memo.parses == 3  # "aaaa" again was kept
    memo("aaaa")  # kept ("bbbb", the least recently used, went to make room for "cccc")
    assert memo.parses == 3
    memo("bbbb")
    assert memo.parses == 4


def _old_fx_balanced(text: str) -> str:  # fx_readable._balanced before it jumped with a regex
    depth, quote, i = 0, "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return text[: i + 1]
        i += 1
    return text


def _old_kernel_balanced(text: str, start: int) -> str:  # user_kernels._balanced, the same
    if start >= len(text) or text[start] not in "[({":
        return ""
    depth, quote = 0, None
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "[({":
            depth += 1
        elif ch in "])}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return ""


def test_the_bracket_scanners_that_jump_give_what_the_character_loops_gave() -> None:
    """The HOP kwargs and triton_meta scanners were a Python loop per character (a tenth of a rank's
    parse); they now jump to the next bracket, quote or backslash with a regex."""
    import random

    from tritoninspect.textformats.fx_readable import _balanced as fx_balanced
    from tritoninspect.textformats.user_kernels import _balanced as kernel_balanced

    rng = random.Random(26)
    for _ in range(3000):
        text = "".join(rng.choice("ab (){}[]'\"\\x") for _ in range(rng.randrange(0, 40)))
        assert fx_balanced(text) == _old_fx_balanced(text), text
        for start in range(min(len(text), 6)):
            assert kernel_balanced(text, start) == _old_kernel_balanced(text, start), (text, start)


def test_the_ranks_document_made_from_each_ranks_facts_is_the_one_made_from_the_reports() -> None:
    """`graph DIR --json` brings back from the workers each rank's facts and JSON text, not its report
    (unpickling 64 reports was a second of the main process's CPU): the document is the same."""
    from tritoninspect.analyse.ranks import RanksDocument, RankSummary

    for folder in (FIXTURES / "gpu" / "ranks", FIXTURES / "ranks"):
        logs = parse_source(str(folder))
        summary = traces.ranks_summary(logs, facts_only=False, json_text=True)
        document = traces.ranks_summary(logs, facts_only=True)
        assert isinstance(summary, RankSummary) and isinstance(document, RanksDocument)
        assert summary.differences and document.differences == summary.differences
        assert document.ranks == summary.ranks
        assert document.to_json() == summary.to_json()
        pieces: list[str] = []
        document.write_json(pieces.append)  # what `graph DIR --json` writes: a rank at a time, never joined
        assert "".join(pieces) == document.to_json() and len(pieces) > len(document.ranks)
        assert document.problems == summary.problems
        assert [f.problems for f in document.facts] == [
            tuple(d for d in r.diagnostics if d.severity != "note") for r in summary.reports]


def test_a_payload_joined_at_once_is_its_lines_without_their_tabs() -> None:
    from tritoninspect.textformats.log_text import payload_text

    for lines in ([], ["\t\n"], ["\ta\n", "\t\tb\n", "\t\n", "\tc"], ["\tx = 1\t# \\t\n", "\t\n", "\t\n"],
                  ["\té = 1\n", "\t\n", "\tb\n"]):
        expected = "\n".join(line[1:].rstrip("\n") for line in lines)
        assert payload_text("".join(lines).encode()) == expected, lines


def test_generated_ranks_on_their_own_devices_name_them_and_share_no_payload_naming_one(tmp_path: Path) -> None:
    """`make_traces.py --devices N` (the benchmark's ranks that share no payload naming a device)."""
    import hashlib

    make_traces = _make_traces()
    source = make_traces.real_logs()[0]
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    moved = make_traces.on_device(lines, 3)
    assert len(moved) == len(lines) and "cuda:0" in "".join(lines)
    assert "cuda:0" not in "".join(moved) and "cuda:3" in "".join(moved)
    assert make_traces.on_device(lines, 0) == lines
    for i, line in enumerate(moved):  # a changed payload carries the md5 of its new text
        if '"has_payload"' in line and moved[i + 1:i + 2] != lines[i + 1:i + 2]:
            j = i + 1
            while j < len(moved) and moved[j].startswith("\t"):
                j += 1
            text = "\n".join(p[1:].removesuffix("\n") for p in moved[i + 1:j])
            assert hashlib.md5(text.encode()).hexdigest() in line


def _payloads(lines: list[str]) -> list[str]:
    """The payload texts of a log's lines, in order."""
    texts, current = [], None
    for line in [*lines, "end\n"]:
        if line.startswith("\t"):
            current = (current or []) + [line[1:].removesuffix("\n")]
            continue
        if current:
            texts.append("\n".join(current))
        current = None
    return texts


@pytest.mark.parametrize("device", [1, 7, 12, 63])
def test_a_payload_on_another_device_parses_as_its_own_text_does(device: int) -> None:
    """Ranks on their own GPUs write the same payloads but for the device's index: the memos parse such a
    text as the one naming the canonical device and turn the index back (textformats/memo.py). On every
    payload of the real GPU logs moved to another device, that is what a parse of the text itself gives,
    and it parsed nothing new once the canonical texts were read."""
    from tritoninspect.analyse import graphs, indexes
    from tritoninspect.analyse import trace as trace_module

    make_traces = _make_traces()
    memos = {trace_module.PARSED_GRAPHS: (trace_module.TORCH_OP_NAMESPACES,), trace_module.PARSED_CODES: (),
             trace_module.PARSED_CALLS: ((),), indexes.KERNEL_METAS: (), graphs.CALL_COUNTS: ()}
    canonical = 0 if device < 10 else 10
    compared = 0
    for source in make_traces.real_logs():
        lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
        pairs = list(zip(_payloads(make_traces.on_device(lines, canonical)),
                         _payloads(make_traces.on_device(lines, device))))
        for memo, args in memos.items():
            memo.clear()
            for first, _ in pairs:
                memo(first, *args)
            parses = memo.parses
            for first, moved in pairs:
                assert memo(moved, *args) == memo._parse(moved, *args)
                compared += first != moved
            assert memo.parses == parses  # each moved text was its canonical one, parsed above
    assert compared > 100


def test_a_text_naming_several_devices_or_none_is_its_own_key() -> None:
    from tritoninspect.textformats.memo import TextMemo, canonical_device

    assert canonical_device('x: "f32[4][1]cuda:3" = y;  z: "f32[4][1]cuda:0"') is None
    assert canonical_device("x = 1") is None
    assert canonical_device('x: "f32[4][1]cuda:0"') == ('x: "f32[4][1]cuda:0"', ())  # the canonical one
    assert canonical_device("f32[4][1]cuda:3\nstream3 = get_raw_stream(3)\ncuda:35") is None  # 3 and 35
    assert canonical_device("f32[4][1]cuda:3\nstream3 = get_raw_stream(3)") == (
        "f32[4][1]cuda:0\nstream3 = get_raw_stream(0)", (("cuda:0", "cuda:3"), ("get_raw_stream(0", "get_raw_stream(3")))
    assert canonical_device('a: "f32[2][1]cuda:12"; device(type=\'cuda\', index=12)') == (
        'a: "f32[2][1]cuda:10"; device(type=\'cuda\', index=10)',
        (("cuda:10", "cuda:12"), ("type='cuda', index=10", "type='cuda', index=12")))
    memo = TextMemo(lambda text: (text.split()[-1], len(text)), devices=True)
    assert memo("on cuda:5") == ("cuda:5", 9) and memo("on cuda:6") == ("cuda:6", 9)
    assert memo.parses == 1  # "on cuda:0", once
    assert memo("on cuda:0") == ("cuda:0", 9) and memo.parses == 1
    memo.clear()
    assert memo("on cuda:5") == ("cuda:5", 9) and memo.parses == 2


def test_ranks_on_their_own_devices_parse_each_payload_once_and_give_fresh_parses_reports(tmp_path: Path) -> None:
    """Before, ranks on 64 GPUs shared no payload naming a device, and each was parsed once per rank: 64 ranks
    took 2.4 times tlparse's wall time. Compile ids, ranks and devices come from each rank's own log."""
    from tritoninspect.analyse import trace as trace_module

    make_traces = _make_traces()
    source = make_traces.real_logs()[0]
    files = []
    for r in range(1, 4):
        files.append(tmp_path / f"dedicated_log_torch_trace_rank_{r}_{r:08d}.log")
        make_traces.write_log(files[-1], [source], source.stat().st_size, rank=r, device=r)
    memos = [getattr(trace_module, name) for name in ("PARSED_GRAPHS", "PARSED_CODES")]
    for memo in memos:
        memo.clear()
    before = [m.parses for m in memos]
    reports = [traces.file_report(f, str(f)) for f in files]
    graphs = [{g.code for g in r.graphs if g.stage != "output_code"} for r in reports]
    codes = [{g.code for g in r.graphs if g.stage == "output_code"} for r in reports]
    assert graphs[0] != graphs[1] and codes[0] != codes[1]  # every rank names its own device
    assert memos[0].parses - before[0] == len(graphs[0])  # not 3 times as many
    assert memos[1].parses - before[1] == len(codes[0])
    assert all(f"cuda:{r}" in reports[r - 1].json_text and f"cuda:{r + 1}" not in reports[r - 1].json_text
               for r in (1, 2))
    assert [r.json_text for r in _fresh_reports(files, memos)] == [r.json_text for r in reports]


def _fresh_reports(files: list[Path], memos: list[Any]) -> list[Any]:
    """Each file's report read with every memo emptied first: what a parse of each text itself gives."""
    fresh = []
    for f in files:
        for memo in memos:
            memo.clear()
        fresh.append(traces.file_report(f, str(f)))
    return fresh
