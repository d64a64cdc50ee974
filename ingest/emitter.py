"""Producing change events to Kafka, keyed by dataset URN (so a dataset's events stay in order).

    from fieldgraph.ingest import Emitter

    with Emitter("kafka:9092") as em:                       # idempotent producer, acks=all; topic fieldgraph.events
        em.emit_schema(urn, avsc_text, format="avro")       # or fields=[SchemaField...] / DataHub dicts
        em.emit_lineage(urn, [("total", [upstream_field_urn, ...])], transformation="SUM")
        em.emit(event)    # an event dict, DataHub's MetadataChangeProposalWrapper, or a fieldgraph change
    # leaving the block flushes and raises EmitError if a delivery failed

What goes on the wire is what the topic's consumers read (:func:`wire_format`): DataHub's MCP topic
(``MetadataChangeProposal_v1``) carries Avro in the Confluent wire format with DataHub's MCP schema from a
schema registry (the subject's latest schema, or DataHub's as fieldgraph ships it when the subject has
none); any other topic (fieldgraph's own, ``fieldgraph.events`` by default) carries JSON.

The event builders (:func:`schema_mcp`, :func:`lineage_mcp`, :func:`change_event`, :func:`wire_mcp`) are
pure (no Kafka) and usable alone. Every field URN they build goes through the normalizers' one URN builder,
which percent-encodes paths as DataHub does.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from fieldgraph.changes import (
    DATASET_UPSTREAM_LINEAGE,
    UNSTAMPED,
    UPSTREAM_LINEAGE,
    AspectDelete,
    DatasetDelete,
    FieldEdge,
    JobLineageChange,
    LineageChange,
    SchemaChange,
)
from fieldgraph.errors import ConfigError, EmitError, FieldgraphError, SourceUnavailable, UrnError, require
from fieldgraph.normalizers import SchemaField, normalize
from fieldgraph.normalizers.urns import DatasetUrn, FieldUrn, make_field_urn

from .config import FIELDGRAPH_TOPIC

DEFAULT_TOPIC = FIELDGRAPH_TOPIC

WireFormat = Literal["json", "avro"]

#: DataHub's topics that DataHub itself writes (fieldgraph reads them; it emits to the MCP topic)
DATAHUB_OWN_TOPICS = ("MetadataChangeLog", "MetadataAuditEvent", "MetadataChangeEvent", "FailedMetadataChange")
#: the attributes of DataHub's MetadataChangeProposal (an MCL's others are dropped on the MCP topic)
MCP_FIELDS = ("auditHeader", "entityType", "entityUrn", "entityKeyAspect", "changeType", "aspectName", "aspect",
              "systemMetadata", "headers")

#: librdkafka's own log lines (connection attempts, retries): quiet unless --log-level debug, since what they say
#: is reported once by the emitter and the worker (a broker that cannot be reached)
LIBRDKAFKA_LOG = logging.getLogger("librdkafka")

#: producer settings for at-least-once without duplicates from retries, in order per partition
IDEMPOTENT = {"enable.idempotence": True, "acks": "all", "max.in.flight.requests.per.connection": 5,
              "linger.ms": 10}

_PLATFORM_SCHEMA = {"avro": "AVRO", "json-schema": "JSON", "protobuf": "PROTOBUF"}


def wire_format(topic: str, choice: str = "auto") -> WireFormat:
    """What ``topic`` carries: ``choice`` when it is json or avro; ``auto``: Avro on DataHub's MCP topic
    (``MetadataChangeProposal*``), JSON elsewhere. DataHub's other topics are DataHub's to write."""
    if choice not in ("auto", "json", "avro"):
        raise ConfigError(f"--format {choice!r}: expected auto, json or avro")
    if choice != "auto":
        return choice  # type: ignore[return-value]
    if topic.startswith(DATAHUB_OWN_TOPICS):
        raise ConfigError(f"topic {topic!r} is written by DataHub itself; send MCPs to MetadataChangeProposal_v1 "
                          f"(Avro) or to a topic of fieldgraph's own ({FIELDGRAPH_TOPIC}, JSON), or say --format")
    return "avro" if topic.startswith("MetadataChangeProposal") else "json"


def canonical_dataset(urn: str) -> str:
    try:
        return str(DatasetUrn.parse(urn))
    except UrnError as exc:
        raise EmitError(f"dataset URN {urn!r}: {exc}") from exc


def event_key(event: Mapping[str, Any]) -> str | None:
    """The dataset URN an event is about (canonical when it parses): the message key."""
    urn: Any = event.get("entityUrn")
    for snap in ("proposedSnapshot", "newSnapshot"):
        body = event.get(snap)
        if isinstance(body, dict) and len(body) == 1:
            inner = next(iter(body.values()))
            if isinstance(inner, dict):
                urn = inner.get("urn")
    if not isinstance(urn, str):
        return None
    try:
        return str(DatasetUrn.parse(urn))
    except UrnError:
        return urn


def _mcp(urn: str, aspect_name: str, aspect: Mapping[str, Any] | None, ts: int, change_type: str = "UPSERT",
         ) -> dict[str, Any]:
    ev: dict[str, Any] = {"entityType": "dataset", "entityUrn": urn, "changeType": change_type,
                          "aspectName": aspect_name}
    if aspect is not None:
        ev["aspect"] = {"value": json.dumps(aspect, separators=(",", ":")), "contentType": "application/json"}
    if ts != UNSTAMPED:
        ev["systemMetadata"] = {"lastObserved": ts}
    return ev


def schema_mcp(dataset_urn: str, schema: str | bytes | None = None, *, format: str | None = None,
               fields: Iterable[SchemaField | Mapping[str, Any]] | None = None, key_schema: str | bytes | None = None,
               version: int = 0, ts: int | None = None, schema_name: str | None = None) -> dict[str, Any]:
    """A ``schemaMetadata`` MCP from a raw schema (``format``: avro, json-schema, protobuf, arrow, parquet,
    spark, ...; see :func:`fieldgraph.normalizers.normalize`) or from ``fields``."""
    urn = canonical_dataset(dataset_urn)
    d = DatasetUrn.parse(urn)
    if (schema is None) == (fields is None):
        raise EmitError(f"{urn}: give either a raw schema or fields")
    if schema is not None:
        if not format:
            raise EmitError(f"{urn}: a raw schema needs its format (avro, json-schema, protobuf, arrow, ...)")
        try:
            out_fields = [f.to_datahub() for f in normalize(key_schema, format, key=True)] if key_schema else []
            out_fields += [f.to_datahub() for f in normalize(schema, format)]
        except FieldgraphError as exc:
            raise EmitError(f"{urn}: cannot normalize the {format} schema: {exc}") from exc
    else:
        out_fields = [f.to_datahub() if isinstance(f, SchemaField) else dict(f) for f in fields or ()]
    raw = schema.decode("utf-8", "replace") if isinstance(schema, bytes) else schema
    if format in _PLATFORM_SCHEMA and isinstance(raw, str):
        platform_schema = {"com.linkedin.schema.KafkaSchema": {
            "documentSchema": raw, "documentSchemaType": _PLATFORM_SCHEMA[format]}}
    else:
        platform_schema = {"com.linkedin.schema.OtherSchema": {"rawSchema": raw if isinstance(raw, str) else ""}}
    ts = int(time.time() * 1000) if ts is None else ts
    aspect = {"schemaName": schema_name or d.name, "platform": f"urn:li:dataPlatform:{d.platform}",
              "version": version, "created": {"time": ts, "actor": "urn:li:corpuser:fieldgraph"},
              "lastModified": {"time": ts, "actor": "urn:li:corpuser:fieldgraph"}, "hash": "",
              "platformSchema": platform_schema, "fields": out_fields}
    return _mcp(urn, "schemaMetadata", aspect, ts)


def _field(urn: str, ref: str) -> str:
    """A field URN: ``ref`` as it is when it is one, else a path of ``urn``'s dataset."""
    if ref.startswith(("urn:li:schemaField:", "urn:li:datasetField:")):
        try:
            FieldUrn.parse(ref)
        except UrnError as exc:
            raise EmitError(f"field URN {ref!r}: {exc}") from exc
        return ref
    return make_field_urn(urn, ref, form="schemaField")


