"""A command's TARGET parsed once (tritoninspect/source/parse.py): its kind, and the files it reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritoninspect.model.errors import TargetError
from tritoninspect.source.parse import SavedReport, TargetSpec, TraceLogs, parse_source

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "tests" / "fixtures" / "traces"


def test_a_json_file_is_a_saved_report_read_as_it_is() -> None:
    source = parse_source("a/report.json")
    assert source == SavedReport("a/report.json") and source.files == (Path("a/report.json"),)


def test_a_model_spec_is_parsed_and_names_its_file() -> None:
    source = parse_source(str(ROOT / "samples" / "add_raw.py") + ":Net")
    assert isinstance(source, TargetSpec) and source.attr == "Net"
    assert source.files == (ROOT / "samples" / "add_raw.py",)


def test_a_dotted_spec_reads_no_file_of_its_own() -> None:
    # A module found on sys.path: nothing for `-o` to be refused over (it once crashed on None).
    source = parse_source("json.decoder:JSONDecoder")
    assert isinstance(source, TargetSpec) and source.files == ()


def test_a_trace_log_and_a_folder_of_ranks() -> None:
    (log,) = sorted((TRACES / "add_raw").glob("*.log"))
    one = parse_source(str(log))
    assert isinstance(one, TraceLogs) and not one.ranked and one.files == (log,)
    ranks = parse_source(str(TRACES / "ranks"))
    assert isinstance(ranks, TraceLogs) and ranks.ranked and len(ranks.runs) == 1
    assert set(ranks.runs[0].files) <= set(ranks.files)


def test_a_typo_fails_at_once_as_a_target_error() -> None:
    with pytest.raises(TargetError, match="No such file"):
        parse_source("no/such/model.py:Net")
    with pytest.raises(TargetError, match="no such file"):
        parse_source("missing.log")
