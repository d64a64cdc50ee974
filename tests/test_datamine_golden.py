"""DataMine IDL -> fields: golden files per table, the IDL's rules, every violation at once.

Golden layout: ``golden/datamine/<case>/schema.json`` with ``<table>.json`` beside it (the
expected DataHub SchemaFields of each table); ``golden/datamine/invalid/<case>.json`` with
``<case>.problems.json`` (every ``[path, reason]`` the schema breaks, in order).
Set FIELDGRAPH_REGEN_GOLDEN=1 to rewrite them.
"""

from __future__ import annotations

import json

import pytest

from fieldgraph.normalizers import SchemaNormalizationError, normalize, to_model, walk
from fieldgraph.normalizers.datamine import (
    DataMineSchemaError,
    parse_datamine,
    parse_datamine_tables,
    root_tables,
)
from fieldgraph.normalizers.detect import detect_format

from .golden import GOLDEN, REGEN

CASES = sorted(p.parent for p in (GOLDEN / "datamine").glob("*/schema.json"))
INVALID = sorted((GOLDEN / "datamine" / "invalid").glob("*.json"))
INVALID = [p for p in INVALID if not p.name.endswith(".problems.json")]


def _compare(expected_path, actual: str) -> None:
    if REGEN or not expected_path.exists():
        expected_path.write_text(actual)
    assert actual == expected_path.read_text(), f"output differs from {expected_path}"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_golden_tables(case):
    text = (case / "schema.json").read_text()
    tables = parse_datamine_tables(text)
    assert tables
    for name, model in tables.items():
        fields = walk(model)
        _compare(case / f"{name}.json", json.dumps([f.to_datahub() for f in fields], indent=2) + "\n")
        assert walk(parse_datamine(text, table=name)) == fields


@pytest.mark.parametrize("source", INVALID, ids=lambda p: p.stem)
def test_invalid_reports_every_problem(source):
    with pytest.raises(DataMineSchemaError) as info:
        parse_datamine_tables(source.read_text(), name=source.name)
    err = info.value
    assert isinstance(err, SchemaNormalizationError)
    _compare(source.with_suffix(".problems.json"), json.dumps(err.problems, indent=1) + "\n")
    for path, reason in err.problems:  # each problem is in the one message, with its path
        assert f"{path}: {reason}" in str(err) or (len(err.problems) == 1 and path in str(err))


def _schema(*tables, name="s"):
    return {"schema": name, "table_list": [{"table": t, "fields": f} for t, f in tables]}


def test_many_invalid_lists_all_violations():
    text = (GOLDEN / "datamine" / "invalid" / "many.json").read_text()
    with pytest.raises(DataMineSchemaError) as info:
        normalize(text, "datamine", name="many.json")
    msg = str(info.value)
    assert msg.startswith("schema 'many.json': 13 problems:")
    for needle in (
        "invoice.amount: id 2 is already used by invoice.issued_at",
        "invoice: a table has at most one sort key, got 2",
        "invoice.total_tax: a derived field must have id 0, got 3",
        "invoice.lines_count: a derived field must be optional",
        "invoice.lines_count: a derived field must be primitive",
        "invoice.fields[3]: field name '2nd_address' does not match",
        "table_list[1]: table name 'invoice line' does not match",
        "invoice.currency: unknown type 'VARCHAR'",
        "invoice.customer.name: isRequired must be true or false",
        "invoice.customer.fields[1]: id 1 is already used by invoice.customer.name",
    ):
        assert needle in msg


def test_spec_example_paths():
    """The IDL document's own example: List:table nests the rule table, Byte is an int."""
    fields = normalize((GOLDEN / "datamine" / "attribution" / "schema.json").read_text(), "datamine")
    assert [f.fieldPath for f in fields] == [
        "[version=2.0].[type=attribution_result].[type=int].contract_id",
        "[version=2.0].[type=attribution_result].[type=float].data_cost",
        "[version=2.0].[type=attribution_result].[type=array].[type=attribution_result_rule].rules",
        "[version=2.0].[type=attribution_result].[type=array].[type=attribution_result_rule].rules.[type=int].run_num",
        "[version=2.0].[type=attribution_result].[type=array].[type=attribution_result_rule].rules.[type=string].category_id",
        "[version=2.0].[type=attribution_result].[type=array].[type=attribution_result_rule].rules.[type=string].keyword",
        "[version=2.0].[type=attribution_result].[type=array].[type=attribution_result_rule].rules.[type=string].key",
        "[version=2.0].[type=attribution_result].[type=array].[type=attribution_result_rule].rules.[type=string].value",
        "[version=2.0].[type=attribution_result].[type=array].[type=attribution_result_rule].rules.[type=string].note",
    ]
    by = {f.simple_path: f for f in fields}
    assert not by["contract_id"].nullable and by["rules.category_id"].nullable
    assert by["rules.run_num"].nativeDataType == "Byte"
    assert json.loads(by["rules.run_num"].jsonProps) == {"id": 1, "isRequired": True, "isAscSortKey": True}
    assert json.loads(by["rules.note"].jsonProps) == {"id": 0, "isRequired": False, "isDerived": True}
    assert by["rules.note"].description == '\nField default value: "Unknown"'
    assert by["rules"].type.nested_type == ("record",)