def lineage_mcp(dataset_urn: str, edges: Iterable[tuple[str, Iterable[str]]], *,
                transformation: str | None = None, confidence: float = 1.0, query: str | None = None,
                ts: int | None = None) -> dict[str, Any]:
    """An ``upstreamLineage`` MCP: ``edges`` are (downstream field path or URN of this dataset,
    upstream field URNs). It is the dataset's whole field lineage (it replaces the previous one)."""
    urn = canonical_dataset(dataset_urn)
    fgl: list[dict[str, Any]] = []
    for down, ups in edges:
        fg: dict[str, Any] = {"upstreamType": "FIELD_SET", "upstreams": [_field(urn, u) for u in ups],
                              "downstreamType": "FIELD", "downstreams": [_field(urn, down)],
                              "confidenceScore": confidence}
        if transformation:
            fg["transformOperation"] = transformation
        if query:
            fg["query"] = query
        fgl.append(fg)
    return _upstream_lineage_mcp(urn, fgl, int(time.time() * 1000) if ts is None else ts)


def _upstream_lineage_mcp(urn: str, fgl: list[dict[str, Any]], ts: int,
                          queries: Iterable[tuple[str, Iterable[str]]] = ()) -> dict[str, Any]:
    """``queries``: (query URN, the upstreams it made, with no field lineage given) as ``upstreams[].query``."""
    upstream_ds = dict.fromkeys(str(FieldUrn.parse(u).dataset) if fg["upstreamType"] != "DATASET" else u
                                for fg in fgl for u in fg["upstreams"])
    upstreams = [{"dataset": u, "type": "TRANSFORMED"} for u in upstream_ds]
    upstreams += [{"dataset": u, "type": "TRANSFORMED", "query": q} for q, ups in queries for u in ups]
    return _mcp(urn, UPSTREAM_LINEAGE, {"upstreams": upstreams, "fineGrainedLineages": fgl}, ts)


