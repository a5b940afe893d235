"""The JSON Schemas (tier a): generated from the report models, shipped equal to what is generated,
and every stored report in tests/ valid under them.

Set TRITONINSPECT_UPDATE_GOLD=1 to rewrite tritoninspect/schemas/*.schema.json after an intended
change to the models (and bump the schema version when the contract changes: docs/json.md).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal, Optional, get_args

import jsonschema
import pytest

from tritoninspect.model import diff_report, report, schema
from tritoninspect.model.errors import ReportError
from tritoninspect.model.report import ADDED_IN_VERSION_1, Entry, EntryKind, Mode, ModeName, Report, read_report

TESTS = Path(__file__).parent
REPO = TESTS.parent
SHIPPED = REPO / "tritoninspect" / "schemas"
UPDATE_GOLD = os.environ.get("TRITONINSPECT_UPDATE_GOLD") == "1"
MODELS = {schema.REPORT_SCHEMA: report.json_schema, schema.DIFF_SCHEMA: diff_report.json_schema}


def stored_reports() -> list[Path]:
    """Every saved report under tests/: JSON objects with a schema_version and a meta block
    (the capture fixtures, `Capture` records, have no schema_version)."""
    found = []
    for path in sorted([*TESTS.glob("gold/*.json"), *TESTS.glob("fixtures/**/*.json")]):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "schema_version" in data and "meta" in data:
            found.append(path)
    return found


STORED = stored_reports()


# --- the shipped files ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MODELS))
def test_shipped_schema_is_the_generated_one(name: str) -> None:
    generated = schema.render(MODELS[name]())
    shipped = SHIPPED / name
    if UPDATE_GOLD:
        shipped.write_text(generated, encoding="utf-8")
        return
    assert shipped.exists(), f"missing {shipped}; create it with TRITONINSPECT_UPDATE_GOLD=1"
    assert shipped.read_text(encoding="utf-8") == generated, (
        f"{shipped} is not what the models generate: rewrite it with TRITONINSPECT_UPDATE_GOLD=1 "
        "python -m pytest -q tests/test_schema.py, review the diff, and bump the schema version if the "
        "contract changed"
    )


@pytest.mark.parametrize("name", sorted(MODELS))
def test_shipped_schema_is_a_valid_draft_2020_12_schema(name: str) -> None:
    loaded = schema.load(name)
    jsonschema.Draft202012Validator.check_schema(loaded)
    assert loaded["$schema"] == schema.DIALECT
    assert list(loaded["properties"])[0] == "schema_version"


def test_the_schema_versions_are_the_models() -> None:
    assert schema.load(schema.REPORT_SCHEMA)["properties"]["schema_version"]["const"] == report.SCHEMA_VERSION
    assert schema.load(schema.DIFF_SCHEMA)["properties"]["schema_version"]["const"] == diff_report.DIFF_SCHEMA_VERSION


def test_the_schema_files_ship_as_package_data() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'tritoninspect = ["schemas/*.schema.json"]' in pyproject
    assert '"jsonschema>=4.18"' in pyproject


# --- every stored report is valid -------------------------------------------------------------------


def test_stored_reports_were_found() -> None:
    names = {p.relative_to(TESTS).as_posix() for p in STORED}
    assert {"gold/report.json", "fixtures/report_small.json", "fixtures/gpu/add_raw.json",
            "fixtures/gpu-old-layout/add_raw.json"} <= names
    assert len(STORED) >= 39


@pytest.mark.parametrize("path", STORED, ids=lambda p: p.relative_to(TESTS).as_posix())
def test_stored_report_is_valid(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    schema.validate(report.upgraded(data), schema.REPORT_SCHEMA, str(path))
    read_report(path)


def test_what_tritoninspect_writes_has_every_field() -> None:
    """Writing puts out every field: the old-layout tolerance is for reading only."""
    full = json.loads(schema.render(report.json_schema()))
    for record in [full, *full["$defs"].values()]:
        record["required"] = list(record["properties"])
    jsonschema.Draft202012Validator.check_schema(full)
    validator = jsonschema.Draft202012Validator(full)  # one: `jsonschema.validate` rebuilds it per call (30 s)
    for path in STORED:
        written = json.loads(read_report(path).to_json())
        validator.validate(written)


def test_diff_report_round_trips_through_its_schema() -> None:
    from tritoninspect.analyse.diff import diff_reports

    gpu = TESTS / "fixtures" / "gpu"
    diff = diff_reports(read_report(gpu / "add_raw.json"), read_report(gpu / "custom_op.json"))
    assert diff_report.DiffReport.from_json(diff.to_json(), "d.json") == diff


# --- the model's closed sets and later fields -------------------------------------------------------


def test_literal_sets_are_the_enums() -> None:
    assert get_args(EntryKind) == tuple(e.value for e in Entry)
    assert get_args(ModeName) == tuple(m.value for m in Mode)
    assert report.STAGES[0] == "dynamo" and report.STAGES[-1] == "runtime"


def test_fields_added_in_version_1_exist_and_have_defaults() -> None:
    records = {cls.__name__: cls for cls in vars(report).values()
               if isinstance(cls, type) and dataclasses.is_dataclass(cls)}
    for name in ADDED_IN_VERSION_1:
        owner, _, field_name = name.partition(".")
        fields = {f.name: f for f in dataclasses.fields(records[owner])}
        assert field_name in fields, name
        f = fields[field_name]
        assert f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING, name


def test_a_report_without_the_later_fields_reads_with_their_defaults() -> None:
    old = read_report(TESTS / "fixtures" / "gpu-old-layout" / "add_raw.json")
    assert old.decompiled == () and old.meta.calls == 1
    assert all(o.scalars is None and o.clones is None for k in old.kernels for o in k.occurrences)


def test_an_original_field_with_a_default_is_still_required() -> None:
    data = json.loads((TESTS / "gold" / "report.json").read_text(encoding="utf-8"))
    del data["kernels"][0]["occurrences"][0]["grid"]  # has a default, but was always written
    with pytest.raises(ReportError, match=r"^r\.json: kernels\[0\]\.occurrences\[0\]\.grid: missing$"):
        Report.from_json(json.dumps(data), "r.json")


# --- the generator ----------------------------------------------------------------------------------


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass(frozen=True)
class Leaf:
    """A leaf record."""

    #: Its name.
    name: str
    weight: float = 0.0


@dataclasses.dataclass(frozen=True)
class Tree:
    count: int
    flag: bool
    nothing: None
    maybe: Optional[str]
    either: int | str
    colour: Colour
    kind: Literal["a", "b"]
    maybe_kind: Literal["a", "b"] | None
    pair: tuple[int, str]
    names: tuple[str, ...]
    items: list[Leaf]
    table: dict[str, float | None]
    anything: Any
    free: dict[str, Any]
    bare: list  # type: ignore[type-arg]
    leaf: Leaf
    maybe_leaf: Leaf | None = None


def test_generator_maps_every_kind_of_hint() -> None:
    generated = schema.generate(Tree, version=3, title="t", schema_id="urn:t",
                                optional=frozenset({"Tree.maybe_leaf"}))
    props = generated["properties"]
    assert props["schema_version"] == {"type": "integer", "const": 3,
                                       "description": "The schema version this file follows."}
    assert props["count"] == {"type": "integer"}
    assert props["flag"] == {"type": "boolean"}
    assert props["nothing"] == {"type": "null"}
    assert props["maybe"] == {"type": ["string", "null"]}
    assert props["either"] == {"type": ["integer", "string"]}
    assert props["colour"] == {"enum": ["red", "blue"]}
    assert props["kind"] == {"enum": ["a", "b"]}
    assert props["maybe_kind"] == {"enum": ["a", "b", None]}
    assert props["pair"] == {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                             "minItems": 2, "maxItems": 2}
    assert props["names"] == {"type": "array", "items": {"type": "string"}}
    assert props["items"] == {"type": "array", "items": {"type": "object", "$ref": "#/$defs/Leaf"}}
    assert props["table"] == {"type": "object", "additionalProperties": {"type": ["number", "null"]}}
    assert props["anything"] == {}
    assert props["free"] == {"type": "object"}
    assert props["bare"] == {"type": "array"}
    assert props["leaf"] == {"type": "object", "$ref": "#/$defs/Leaf"}
    assert props["maybe_leaf"] == {"type": ["object", "null"], "$ref": "#/$defs/Leaf"}
    assert "maybe_leaf" not in generated["required"] and generated["required"][0] == "schema_version"
    assert generated["additionalProperties"] is False
    assert generated["$defs"]["Leaf"] == {
        "description": "A leaf record.",
        "properties": {"name": {"description": "Its name.", "type": "string"}, "weight": {"type": "number"}},
        "required": ["name", "weight"],
        "additionalProperties": False,
    }
    jsonschema.Draft202012Validator.check_schema(generated)


def test_generator_refuses_what_json_cannot_hold() -> None:
    @dataclasses.dataclass
    class IntKeys:
        table: dict[int, str]

    @dataclasses.dataclass
    class Bytes:
        raw: bytes

    with pytest.raises(TypeError, match="keys are strings"):
        schema.generate(IntKeys, version=1, title="t", schema_id="urn:t")
    with pytest.raises(TypeError, match="no JSON Schema"):
        schema.generate(Bytes, version=1, title="t", schema_id="urn:t")
    with pytest.raises(TypeError, match="has no default"):
        schema.generate(Leaf, version=1, title="t", schema_id="urn:t", optional=frozenset({"Leaf.name"}))
    with pytest.raises(TypeError, match=r"no record has: \['Leaf.colour'\]"):
        schema.generate(Leaf, version=1, title="t", schema_id="urn:t", optional=frozenset({"Leaf.colour"}))


@pytest.mark.parametrize(("path", "text"), [
    ((), ""), (("meta",), "meta"), (("kernels", 2, "occurrences", 0, "grid"), "kernels[2].occurrences[0].grid"),
    (("grid", 0, 1), "grid[0][1]"),
])
def test_format_path(path: tuple[Any, ...], text: str) -> None:
    assert schema.format_path(path) == text


# --- start-up ---------------------------------------------------------------------------------------


def test_jsonschema_is_imported_only_to_read_a_saved_report() -> None:
    code = (
        "import sys\n"
        "import tritoninspect.cli, tritoninspect.model.report, tritoninspect.model.diff_report, tritoninspect.render\n"
        "assert 'jsonschema' not in sys.modules, 'imported at start-up'\n"
        "from tritoninspect.model.report import read_report\n"
        f"read_report({str(TESTS / 'gold' / 'report.json')!r})\n"
        "assert 'jsonschema' in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
