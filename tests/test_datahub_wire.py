"""DataHub's wire formats both ways, with DataHub's own library (acryl-datahub, a test extra): its file sink's
files ingest with no reject, a DELETE without system metadata applies in arrival order, and what fieldgraph
emits is what DataHub's Avro deserializer reads. Graph tests run on both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fieldgraph.changes import UNSTAMPED, AspectDelete, DatasetDelete, LineageChange, SchemaChange
from fieldgraph.graph.answers import encode
from fieldgraph.graph.plan import in_arrival_order
from fieldgraph.ingest.cli import app
from fieldgraph.ingest.emitter import change_event, to_event, wire_format, wire_mcp
from fieldgraph.ingest.sources import decode_event
from fieldgraph.normalizers.urns import make_field_urn

from .conftest import datahub_schema, ds, example_changes, lineage_event, schema_event, sf, stamped

m = pytest.importorskip("datahub.metadata.schema_classes")
from datahub.emitter.mce_builder import make_schema_field_urn  # noqa: E402
from datahub.emitter.mcp import MetadataChangeProposalWrapper as MCPW  # noqa: E402
from datahub.ingestion.sink.file import write_metadata_file  # noqa: E402

ORDERS, RAW = ds("shop.orders"), ds("shop.raw_orders")


def _lineage(edges: list[tuple[str, str]]) -> Any:
    """(downstream path of ORDERS, upstream path of RAW) pairs as DataHub's upstreamLineage."""
    return m.UpstreamLineageClass(
        upstreams=[m.UpstreamClass(dataset=RAW, type="TRANSFORMED")],
        fineGrainedLineages=[m.FineGrainedLineageClass(
            upstreamType="FIELD_SET", upstreams=[make_schema_field_urn(RAW, up)], downstreamType="FIELD",
            downstreams=[make_schema_field_urn(ORDERS, down)], transformOperation="IDENTITY") for down, up in edges])


def golden_items() -> tuple[list[Any], int]:
    """What a DataHub ingestion run writes for two tables (MCPs, a legacy MCE, entities and aspects fieldgraph
    does not read), and how many of the events have nothing fieldgraph reads (the query's statement it reads:
    test_sql.py)."""
    items = [
        stamped(MCPW(entityUrn=RAW, aspect=datahub_schema("id", "amount", "a,b")), 1000),
        stamped(MCPW(entityUrn=ORDERS, aspect=datahub_schema("id", "total", "ab (copy)")), 1000),
        stamped(MCPW(entityUrn=ORDERS, aspect=_lineage([("total", "amount"), ("ab (copy)", "a,b")])), 1000),
        stamped(MCPW(entityUrn=ORDERS, aspect=m.SubTypesClass(typeNames=["view"])), 1000),
        stamped(MCPW(entityUrn=ORDERS, aspect=m.StatusClass(removed=False)), 1000),
        stamped(MCPW(entityUrn=ORDERS, aspect=m.DatasetPropertiesClass(name="orders", customProperties={})), 1000),
        stamped(MCPW(entityUrn="urn:li:query:q1", aspect=m.QueryPropertiesClass(
            statement=m.QueryStatementClass(value="INSERT INTO orders SELECT id, amount FROM raw_orders"),
            source="SYSTEM", created=m.AuditStampClass(1000, "urn:li:corpuser:etl"),
            lastModified=m.AuditStampClass(1000, "urn:li:corpuser:etl"))), 1000),
        stamped(MCPW(entityUrn="urn:li:container:c1", aspect=m.ContainerPropertiesClass(name="shop")), 1000),
        m.MetadataChangeEventClass(proposedSnapshot=m.DatasetSnapshotClass(
            urn=ds("shop.customers"), aspects=[datahub_schema("id", "email"), m.StatusClass(removed=False)])),
    ]
    return items, 4