# --- fieldgraph's own objects -> events ----------------------------------------------------------------


def change_event(change: SchemaChange | LineageChange | AspectDelete | DatasetDelete) -> dict[str, Any]:
    """The DataHub MCP that stands for a typed change (what :func:`fieldgraph.ingest.sources.decode_event`
    reads back as that change). Job lineage has no DataHub aspect: send the run events themselves."""
    match change:
        case SchemaChange():
            return schema_mcp(change.dataset, fields=change.fields, version=change.version, ts=change.ts,
                              schema_name=change.name or None)
        case LineageChange(aspect="upstreamLineage"):
            return _upstream_lineage_mcp(canonical_dataset(change.dataset), _fine_grained(change), change.ts,
                                         change.queries)
        case LineageChange():
            return _mcp(canonical_dataset(change.dataset), DATASET_UPSTREAM_LINEAGE, {"fieldMappings": [
                {"destinationField": down, "sourceFields": ups, "transformationFunction": props.transformation}
                for (down, props), ups in _by_downstream(change.edges).items()]}, change.ts)
        case AspectDelete(aspect="jobLineage"):
            raise EmitError(f"{change.dataset}: job lineage has no DataHub aspect to delete")
        case AspectDelete():
            return _mcp(canonical_dataset(change.dataset), change.aspect, None, change.ts, "DELETE")
        case DatasetDelete():
            return _mcp(canonical_dataset(change.dataset), "datasetKey", None, change.ts, "DELETE")
    raise EmitError(f"a {type(change).__name__} has no DataHub event (job lineage: send the run events themselves)")


def _by_downstream(edges: Iterable[FieldEdge]) -> dict[tuple[str, Any], list[str]]:
    """(downstream, edge properties) -> the upstreams, each once, in order."""
    out: dict[tuple[str, Any], list[str]] = {}
    for e in edges:
        key = (e.downstream, e.props)
        if e.upstream not in out.setdefault(key, []):
            out[key].append(e.upstream)
    return out


