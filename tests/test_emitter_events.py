"""The producer API's events (no broker): what ``lineage_mcp``/``schema_mcp`` build is what fieldgraph reads."""

from __future__ import annotations

import json

from fieldgraph.changes import LineageChange, SchemaChange
from fieldgraph.ingest import lineage_mcp, schema_mcp
from fieldgraph.ingest.sources import decode_event
from fieldgraph.normalizers.urns import FieldUrn, make_field_urn

from .conftest import ds

A, B = ds("db.a"), ds("db.b")


def test_field_paths_with_reserved_characters_are_percent_encoded() -> None:
    """A field named ``a,b`` (or with parentheses) gives a field URN DataHub and fieldgraph can both parse."""
    ev = lineage_mcp(A, [("a,b", [make_field_urn(B, "x (raw)")]), ("plain", [make_field_urn(B, "y")])], ts=5)
    downs = [d for fg in json.loads(ev["aspect"]["value"])["fineGrainedLineages"] for d in fg["downstreams"]]
    assert f"urn:li:schemaField:({A},a%2Cb)" in downs
    assert sorted(FieldUrn.parse(d).field_path for d in downs) == ["a,b", "plain"]
    (change,) = decode_event(ev)
    assert isinstance(change, LineageChange)
    assert {(FieldUrn.parse(e.downstream).field_path, FieldUrn.parse(e.upstream).field_path)
            for e in change.edges} == {("a,b", "x (raw)"), ("plain", "y")}


def test_schema_mcp_round_trip() -> None:
    avro = '{"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]}'
    (change,) = decode_event(schema_mcp(A, avro, format="avro", ts=9))
    assert isinstance(change, SchemaChange) and change.ts == 9
    assert [f.fieldPath for f in change.fields] == ["[version=2.0].[type=R].[type=long].id"]