def test_table_selection():
    text = (GOLDEN / "datamine" / "clickstream" / "schema.json").read_text()
    assert root_tables(text) == ["session"]
    assert to_model(text, "datamine").name == "session"  # the only root table
    assert parse_datamine(text, table="geo").name == "geo"
    with pytest.raises(SchemaNormalizationError, match=r"no table 'nope'; the tables are: geo, event, session"):
        parse_datamine(text, table="nope")
    two_roots = _schema(("a", [{"id": 1, "name": "x", "type": "INT32"}]),
                        ("b", [{"id": 1, "name": "y", "type": "INT32"}]))
    with pytest.raises(SchemaNormalizationError, match=r"2 tables \(a, b\).*not used by another \(a, b\)"):
        parse_datamine(two_roots)
    assert parse_datamine(two_roots, table="b").name == "b"
    one = _schema(("only", [{"id": 1, "name": "x", "type": "INT32"}]))
    assert parse_datamine(json.dumps(one)).name == "only"


def test_nullability_and_struct_forms():
    schema = _schema(("t", [
        {"id": 1, "name": "req", "type": "STRING", "isRequired": True},
        {"id": 2, "name": "opt", "type": "STRING"},
        {"id": 3, "name": "inline", "type": "STRUCT", "fields": [{"id": 1, "name": "a", "type": "BOOL"}]},
        {"id": 4, "name": "obj", "type": {"type": "STRUCT", "name": "point",
                                          "fields": [{"id": 1, "name": "x", "type": "DOUBLE", "isRequired": True}]}},
        {"id": 5, "name": "flagged", "type": "INT32", "constraints": {"isRequired": True, "isFrequentlyUsed": True}},
        {"id": 6, "name": "extra", "type": "INT32", "unit": "ms"},
    ]))
    fields = {f.simple_path: f for f in normalize(schema, "datamine")}
    assert [p for p in fields] == ["req", "opt", "inline", "inline.a", "obj", "obj.x", "flagged", "extra"]
    assert not fields["req"].nullable and fields["opt"].nullable
    assert fields["inline"].fieldPath == "[version=2.0].[type=t].[type=inline].inline"
    assert fields["obj"].fieldPath == "[version=2.0].[type=t].[type=point].obj"
    assert fields["obj.x"].fieldPath == "[version=2.0].[type=t].[type=point].obj.[type=double].x"
    assert not fields["flagged"].nullable
    assert json.loads(fields["flagged"].jsonProps) == {"id": 5, "isRequired": True, "isFrequentlyUsed": True}
    assert json.loads(fields["extra"].jsonProps) == {"id": 6, "isRequired": False, "unit": "ms"}


def test_recursive_table_is_closed_by_a_ref():
    schema = _schema(("node", [
        {"id": 1, "name": "label", "type": "STRING", "isRequired": True},
        {"id": 2, "name": "children", "type": "List:node"},
    ]))
    fields = normalize(schema, "datamine")
    assert [f.fieldPath for f in fields] == [
        "[version=2.0].[type=node].[type=string].label",
        "[version=2.0].[type=node].[type=array].[type=node].children",
    ]
    assert fields[1].recursive


def test_single_problem_names_its_path():
    schema = _schema(("t", [{"id": 1, "name": "a", "type": "INT8"}]), name="demo")
    with pytest.raises(DataMineSchemaError) as info:
        normalize(schema, "datamine")
    assert info.value.path == "t.a" and info.value.schema == "demo"
    assert str(info.value).startswith("schema 'demo' at t.a: unknown type 'INT8'")


def test_bad_json_and_shape():
    with pytest.raises(SchemaNormalizationError, match="not valid JSON"):
        normalize("{nope", "datamine")
    with pytest.raises(DataMineSchemaError, match="non-empty list of tables"):
        normalize({"schema": "x", "table_list": []}, "datamine")
    with pytest.raises(DataMineSchemaError, match="is a JSON object"):
        normalize([1, 2], "datamine")


def test_detect_format():
    text = (GOLDEN / "datamine" / "clickstream" / "schema.json").read_bytes()
    assert detect_format("clickstream.json", text) == "datamine"
