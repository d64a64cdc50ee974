"""DataHub's wire formats on a real Apache Kafka, both ways, and a worker that never blocks on a bad batch.

No Confluent-API schema registry server can be started here (see docs/how-to/datahub-kafka.md): both sides share
confluent-kafka's own in-process registry (``mock://NAME``, one per name in a process), with DataHub's
emitter given the same client instead of its HTTP one.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fieldgraph.graph.answers import encode
from fieldgraph.ingest.decode import registry_client
from fieldgraph.ingest.emitter import Emitter
from fieldgraph.normalizers.urns import make_field_urn

from .conftest import datahub_schema, ds, dump, lineage_event, schema_event, sf, stamped
from .kafka_fixtures import ThreadWorker, wait_committed, worker_config

m = pytest.importorskip("datahub.metadata.schema_classes")
from datahub.emitter.mce_builder import make_schema_field_urn  # noqa: E402
from datahub.emitter.mcp import MetadataChangeProposalWrapper as MCPW  # noqa: E402

pytestmark = pytest.mark.integration

ORDERS, RAW, CUSTOMERS = ds("dh.orders"), ds("dh.raw_orders"), ds("dh.customers")
JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,nightly,prod),load_orders)"


def test_datahubs_kafka_emitter_feeds_the_worker(broker, graph, monkeypatch):
    """DataHub's DatahubKafkaEmitter (Avro, DataHub's MCP and MCE schemas, registered by it) -> worker."""
    from datahub.emitter import kafka_emitter

    registry = f"mock://{broker.name('dh-registry')}"
    monkeypatch.setattr(kafka_emitter, "SchemaRegistryClient", lambda conf: registry_client(conf["url"]))
    mcp_topic = broker.create_topic(broker.name("MetadataChangeProposal_v1_"), partitions=2)
    mce_topic = broker.create_topic(broker.name("MetadataChangeEvent_v4_"))
    emitter = kafka_emitter.DatahubKafkaEmitter(kafka_emitter.KafkaEmitterConfig.model_validate({
        "connection": {"bootstrap": broker.bootstrap, "schema_registry_url": registry},
        "topic_routes": {"MetadataChangeProposal": mcp_topic, "MetadataChangeEvent": mce_topic}}))
    lineage = m.UpstreamLineageClass(
        upstreams=[m.UpstreamClass(dataset=RAW, type="TRANSFORMED")],
        fineGrainedLineages=[m.FineGrainedLineageClass(
            upstreamType="FIELD_SET", upstreams=[make_schema_field_urn(RAW, "a,b")], downstreamType="FIELD",
            downstreams=[make_schema_field_urn(ORDERS, "total")], transformOperation="SUM")])
    items = [
        stamped(MCPW(entityUrn=RAW, aspect=datahub_schema("id", "a,b")), 100),
        stamped(MCPW(entityUrn=ORDERS, aspect=datahub_schema("id", "total")), 100),
        stamped(MCPW(entityUrn=ORDERS, aspect=lineage), 100),
        stamped(MCPW(entityUrn=ORDERS, aspect=m.StatusClass(removed=False)), 100),
        MCPW(entityUrn=RAW, aspect=lineage.__class__(upstreams=[])),  # no fine-grained lineage: nothing to draw
        # a steward's tag on a column, and a data job's column lineage
        stamped(MCPW(entityUrn=RAW, aspect=m.EditableSchemaMetadataClass(editableSchemaFieldInfo=[
            m.EditableSchemaFieldInfoClass("id", globalTags=m.GlobalTagsClass([m.TagAssociationClass(
                "urn:li:tag:PII")]))])), 100),
        stamped(MCPW(entityUrn=JOB, aspect=m.DataJobInputOutputClass(
            inputDatasets=[RAW], outputDatasets=[ORDERS], fineGrainedLineages=[m.FineGrainedLineageClass(
                upstreamType="FIELD_SET", upstreams=[make_schema_field_urn(RAW, "id")], downstreamType="FIELD",
                downstreams=[make_schema_field_urn(ORDERS, "id")])])), 100),
        m.MetadataChangeEventClass(proposedSnapshot=m.DatasetSnapshotClass(urn=CUSTOMERS, aspects=[
            datahub_schema("id", "email"), m.StatusClass(removed=False)])),
    ]
    errors: list[Any] = []
    for item in items:
        emitter.emit(item, callback=lambda err, msg: errors.append(err) if err else None)
    emitter.flush()
    assert not errors

    cfg = worker_config(broker, [mcp_topic, mce_topic], graph.uri, schema_registry_url=registry)
    w = ThreadWorker(cfg)
    wait_committed(broker, cfg.group_id, mcp_topic, 7, 60)
    wait_committed(broker, cfg.group_id, mce_topic, 1, 60)
    up = graph.upstream(make_field_urn(ORDERS, "total"))
    assert [(h.dataset_urn, h.field_path, h.edge["transformation"]) for h in up.hops] == [(RAW, "a,b", "SUM")]
    assert {f["fieldPath"] for f in encode(graph.fields(CUSTOMERS))} == {"id", "email"}
    id_up = graph.upstream(make_field_urn(ORDERS, "id"))
    assert [(h.dataset_urn, h.field_path, h.edge["program"]) for h in id_up.hops] == [(RAW, "id", JOB)]
    assert [(i["label"], i["from"]) for i in encode(graph.tags(make_field_urn(ORDERS, "id")))["inherited"]] == [
        ("PII", make_field_urn(RAW, "id"))]

    # DataHub's wrapper sends a DELETE without systemMetadata: it applies in arrival order
    emitter.emit(MCPW(entityUrn=ORDERS, aspectName="upstreamLineage", changeType="DELETE", aspect=None))
    emitter.flush()
    wait_committed(broker, cfg.group_id, mcp_topic, 8, 60)
    stats = w.stop()
    assert stats.dlq == 0 and stats.ignored == 1  # the status aspect
    assert graph.upstream(make_field_urn(ORDERS, "total")).hops == ()


def test_fieldgraphs_emitter_speaks_datahubs_avro(broker):
    """fieldgraph's emitter on DataHub's MCP topic -> DataHub's own Avro deserializer reads exactly what was sent:
    event dicts (both aspect forms), DataHub's wrappers and fieldgraph's typed changes."""
    from confluent_kafka.schema_registry.avro import AvroDeserializer
    from confluent_kafka.serialization import MessageField, SerializationContext
    from datahub.metadata.schemas import getMetadataChangeProposalSchema

    from fieldgraph.changes import AspectDelete
    from fieldgraph.ingest.emitter import to_event

    registry = f"mock://{broker.name('fg-registry')}"
    topic = broker.create_topic(broker.name("MetadataChangeProposal_v1_"))
    sent = [
        schema_event(RAW, ["id", "a,b"], 10),
        MCPW(entityUrn=ORDERS, aspect=m.StatusClass(removed=True)).to_obj(simplified_structure=True),
        MCPW(entityUrn=ORDERS, aspect=datahub_schema("id", "total")),
        AspectDelete(ORDERS, "upstreamLineage", 20),
    ]
    with Emitter(broker.bootstrap, topic=topic, schema_registry_url=registry) as em:
        em.emit_lineage(ORDERS, [("total", [make_field_urn(RAW, "a,b", form="schemaField")])], ts=15)
        for item in sent:
            em.emit(item)
    messages = broker.consume_all(topic, len(sent) + 1)
    assert len(messages) == len(sent) + 1

    read = AvroDeserializer(registry_client(registry), schema_str=getMetadataChangeProposalSchema())
    got = {}
    for msg in messages:
        assert msg.value()[0] == 0  # auto: Avro in the Confluent wire format on DataHub's MCP topic
        obj = read(msg.value(), SerializationContext(topic, MessageField.VALUE))
        mcp = m.MetadataChangeProposalClass.from_obj(obj, tuples=True)
        assert msg.key().decode() == mcp.entityUrn
        got[(mcp.entityUrn, mcp.aspectName, mcp.changeType)] = mcp
    for item in sent:
        ev = to_event(item)
        mcp = got[(ev["entityUrn"], ev["aspectName"], ev["changeType"])]
        if "aspect" in ev:
            aspect = ev["aspect"]
            assert json.loads(mcp.aspect.value) == (aspect["json"] if "json" in aspect else json.loads(aspect["value"]))
        assert (mcp.systemMetadata and mcp.systemMetadata.lastObserved) == ev.get("systemMetadata", {}).get(
            "lastObserved")
    lineage = json.loads(got[(ORDERS, "upstreamLineage", "UPSERT")].aspect.value)
    assert lineage["fineGrainedLineages"][0]["upstreams"] == [make_schema_field_urn(RAW, "a,b")]


def test_a_poisoned_batch_dead_letters_the_refused_events_and_the_rest_lands(broker, graph, reference_graph):
    """Events that hold values the graph cannot store (a lone surrogate, NUL, an integer beyond 64 bits) are
    dead-lettered as they are read; a SQL statement only the schemas held refuse (3 columns into 2) is found by
    halving the batch and dead-lettered with the planner's reason. The rest is written, and nothing of the
    refused events is left half-written."""
    topic = broker.create_topic(broker.name("poison"))
    broker.create_topic(f"{topic}.dlq")
    good = [schema_event(ds(f"p.t{i}"), ["a", "b"], 10 + i) for i in range(30)]
    good += [lineage_event(ds(f"p.t{i}"), [(sf(ds(f"p.t{i}"), "a"), [sf(ds(f"p.t{i - 1}"), "b")])], 100 + i)
             for i in range(1, 30)]
    def refused(name: str, **attrs: Any) -> dict[str, Any]:
        ev = schema_event(ds(f"p.{name}"), ["a"], 5)
        aspect = json.loads(ev["aspect"]["value"])
        aspect["fields"][0].update(attrs.pop("field", {}))
        aspect.update(attrs)
        ev["aspect"]["value"] = json.dumps(aspect)  # JSON escapes what it must: valid JSON, a valid event
        return ev

    from .test_sql import orders_schema, sql_event

    narrow = ds("shop.narrow")  # the SQL event names it narrow, in database shop
    good += [orders_schema(), schema_event(narrow, ["a", "b"], 1)]
    bad = [refused("surrogate", field={"description": "broken \ud800 text"}),
           refused("nul", field={"description": "nul \x00 inside"}), refused("huge", version=10**30),
           sql_event("INSERT INTO narrow SELECT order_id, amount, status FROM orders")]
    events = good[:20] + bad[:1] + good[20:45] + bad[1:3] + good[45:] + bad[3:]
    broker.emit(topic, events)

    cfg = worker_config(broker, [topic], graph.uri, batch_size=len(events))
    w = ThreadWorker(cfg)
    wait_committed(broker, cfg.group_id, topic, len(events), 90)
    stats = w.stop()
    assert stats.dlq == 4 and stats.messages == len(events)
    dlq = {(m.key() or narrow.encode()).decode(): {k: v.decode() for k, v in m.headers()}
           for m in broker.consume_all(f"{topic}.dlq", 4)}
    reasons = {urn: h["fieldgraph.reason"] for urn, h in dlq.items()}
    assert "holds a lone surrogate" in reasons[ds("p.surrogate")]
    assert "holds a NUL character" in reasons[ds("p.nul")]
    assert "does not fit in 64 bits" in reasons[ds("p.huge")]
    assert {dlq[ds(f"p.{n}")]["fieldgraph.error"] for n in ("surrogate", "nul", "huge")} == {"event"}
    assert dlq[narrow]["fieldgraph.error"] == "plan" and "narrow" in reasons[narrow]

    from fieldgraph.ingest.sources import decode_event

    reference_graph.ingest([c for e in good for c in decode_event(e)])
    assert dump(graph) == dump(reference_graph)
