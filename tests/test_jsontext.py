"""A report's JSON text made from its dataclasses (model/jsontext.py) is, byte for byte, what
`json.dumps(dataclasses.asdict(report), indent=2, default=str)` gives."""

from __future__ import annotations

import dataclasses
import enum
import json
from collections import namedtuple
from pathlib import Path

import pytest

from tritoninspect.model.jsontext import json_text
from tritoninspect.model.report import Report
from tritoninspect.run import traces

REPO = Path(__file__).resolve().parents[1]
TRACES = sorted((REPO / "tests" / "fixtures" / "traces").rglob("dedicated_log_torch_trace_*.log"))
SAVED = sorted((REPO / "tests" / "fixtures" / "gpu").glob("*.json"))


def _dumps(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, default=str)


@pytest.mark.parametrize("log", TRACES, ids=lambda p: f"{p.parent.name}/{p.name[-12:]}")
def test_a_trace_reports_text_is_json_dumps(log: Path) -> None:
    report = traces.file_report(log, str(log))
    assert report.json_text == _dumps(report)


@pytest.mark.parametrize("saved", SAVED, ids=lambda p: p.stem)
def test_a_saved_reports_text_is_json_dumps(saved: Path) -> None:
    report = Report.from_json(saved.read_text(encoding="utf-8"), str(saved))
    assert report.json_text == _dumps(report)


class _Colour(enum.Enum):
    RED = "red"


class _Kind(str, enum.Enum):
    USER = "user"


class _Level(enum.IntEnum):
    HIGH = 3


_Pair = namedtuple("_Pair", "a b")


@dataclasses.dataclass(frozen=True)
class _Leaf:
    name: str = "é\u2028\"\\\n\t\x00"
    values: tuple = (1, -0.0, 1e300, 1.5e-7, float("nan"), float("inf"), float("-inf"), True, False, None)


@dataclasses.dataclass
class _Tree:
    leaf: _Leaf = dataclasses.field(default_factory=_Leaf)
    leaves: list = dataclasses.field(default_factory=lambda: [_Leaf(), _Leaf("b", ())])
    keys: dict = dataclasses.field(default_factory=lambda: {
        "s": 1, 2: "int", 1.5: "float", True: "bool", None: "none", _Kind.USER: "str enum", _Level.HIGH: "int enum"})
    nested: dict = dataclasses.field(default_factory=lambda: {"leaf": _Leaf(), "empty": {}, "list": [[], [{}]]})
    others: tuple = (Path("/tmp/x"), _Colour.RED, _Kind.USER, _Level.HIGH, {1, 2}, frozenset(), b"bytes",
                     _Pair(1, _Leaf()), 10**30)
    empty: tuple = ()


def test_the_values_json_treats_specially_come_out_as_json_dumps_writes_them() -> None:
    tree = _Tree()
    assert json_text(tree) == json.dumps(dataclasses.asdict(tree), indent=2, default=str)
    assert json_text([tree, {"x": tree}]) == json.dumps(
        [dataclasses.asdict(tree), {"x": dataclasses.asdict(tree)}], indent=2, default=str)
    for value in ("", [], {}, 0, 1.0, None, [None], {"a": []}):
        assert json_text(value) == json.dumps(value, indent=2, default=str)
    # With a margin, as a rank's report sits inside `graph DIR --json`'s document.
    assert json_text(tree, "    ") == json.dumps(dataclasses.asdict(tree), indent=2, default=str).replace("\n", "\n    ")


def test_a_key_json_cannot_write_is_refused_as_json_refuses_it() -> None:
    with pytest.raises(TypeError):
        json.dumps({(1, 2): 0}, indent=2)
    with pytest.raises(TypeError, match="keys must be"):
        json_text({(1, 2): 0})


def _written(value: object) -> list[str]:
    from tritoninspect.model.jsontext import write_json

    pieces: list[str] = []
    write_json(value, pieces.append)
    return pieces


def test_the_text_written_in_pieces_is_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """`write_json` (what `graph --json` writes on stdout, model/jsontext.py) cuts the text between array
    elements; joined, the pieces are `json_text`, however small they are cut."""
    from tritoninspect.model import jsontext

    tree = _Tree()
    values = [tree, [tree, {"x": tree}], {"a": [tree] * 3, "b": []}, "", [], {}, 0, 1.0, None, [None], {"a": []},
              [[[[[1, [2]]]]]], _Pair(1, 2), {_Kind.USER: [tree]}]
    for pieces in (jsontext._PIECES, 1):
        monkeypatch.setattr(jsontext, "_PIECES", pieces)
        for value in values:
            assert "".join(_written(value)) == json_text(value)
    with pytest.raises(TypeError, match="keys must be"):
        _written({(1, 2): 0})


@pytest.mark.parametrize("log", TRACES[:6], ids=lambda p: f"{p.parent.name}/{p.name[-12:]}")
def test_a_trace_reports_text_written_in_pieces_is_its_text(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tritoninspect.model import jsontext

    monkeypatch.setattr(jsontext, "_PIECES", 16)
    report = traces.file_report(log, str(log))
    pieces: list[str] = []
    report.write_json(pieces.append)
    assert len(pieces) > 1 and "".join(pieces) == _dumps(report)
    assert "json_text" not in vars(report)  # not made whole to be written


def test_a_reports_text_is_written_in_pieces_no_larger_than_its_rows(tmp_path: Path) -> None:
    """The JSON of a 100 MiB trace is 75 MB: written whole, it and its parts were most of `graph LOG
    --json`'s peak memory (363 MiB; 161 MiB in pieces, docs/speed.md)."""
    from tests.test_trace_speed import _make_traces

    make_traces = _make_traces()
    sources = make_traces.real_logs()
    path = tmp_path / "dedicated_log_torch_trace_gen.log"
    make_traces.write_log(path, sources, sum(s.stat().st_size for s in sources) * 4)
    report = traces.file_report(path, str(path))
    pieces: list[str] = []
    report.write_json(pieces.append)
    assert sum(map(len, pieces)) > 2 << 20 and max(map(len, pieces)) < 1 << 20
    assert "".join(pieces) == report.json_text
