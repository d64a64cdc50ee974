"""One logical schema written in every format gives the v1 (simple) paths you would expect.

The schema: an order with a required 64-bit ``id``, an optional string ``customer``, a
list of strings ``tags`` and a nested ``address`` struct (``street``, ``zip``). Formats
whose converter has not landed yet are skipped (keyed on the converter module existing).
"""

from __future__ import annotations

import importlib.util
import json

import pytest

from fieldgraph.normalizers import normalize

EXPECTED_V1 = ["id", "customer", "tags", "address", "address.street", "address.zip"]
# proto3 ``optional`` is a synthetic oneof ``_customer`` (a union holding ``customer``), and
# DataHub's Protobuf converter sorts the fields by their v2 path.
EXPECTED_PROTOBUF_V1 = [
    "tags", "id", "address", "address.zip", "address.street", "_customer", "_customer.customer",
]


def _needs(module: str) -> None:
    if importlib.util.find_spec(f"fieldgraph.normalizers.{module}") is None:
        pytest.skip(f"the {module} converter is not there yet")

# DataHub's JSON Schema converter gives an array's items a field of their own, named after their type.
EXPECTED_JSON_SCHEMA_V1 = ["id", "customer", "tags", "tags.string", "address", "address.street", "address.zip"]

AVRO = {
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
            {"name": "street", "type": "string"},
            {"name": "zip", "type": "int"},
        ]}},
    ],
}
JSON_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "required": ["id", "tags", "address"],
    "properties": {
        "id": {"type": "integer"},
        "customer": {"type": ["string", "null"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "address": {
            "type": "object", "title": "Address", "required": ["street", "zip"],
            "properties": {"street": {"type": "string"}, "zip": {"type": "integer"}},
        },
    },
}
PROTOBUF = """
syntax = "proto3";
package shop;

message Order {
  int64 id = 1;
  optional string customer = 2;
  repeated string tags = 3;
  Address address = 4;
}

message Address {
  string street = 1;
  int32 zip = 2;
}
"""
SPARK = {"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": False, "metadata": {}},
    {"name": "customer", "type": "string", "nullable": True, "metadata": {}},
    {"name": "tags", "type": {"type": "array", "elementType": "string", "containsNull": False},
     "nullable": False, "metadata": {}},
    {"name": "address", "type": {"type": "struct", "fields": [
        {"name": "street", "type": "string", "nullable": False, "metadata": {}},
        {"name": "zip", "type": "integer", "nullable": False, "metadata": {}},
    ]}, "nullable": False, "metadata": {}},
]}
DATAMINE = {"schema": "shop", "table_list": [
    {"table": "Order", "fields": [
        {"id": 1, "name": "id", "type": "INT64", "isRequired": True},
        {"id": 2, "name": "customer", "type": "STRING"},
        {"id": 3, "name": "tags", "type": "List:STRING", "isRequired": True},
        {"id": 4, "name": "address", "type": "Address", "isRequired": True},
    ]},
    {"table": "Address", "fields": [
        {"id": 1, "name": "street", "type": "STRING", "isRequired": True},
        {"id": 2, "name": "zip", "type": "INT32", "isRequired": True},
    ]},
]}


def _arrow():
    pa = pytest.importorskip("pyarrow")
    return pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        pa.field("customer", pa.string()),
        pa.field("tags", pa.list_(pa.string()), nullable=False),
        pa.field("address", pa.struct([
            pa.field("street", pa.string(), nullable=False),
            pa.field("zip", pa.int32(), nullable=False),
        ]), nullable=False),
    ])


def _parquet():
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    sink = pa.BufferOutputStream()
    pq.write_table(_arrow().empty_table(), sink)
    return sink.getvalue().to_pybytes()


CASES = {
    # format: (module, schema factory, expected v1 paths in order)
    "avro": ("avro", lambda: json.dumps(AVRO), EXPECTED_V1),
    "json-schema": ("jsonschema", lambda: json.dumps(JSON_SCHEMA), EXPECTED_JSON_SCHEMA_V1),
    "protobuf": ("protobuf", lambda: PROTOBUF, EXPECTED_PROTOBUF_V1),
    "arrow": ("arrow", _arrow, EXPECTED_V1),
    "parquet": ("arrow", _parquet, EXPECTED_V1),
    "spark": ("spark", lambda: json.dumps(SPARK), EXPECTED_V1),
    "datamine": ("datamine", lambda: json.dumps(DATAMINE), EXPECTED_V1),
}


@pytest.mark.parametrize("fmt", list(CASES))
def test_same_v1_paths_in_every_format(fmt):
    module, schema, expected = CASES[fmt]
    _needs(module)
    fields = normalize(schema(), fmt, name=f"order.{fmt}")
    assert [f.simple_path for f in fields] == expected
    if fmt == "protobuf":
        assert fields == sorted(fields, key=lambda f: f.fieldPath)
    # every path is a v2 path whose names are the v1 path
    assert all(f.fieldPath.startswith("[version=2.0].") for f in fields)


@pytest.mark.parametrize("fmt", list(CASES))
def test_nullability_carries_over(fmt):
    """Where the format says it, customer is the one nullable top-level field."""
    module, schema, _ = CASES[fmt]
    _needs(module)
    if fmt == "protobuf":
        pytest.skip("DataHub's Protobuf fields are all nullable")
    fields = {f.simple_path: f for f in normalize(schema(), fmt)}
    assert fields["customer"].nullable
    assert not fields["id"].nullable


@pytest.mark.parametrize("fmt", [f for f in CASES if f not in ("protobuf",)])
def test_diff_of_the_same_schema_across_formats_is_only_paths(fmt):
    """The diff works over any format: comparing a format with itself is identical."""
    from fieldgraph.normalizers.diff import diff_fields

    module, schema, _ = CASES[fmt]
    _needs(module)
    fields = normalize(schema(), fmt)
    assert diff_fields(fields, fields).identical