def test_a_datahub_file_sink_file_ingests_with_no_reject_on_both_backends(graph, tmp_path: Path) -> None:
    items, unused = golden_items()
    golden = tmp_path / "golden.json"
    write_metadata_file(golden, items)
    assert '"json": {' in golden.read_text()  # the file sink's form: the aspect as an object
    rejects = tmp_path / "rejects.jsonl"
    res = CliRunner().invoke(app, ["ingest", str(golden), "--graph", graph.uri, "--rejects", str(rejects), "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout[res.stdout.index("{"):])
    assert (summary["events"], summary["rejected"], summary["skipped"]) == (len(items), 0, unused)
    assert not rejects.exists()
    ups = graph.upstream(make_field_urn(ORDERS, "ab (copy)"))
    assert [(h.dataset_urn, h.field_path) for h in ups.hops] == [(RAW, "a,b")]
    assert {f["fieldPath"] for f in encode(graph.fields(ds("shop.customers")))} == {"id", "email"}

    res = CliRunner().invoke(app, ["ingest", str(golden), "--graph", graph.uri, "--rejects", str(rejects),
                                   "--strict-aspects", "--json"])
    assert res.exit_code == 3, res.output
    rejected = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert len(rejected) == unused
    assert all("is not one fieldgraph reads" in r["error"] for r in rejected)


def test_a_delete_without_system_metadata_applies_in_arrival_order(graph) -> None:
    """DataHub's MetadataChangeProposalWrapper sends DELETEs without systemMetadata: newer than what the store
    holds when it arrives, in a later batch or in the same one, and a replay of it changes nothing."""
    up = lineage_event(ORDERS, [(sf(ORDERS, "total"), [sf(RAW, "amount")])], 5000)
    schemas = [schema_event(RAW, ["amount"], 10), schema_event(ORDERS, ["total"], 10)]
    delete = MCPW(entityUrn=ORDERS, aspectName="upstreamLineage", changeType="DELETE", aspect=None).to_obj()
    assert "systemMetadata" not in delete
    (change,) = decode_event(delete)
    assert isinstance(change, AspectDelete) and change.ts == UNSTAMPED

    def upstream() -> list[str | None]:
        return [h.field_path for h in graph.upstream(sf(ORDERS, "total")).hops]

    graph.ingest([c for e in [*schemas, up] for c in decode_event(e)])
    assert upstream() == ["amount"]
    graph.ingest([change])  # a later batch: newer than the stored stamp 5000
    assert upstream() == []
    graph.ingest([c for e in [up, delete] for c in decode_event(e)])  # replayed: the same again
    assert upstream() == []
    graph.ingest([c for e in [lineage_event(ORDERS, [(sf(ORDERS, "total"), [sf(RAW, "amount")])], 6000)]
                  for c in decode_event(e)])  # a newer stamped upsert comes back
    assert upstream() == ["amount"]
    graph.ingest([c for e in [delete, lineage_event(ORDERS, [(sf(ORDERS, "total"), [sf(RAW, "amount")])], 6000)]
                  for c in decode_event(e)])  # one batch: the delete, then the upsert arrives again (re-applied)
    assert upstream() == ["amount"]
    as_dataset = MCPW(entityUrn=ORDERS, aspectName="datasetKey", changeType="DELETE", aspect=None).to_obj()
    graph.ingest(decode_event(as_dataset))  # the whole dataset: its lineage goes, its fields are removed
    assert upstream() == []
    assert all(f["removed"] for f in encode(graph.fields(ORDERS)))


def test_unstamped_deletes_take_the_newest_stamp_before_them() -> None:
    up = LineageChange(ORDERS, "upstreamLineage", ts=700)
    late = LineageChange(ORDERS, "upstreamLineage", ts=300)
    d = AspectDelete(ORDERS, "upstreamLineage", UNSTAMPED)
    stamped = in_arrival_order([late, d, up, d], newest=500)
    assert [c.ts for c in stamped] == [300, 500, 700, 700]
    assert in_arrival_order([d], newest=-1)[0].ts == 0  # nothing before it: the epoch


# --- emitting -------------------------------------------------------------------------------------------------


def test_every_typed_change_becomes_an_event_that_reads_back_as_itself() -> None:
    def essentials(c: Any) -> Any:
        match c:
            case SchemaChange():
                return (c.dataset, c.version, c.ts, [(f.fieldPath, f.nativeDataType) for f in c.fields])
            case LineageChange():
                return (c.dataset, c.aspect, c.ts, sorted((e.downstream, e.upstream, e.props.transformation,
                                                           e.props.confidence) for e in c.edges))
        return c

    changes = [c for c in example_changes() if isinstance(c, (SchemaChange, LineageChange))]
    assert {type(c) for c in changes} == {SchemaChange, LineageChange}
    changes += [AspectDelete(ORDERS, "schemaMetadata", 77), AspectDelete(ORDERS, "upstreamLineage", UNSTAMPED),
                DatasetDelete(ORDERS, 78)]
    for c in changes:
        (back,) = decode_event(json.loads(json.dumps(change_event(c))))
        assert essentials(back) == essentials(c), c.origin


def test_the_emitter_takes_datahub_wrappers_and_percent_encodes_what_it_builds() -> None:
    lineage = _lineage([("ab (copy)", "a,b")])
    ev = to_event(MCPW(entityUrn=ORDERS, aspect=lineage))
    (change,) = decode_event(ev)
    assert isinstance(change, LineageChange)
    assert [(e.downstream, e.upstream) for e in change.edges] == [
        (make_schema_field_urn(ORDERS, "ab (copy)"), make_schema_field_urn(RAW, "a,b"))]
    assert make_field_urn(RAW, "a,b", form="schemaField") == make_schema_field_urn(RAW, "a,b")


def test_the_topic_decides_the_wire_format() -> None:
    from fieldgraph.errors import ConfigError

    assert wire_format("MetadataChangeProposal_v1") == "avro"
    assert wire_format("fieldgraph.events") == "json"
    assert wire_format("MetadataChangeProposal_v1", "json") == "json"
    with pytest.raises(ConfigError, match="written by DataHub itself"):
        wire_format("MetadataChangeLog_Versioned_v1")


def test_the_bundled_mcp_schema_is_datahubs_own() -> None:
    from datahub.metadata.schemas import getMetadataChangeProposalSchema

    from fieldgraph.ingest.decode import MCP_SCHEMA

    assert json.loads(MCP_SCHEMA.read_text()) == json.loads(getMetadataChangeProposalSchema())


def test_what_fieldgraph_encodes_datahubs_deserializer_reads_exactly() -> None:
    """Through confluent-kafka's in-process registry (no Confluent-API registry server can run here)."""
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    from datahub.metadata.schemas import getMetadataChangeProposalSchema

    from fieldgraph.ingest.decode import McpEncoder, registry_client

    enc = McpEncoder("mock://wire-test", subject="MetadataChangeProposal_v1-value")
    read = AvroDeserializer(registry_client("mock://wire-test"), schema_str=getMetadataChangeProposalSchema())
    ctx = SerializationContext("MetadataChangeProposal_v1", MessageField.VALUE)
    events = [schema_event(RAW, ["amount", "a,b"], 10),
              to_event(MCPW(entityUrn=ORDERS, aspect=_lineage([("total", "amount")]))),
              to_event(MCPW(entityUrn=ORDERS, aspectName="upstreamLineage", changeType="DELETE", aspect=None)),
              json.loads(json.dumps(MCPW(entityUrn=ORDERS, aspect=m.StatusClass(removed=True)).to_obj(
                  simplified_structure=True)))]  # the file sink's {"json": {...}} form
    assert "json" in events[-1]["aspect"]
    for ev in events:
        got = m.MetadataChangeProposalClass.from_obj(read(enc.encode(wire_mcp(ev)), ctx), tuples=True)
        assert (got.entityType, got.entityUrn, got.changeType, got.aspectName) == (
            ev["entityType"], ev["entityUrn"], ev["changeType"], ev["aspectName"])
        if "aspect" in ev:
            sent = ev["aspect"].get("json") or json.loads(ev["aspect"]["value"])
            assert json.loads(got.aspect.value) == sent
        else:
            assert got.aspect is None
        sent_meta = ev.get("systemMetadata")
        assert (got.systemMetadata and got.systemMetadata.lastObserved) == (sent_meta and sent_meta["lastObserved"])


def test_snapshots_are_not_mcps() -> None:
    from fieldgraph.errors import EmitError

    mce = m.MetadataChangeEventClass(proposedSnapshot=m.DatasetSnapshotClass(urn=ORDERS, aspects=[datahub_schema("id")]))
    with pytest.raises(EmitError, match="legacy snapshot"):
        wire_mcp(to_event(mce))


def test_a_field_attribute_of_the_wrong_type_is_a_bad_event() -> None:
    from fieldgraph.errors import EventError

    ev = schema_event(ORDERS, ["id"], 5)
    aspect = json.loads(ev["aspect"]["value"])
    aspect["fields"][0]["nativeDataType"] = {"not": "a string"}
    ev["aspect"]["value"] = json.dumps(aspect)
    with pytest.raises(EventError, match=r"fields\[0\].*nativeDataType must be a string, got dict"):
        decode_event(ev)


@pytest.mark.parametrize(("attrs", "reason"), [
    ({"field": {"description": "broken \ud800"}}, "holds a lone surrogate"),
    ({"field": {"fieldPath": "a\x00b"}}, "holds a NUL character"),
    ({"version": 10**30}, "does not fit in 64 bits"),
])
def test_values_the_graph_cannot_store_are_refused_before_anything_is_written(graph, attrs, reason) -> None:
    """Refused as the event is read (decode_event), and by the writer itself, for changes made in Python: before
    anything is written, with the change's origin."""
    from dataclasses import replace

    from fieldgraph.errors import GraphRefused

    ev = schema_event(ORDERS, ["id"], 5)
    aspect = json.loads(ev["aspect"]["value"])
    aspect["fields"][0].update(attrs.get("field", {}))
    aspect.update({k: v for k, v in attrs.items() if k != "field"})
    ev["aspect"]["value"] = json.dumps(aspect)
    with pytest.raises(GraphRefused, match=reason):
        decode_event(ev, origin="poison.json:1")

    (clean,) = decode_event(schema_event(ORDERS, ["id"], 5), origin="poison.json:1")
    field = clean.fields[0]
    for k, v in attrs.get("field", {}).items():
        setattr(field, k, v)
    bad = [replace(clean, **{k: v for k, v in attrs.items() if k != "field"})]
    with pytest.raises(GraphRefused, match=reason):
        graph.write(bad)
    assert graph.stats().datasets == 0
    report = graph.ingest(bad)  # refused, reported, not raised
    assert [origin for origin, _ in report.refused] == ["poison.json:1"] and reason in report.refused[0][1]
    assert graph.stats().datasets == 0
    (lineage,) = decode_event(lineage_event(ORDERS, [(sf(ORDERS, "id"), [sf(RAW, "id")])], 5))
    edge = lineage.edges[0]
    nan = replace(lineage, edges=(replace(edge, props=replace(edge.props, confidence=float("nan"))),))
    with pytest.raises(GraphRefused, match="confidence of nan is not a finite number"):
        graph.write([nan])
    assert graph.stats().datasets == 0


def test_ingest_rejects_the_events_the_graph_refuses_and_writes_the_rest(graph, tmp_path: Path) -> None:
    """The file path finds refused events as the worker does (halving the batch): each goes to the rejects file
    with its line, reason and event; every other event of the batch is written."""
    good = [schema_event(ds(f"r.t{i}"), ["a", "b"], 10) for i in range(12)]
    good += [lineage_event(ds(f"r.t{i}"), [(sf(ds(f"r.t{i}"), "a"), [sf(ds(f"r.t{i - 1}"), "b")])], 20)
             for i in range(1, 12)]
    bad = schema_event(ds("r.bad"), ["a"], 10)
    bad["aspect"]["value"] = bad["aspect"]["value"].replace('"a"', '"a\\u0000b"')
    events = [*good[:7], bad, *good[7:]]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    rejects = tmp_path / "rejects.jsonl"
    res = CliRunner().invoke(app, ["ingest", str(path), "--graph", graph.uri, "--rejects", str(rejects), "--json"])
    assert res.exit_code == 3, res.output
    summary = json.loads(res.stdout[res.stdout.index("{"):])
    assert summary["rejected"] == 1
    (rejected,) = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert (rejected["line"], rejected["event"]) == (8, bad)
    assert "holds a NUL character" in rejected["error"]
    assert graph.stats().datasets == 12
    assert [h.field_path for h in graph.upstream(sf(ds("r.t11"), "a")).hops] == ["b"]