def _fine_grained(change: LineageChange) -> list[dict[str, Any]]:
    """``fineGrainedLineages`` again: one per declaration (the edges' ``index``), else per downstream field."""
    decl: dict[Any, dict[str, Any]] = {}
    for e in (*change.edges, *change.dataset_edges):
        p = e.props
        key = (p.index,) if p.index is not None else (e.downstream, p)
        fg = decl.setdefault(key, {"upstreamType": p.upstream_type or "FIELD_SET", "upstreams": [],
                                   "downstreamType": p.downstream_type or "FIELD", "downstreams": [],
                                   "confidenceScore": p.confidence,
                                   **({"transformOperation": p.transformation} if p.transformation else {}),
                                   **({"query": p.query} if p.query else {})})
        for k, v in (("upstreams", e.upstream), ("downstreams", e.downstream)):
            if v not in fg[k]:
                fg[k].append(v)
    return list(decl.values())


Emittable = Mapping[str, Any] | SchemaChange | LineageChange | AspectDelete | DatasetDelete | Any


def to_event(item: Emittable) -> dict[str, Any]:
    """An event dict from what :meth:`Emitter.emit` takes: an event dict (MCP, MCL, MCE, MAE, CDAP, OpenLineage),
    DataHub's ``MetadataChangeProposalWrapper`` or generated classes (anything with ``to_obj()``), or a
    fieldgraph typed change."""
    if isinstance(item, Mapping):
        return dict(item)
    if isinstance(item, (SchemaChange, LineageChange, AspectDelete, DatasetDelete, JobLineageChange)):
        return change_event(item)  # type: ignore[arg-type]  # JobLineageChange: EmitError
    to_obj = getattr(item, "to_obj", None)
    if callable(to_obj):
        obj = to_obj()
        if isinstance(obj, dict):
            return obj
    raise EmitError(f"cannot emit a {type(item).__name__}: expected an event dict, a DataHub "
                    "MetadataChangeProposalWrapper (or generated class) or a fieldgraph change")


def wire_mcp(event: Mapping[str, Any]) -> dict[str, Any]:
    """``event`` as DataHub's Avro MCP record: aspects serialized as bytes in ``value`` (also from the file
    sink's ``json`` form); an MCL loses what only MCLs have. Legacy snapshots and other sources' events are
    not MCPs: :class:`EmitError`."""
    if "proposedSnapshot" in event or "newSnapshot" in event:
        raise EmitError("a legacy snapshot (MCE/MAE) is not an MCP: DataHub's MCP topic takes MCPs (send "
                        "snapshots as JSON to a topic of fieldgraph's own)")
    if "entityType" not in event or "changeType" not in event:
        raise EmitError("not a DataHub MCP (no entityType/changeType): DataHub's MCP topic takes MCPs only")
    mcp = {k: v for k, v in event.items() if k in MCP_FIELDS}
    for k in ("aspect", "entityKeyAspect"):
        a = mcp.get(k)
        if isinstance(a, Mapping):
            value = a["value"] if a.get("value") is not None else json.dumps(a.get("json"), separators=(",", ":"))
            mcp[k] = {"value": value.encode("utf-8") if isinstance(value, str) else value,
                      "contentType": a.get("contentType") or "application/json"}
    return mcp


@dataclass
class DeliveryReport:
    delivered: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)  # (key, error)


