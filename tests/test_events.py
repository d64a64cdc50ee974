"""Decoding DataHub change events (MCP, MCL, MCE, MAE) into typed changes; errors name the place."""

from __future__ import annotations

import json

import pytest

from fieldgraph.changes import AspectDelete, LineageChange, SchemaChange
from fieldgraph.errors import EventError
from fieldgraph.ingest.replay import decode, read_events
from fieldgraph.ingest.sources import decode_event

from .conftest import EXAMPLES, ds, lineage_event, mcp, schema_event, sf

A = ds("db.a")
B = ds("db.b")


def test_mcp_schema_with_fields() -> None:
    (c,) = decode_event(schema_event(A, ["x", "y"], ts=5, version=3))
    assert isinstance(c, SchemaChange)
    assert (c.dataset, c.aspect, c.ts, c.version) == (A, "schemaMetadata", 5, 3)
    assert [f.fieldPath for f in c.fields] == ["x", "y"]


def test_mcl_and_its_created_time() -> None:
    ev = schema_event(A, ["x"], ts=0)
    del ev["systemMetadata"]
    ev["created"] = {"time": 42, "actor": "urn:li:corpuser:x"}
    ev["previousAspectValue"] = None
    (c,) = decode_event(ev)
    assert c.ts == 42


def test_kafka_schema_without_fields_is_normalized() -> None:
    (c,) = decode_event(json.loads((EXAMPLES / "01_kafka_orders.json").read_text()))
    assert isinstance(c, SchemaChange)
    paths = [f.fieldPath for f in c.fields]
    assert "[version=2.0].[key=True].[type=OrderKey].[type=string].orderId" in paths
    assert "[version=2.0].[type=Order].[type=Header].header.[type=string].customerId" in paths


def test_mce_snapshot_with_pegasus2avro_aspects_and_rfc_lineage() -> None:
    (ev,) = json.loads((EXAMPLES / "02_fact_orders.mce.json").read_text())
    schema, lineage = decode_event(ev)
    assert isinstance(schema, SchemaChange) and schema.ts == ev["systemMetadata"]["lastObserved"]
    assert isinstance(lineage, LineageChange) and lineage.aspect == "datasetUpstreamLineage"
    e = lineage.edges[0]
    assert e.props.transformation and e.props.transformation.endswith("Identity")  # {"string": ...} unwrapped
    assert (e.props.source_format, e.props.subtype) == ("datahub-rfc", "IDENTITY")
    assert e.upstream.endswith("/header/customerId)")


def test_mae_new_snapshot() -> None:
    (ev,) = json.loads((EXAMPLES / "02_fact_orders.mce.json").read_text())
    mae = {"oldSnapshot": None, "newSnapshot": ev["proposedSnapshot"]}
    assert [c.aspect for c in decode_event(mae)] == ["schemaMetadata", "datasetUpstreamLineage"]


def test_rfc_top_level_form() -> None:
    body = {"DatasetUpstreamLineage": {"fieldMappings": [
        {"sourceFields": [{"string": f"urn:li:datasetField:({B},/x)"}], "destinationField":
         f"urn:li:datasetField:({A},/y)", "transformationFunction": None, "created": None}]}}
    (c,) = decode_event(mcp(A, "datasetUpstreamLineage", body, 1))
    assert isinstance(c, LineageChange)
    assert c.edges[0].props.transformation.endswith("BlackBox")  # the RFC default


def test_fine_grained_lineage() -> None:
    (c,) = decode_event(lineage_event(A, [(sf(A, "y"), [sf(B, "x")])], ts=7))
    assert isinstance(c, LineageChange) and c.aspect == "upstreamLineage"
    (e,) = c.edges
    assert (e.downstream, e.upstream) == (sf(A, "y"), sf(B, "x"))
    assert (e.props.upstream_type, e.props.downstream_type, e.props.confidence) == ("FIELD_SET", "FIELD", 1.0)
    assert (e.props.created_at, e.props.index, c.fields) == (None, 0, (sf(A, "y"),))  # no time of its own


def test_delete_and_unrelated_aspects() -> None:
    (c,) = decode_event(mcp(A, "upstreamLineage", None, 9, change="DELETE"))
    assert c == AspectDelete(A, "upstreamLineage", 9, "")
    assert decode_event(mcp(A, "ownership", {"owners": []}, 1)) == []
    assert decode_event({**mcp(A, "schemaMetadata", {}, 1), "entityType": "chart"}) == []


@pytest.mark.parametrize("event, where, what", [
    ({**schema_event(A, ["x"], 1), "changeType": "MERGE"}, "changeType", "Input should be"),
    ({**schema_event(A, ["x"], 1), "entityUrn": "urn:li:dataset:(bad)"}, "entityUrn", "3 parts"),
    ({**schema_event(A, ["x"], 1), "aspect": {"value": "{not json", "contentType": "application/json"}},
     "aspect.value", "not JSON"),
    ({**schema_event(A, ["x"], 1), "typo": 1}, "typo", "Extra inputs"),
    (mcp(A, "schemaMetadata", {"fields": [{"fieldPath": "x"}]}, 1), "fields[0]", "not a SchemaField"),
    (mcp(A, "schemaMetadata", {"platformSchema": {"com.linkedin.schema.MySqlDDL": {"tableSchema": ""}}}, 1),
     "platformSchema", "no fields"),
    (lineage_event(A, [(sf(B, "y"), [sf(B, "x")])], 1), "downstreams[0]", "not a field of the aspect's dataset"),
    (lineage_event(A, [(sf(A, "y"), ["urn:li:corpuser:x"])], 1), "upstreams[0]", "datasetField or schemaField"),
    (mcp(A, "upstreamLineage", {"fineGrainedLineages": [{"upstreamType": "FIELD_SET", "downstreamType": "ROW"}]}, 1),
     "downstreamType", "Input should be"),
    ({**schema_event(A, ["x"], 1), "changeType": "PATCH"}, "changeType", "PATCH"),
    ([1, 2], "", "JSON object"),
])
def test_bad_events_name_the_place(event: object, where: str, what: str) -> None:
    with pytest.raises(EventError) as exc:
        decode_event(event)
    assert where in str(exc.value) and what in str(exc.value), str(exc.value)


def test_read_events_forms_and_line_numbers(tmp_path) -> None:
    good = schema_event(A, ["x"], 1)
    (tmp_path / "a.jsonl").write_text(json.dumps(good) + "\n\n{oops\n" + json.dumps(good) + "\n")
    (tmp_path / "b.json").write_text("[\n" + json.dumps(good) + ",\n" + json.dumps({"x": 1}) + "\n]\n")
    (tmp_path / "c.json").write_text(json.dumps(good, indent=2))
    a = list(read_events(tmp_path / "a.jsonl"))
    assert [(r.line, r.error is None) for r in a] == [(1, True), (3, False), (4, True)]
    b = list(read_events(tmp_path / "b.json"))
    assert [r.line for r in b] == [2, 3]
    changes, reject = decode(b[1])
    assert not changes and reject.line == 3 and "not a DataHub change event" in reject.error
    assert [r.line for r in read_events(tmp_path / "c.json")] == [1]
