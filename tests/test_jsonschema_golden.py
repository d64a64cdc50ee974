"""Golden tests for the JSON Schema normalizer: ``golden/jsonschema/<case>.json`` inputs,
``<case>.fields.json`` expected ``to_datahub()`` lists (``<case>.key.fields.json`` for the
key schema). The expected files are DataHub's output: test_jsonschema_differential checks
every input against DataHub itself. Regenerate with FIELDGRAPH_REGEN_GOLDEN=1.
"""

from __future__ import annotations

import json

import pytest

from fieldgraph.normalizers import SchemaNormalizationError, normalize, to_model
from fieldgraph.normalizers.jsonschema import parse_json_schema
from fieldgraph.normalizers.model import Map, Primitive, Record, Union

from .golden import GOLDEN, cases, check

INPUTS = [p for p in cases("jsonschema", "*.json") if not p.name.endswith(".fields.json")]


@pytest.mark.parametrize("source", INPUTS, ids=lambda p: p.stem)
@pytest.mark.parametrize("key", [False, True], ids=["value", "key"])
def test_golden(source, key):
    fields = normalize(source.read_text(), "json-schema", key=key)
    check(source, fields, ".key.fields.json" if key else ".fields.json")


def test_inputs_cover_the_conventions():
    assert len(INPUTS) >= 10
    text = "".join(p.read_text() for p in INPUTS)
    for word in ("date-time", '"required"', "oneOf", "anyOf", "allOf", "$ref", "definitions", '"enum"',
                 '"null"]', '"const"', "additionalProperties", '"default"', "description", "javaType"):
        assert word in text, word


def test_accepts_text_bytes_and_dicts():
    schema = {"title": "T", "type": "object", "properties": {"a": {"type": "string"}}}
    as_text = normalize(json.dumps(schema), "json-schema")
    assert normalize(json.dumps(schema).encode(), "json-schema") == as_text
    assert normalize(schema, "json-schema") == as_text
    assert [f.fieldPath for f in as_text] == ["[version=2.0].[type=T].[type=string].a"]
    assert schema == {"title": "T", "type": "object", "properties": {"a": {"type": "string"}}}  # untouched


def test_recursion_terminates_and_is_marked():
    fields = normalize((GOLDEN / "jsonschema" / "refs_recursive.json").read_text(), "json-schema")
    recursive = [f.fieldPath for f in fields if f.recursive]
    assert "[version=2.0].[type=Tree].[type=Node].root.[type=Node].parent" in recursive
    assert "[version=2.0].[type=Tree].[type=Tree].self" in recursive


def test_endless_datahub_cases_terminate():
    # DataHub recurses forever on an array/union cycle with no object in it; we stop, marked recursive.
    fields = normalize((GOLDEN / "jsonschema" / "recursion_array.json").read_text(), "json-schema")
    assert fields[-2].recursive and fields[-2].fieldPath.endswith(".value.[type=union].Any")
    for schema in ({"type": "array", "items": {"$ref": "#"}},
                   {"additionalProperties": {"$ref": "#"}},
                   {"title": "U", "oneOf": [{"$ref": "#"}, {"type": "string"}]}):
        out = normalize(schema, "json-schema")
        assert out and any(f.recursive for f in out)


def test_model_shapes():
    model = to_model({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}},
                                                      "m": {"additionalProperties": {"type": "string"}},
                                                      "u": {"oneOf": [{"type": "null"}, {"type": "string"}]}}},
                     "json-schema")
    a, m, u = model.fields
    assert isinstance(model, Record) and isinstance(a.type, Record) and a.type.fields[0].name == "integer"
    assert isinstance(m.type, Map) and isinstance(m.type.values, Primitive)
    assert isinstance(u.type, Union) and [x.type for x in u.type.members] == ["null", "string"]


@pytest.mark.parametrize(
    "schema, where, words",
    [
        ('{"type": "object", "properties": {"a": ', None, ["not valid JSON"]),
        (b"\xff\xfe", None, ["UTF-8"]),
        ("[1, 2]", "#", ["object"]),
        ({"title": "T", "properties": {"a": {"type": "strin"}}}, "#/properties/a/type", ["invalid type", "strin"]),
        ({"properties": {"a": {"type": ["string", "string"]}}}, "#/properties/a/type", ["invalid type list"]),
        ({"properties": {"a": {"$ref": "#/definitions/Missing"}}}, "#/properties/a", ["no such definition"]),
        ({"properties": {"a": {"$ref": "other.json#/x"}}}, "#/properties/a", ["outside this document"]),
        ({"properties": {"a": {"$ref": "#/properties/a"}}}, "#/properties/a", ["itself"]),
        ({"definitions": {"A": {"$ref": "#/definitions/B"}, "B": {"$ref": "#/definitions/A"}},
          "properties": {"a": {"$ref": "#/definitions/A"}}}, None, ["cycle"]),
        ({"properties": {"a": {"type": "string"}}, "required": "a"}, "#/required", ["required"]),
        ({"properties": {"a": {"oneOf": []}}}, "#/properties/a/oneOf", ["non-empty"]),
        ({"properties": {"a": 5}}, "#/properties/a", ["object or a boolean"]),
        ({"properties": {"a": True}}, "#/properties/a", ["boolean schema"]),
        ({"properties": {"a": {"type": "array", "items": [{"type": "string"}]}}}, "#/properties/a/items", ["tuple"]),
        ({"properties": {"a": {"enum": "x"}}}, "#/properties/a/enum", ["enum"]),
    ],
)
def test_errors_name_schema_and_place(schema, where, words):
    with pytest.raises(SchemaNormalizationError) as info:
        parse_json_schema(schema, name="orders.schema.json")
    err = info.value
    assert err.schema == "orders.schema.json"
    if where is not None:
        assert err.path == where, str(err)
    for word in words:
        assert word in str(err), str(err)


def test_error_names_the_title_without_a_name():
    with pytest.raises(SchemaNormalizationError) as info:
        normalize({"title": "Order", "properties": {"a": {"type": 1}}}, "json-schema")
    assert info.value.schema == "Order" and "Order" in str(info.value)