class Emitter:
    """An idempotent Kafka producer of change events, keyed by dataset URN, in the topic's format
    (:func:`wire_format`; ``format`` auto, json or avro). Avro needs ``schema_registry_url`` (client settings
    in ``schema_registry``; ``mock://NAME`` is confluent-kafka's in-process registry).

    It first asks the brokers for metadata: if none answers within ``timeout`` seconds it raises
    :class:`SourceUnavailable` naming them and librdkafka's reason, before anything is queued."""

    def __init__(self, bootstrap_servers: str = "localhost:9092", *, topic: str = DEFAULT_TOPIC,
                 format: str = "auto", schema_registry_url: str | None = None,
                 schema_registry: Mapping[str, Any] | None = None, kafka: Mapping[str, Any] | None = None,
                 timeout: float = 10.0, on_delivery: Callable[[str | None, Any], None] | None = None) -> None:
        Producer = require("confluent_kafka", "kafka", "the Kafka emitter").Producer

        self.topic = topic
        self.format = format
        self.report = DeliveryReport()
        self._registry_url = schema_registry_url
        self._registry_conf = dict(schema_registry or {})
        self._encoders: dict[str, Any] = {}
        self._on_delivery = on_delivery
        self._error: str | None = None
        self._encoder(topic)  # a bad format or an unreachable registry fails here, before any message
        self._producer = Producer({"bootstrap.servers": bootstrap_servers, **IDEMPOTENT, **dict(kafka or {}),
                                   "error_cb": self._kafka_error, "logger": LIBRDKAFKA_LOG})
        try:
            self._producer.list_topics(timeout=timeout)
        except Exception as exc:  # KafkaException: no broker answered
            reason = self._error or (exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else str(exc))
            raise SourceUnavailable(f"cannot reach the Kafka brokers at {bootstrap_servers} within {timeout:g}s: "
                                    f"{reason}") from exc

    def _encoder(self, topic: str) -> Any:
        """The Avro MCP encoder of ``topic`` (``None``: JSON)."""
        if topic not in self._encoders:
            enc = None
            if wire_format(topic, self.format) == "avro":
                if not self._registry_url:
                    raise ConfigError(f"topic {topic!r} carries Avro with a schema registry (DataHub's consumers "
                                      "read it so): give --schema-registry-url, or --format json for a topic "
                                      "only fieldgraph reads")
                from .decode import McpEncoder

                enc = McpEncoder(self._registry_url, self._registry_conf, subject=f"{topic}-value")
            self._encoders[topic] = enc
        return self._encoders[topic]

    def _kafka_error(self, err: Any) -> None:
        self._error = err.str()

    def _delivered(self, err: Any, msg: Any) -> None:
        if err is None:
            self.report.delivered += 1
        else:
            key = msg.key().decode("utf-8", "replace") if msg.key() else ""
            self.report.failures.append((key, str(err)))
        if self._on_delivery:
            self._on_delivery(None if err is None else str(err), msg)

    def encode(self, item: Emittable, topic: str | None = None) -> tuple[bytes, str | None]:
        """(message value, key) of ``item`` on ``topic``."""
        event = to_event(item)
        enc = self._encoder(topic or self.topic)
        value = enc.encode(wire_mcp(event)) if enc else json.dumps(event, separators=(",", ":")).encode("utf-8")
        return value, event_key(event)

    def emit(self, item: Emittable | bytes, *, key: str | None = None, topic: str | None = None,
             headers: Sequence[tuple[str, bytes]] | None = None) -> None:
        """Send one event (see :func:`to_event`; bytes are sent as they are), keyed by its dataset URN."""
        if isinstance(item, (bytes, bytearray)):
            value = bytes(item)
        else:
            value, event_urn = self.encode(item, topic)
            key = key or event_urn
        while True:
            try:
                self._producer.produce(topic or self.topic, value, key.encode("utf-8") if key else None,
                                       headers=list(headers or []), on_delivery=self._delivered)
                break
            except BufferError:  # the local queue is full: serve delivery reports, then retry
                self._producer.poll(0.1)
        self._producer.poll(0)

    def emit_schema(self, dataset_urn: str, schema: str | bytes | None = None, **kw: Any) -> dict[str, Any]:
        ev = schema_mcp(dataset_urn, schema, **{k: v for k, v in kw.items() if k != "topic"})
        self.emit(ev, topic=kw.get("topic"))
        return ev

    def emit_lineage(self, dataset_urn: str, edges: Iterable[tuple[str, Iterable[str]]], **kw: Any) -> dict[str, Any]:
        ev = lineage_mcp(dataset_urn, edges, **{k: v for k, v in kw.items() if k != "topic"})
        self.emit(ev, topic=kw.get("topic"))
        return ev

    def flush(self, timeout: float = 60.0) -> DeliveryReport:
        """Wait for every delivery report; raises :class:`EmitError` naming the failures."""
        left = self._producer.flush(timeout)
        if left:
            raise EmitError(f"{left} events not confirmed by the broker within {timeout:.0f}s"
                            + (f" (last Kafka error: {self._error})" if self._error else ""))
        if self.report.failures:
            f = self.report.failures
            raise EmitError(f"{len(f)} events were not delivered: " + "; ".join(f"{k}: {e}" for k, e in f[:3]), f)
        return self.report

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> Emitter:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if exc_type is None:
            self.flush()
        else:
            self._producer.flush(10)
