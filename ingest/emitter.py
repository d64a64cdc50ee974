"""Producing change events: MCP JSON, keyed by dataset URN (so a dataset's events stay in order).

    from fieldgraph.ingest import Emitter

    with Emitter("kafka:9092") as em:                       # idempotent producer, acks=all
        em.emit_schema(urn, avsc_text, format="avro")       # or fields=[SchemaField...] / DataHub dicts
        em.emit_lineage(urn, [("total", [upstream_field_urn, ...])], transformation="SUM")
        em.emit(any_event_dict)                             # MCP/MCL/MCE/MAE as it is
    # leaving the block flushes and raises EmitError if a delivery failed

The event builders :func:`schema_mcp` and :func:`lineage_mcp` are pure (no Kafka) and usable alone.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fieldgraph.errors import EmitError, FieldgraphError, SourceUnavailable, UrnError, require
from fieldgraph.normalizers import SchemaField, normalize
from fieldgraph.normalizers.urns import DatasetUrn, FieldUrn, make_field_urn

DEFAULT_TOPIC = "MetadataChangeProposal_v1"

#: librdkafka's own log lines (connection attempts, retries): quiet unless --log-level debug, since what they say
#: is reported once by the emitter and the worker (a broker that cannot be reached)
LIBRDKAFKA_LOG = logging.getLogger("librdkafka")

#: producer settings for at-least-once without duplicates from retries, in order per partition
IDEMPOTENT = {"enable.idempotence": True, "acks": "all", "max.in.flight.requests.per.connection": 5,
              "linger.ms": 10}

_PLATFORM_SCHEMA = {"avro": "AVRO", "json-schema": "JSON", "protobuf": "PROTOBUF"}


def canonical_dataset(urn: str) -> str:
    try:
        return str(DatasetUrn.parse(urn))
    except UrnError as exc:
        raise EmitError(f"dataset URN {urn!r}: {exc}") from None


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


def _mcp(urn: str, aspect_name: str, aspect: Mapping[str, Any], ts: int) -> dict[str, Any]:
    return {"entityType": "dataset", "entityUrn": urn, "changeType": "UPSERT", "aspectName": aspect_name,
            "aspect": {"value": json.dumps(aspect, separators=(",", ":")), "contentType": "application/json"},
            "systemMetadata": {"lastObserved": ts}}


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
            raise EmitError(f"{urn}: cannot normalize the {format} schema: {exc}") from None
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
            raise EmitError(f"field URN {ref!r}: {exc}") from None
        return ref
    return make_field_urn(urn, ref, form="schemaField")


def lineage_mcp(dataset_urn: str, edges: Iterable[tuple[str, Iterable[str]]], *,
                transformation: str | None = None, confidence: float = 1.0, query: str | None = None,
                ts: int | None = None) -> dict[str, Any]:
    """An ``upstreamLineage`` MCP: ``edges`` are (downstream field path or URN of this dataset,
    upstream field URNs). It is the dataset's whole field lineage (it replaces the previous one)."""
    urn = canonical_dataset(dataset_urn)
    fgl: list[dict[str, Any]] = []
    upstream_ds: dict[str, None] = {}
    for down, ups in edges:
        ups = [_field(urn, u) for u in ups]
        for u in ups:
            upstream_ds[str(FieldUrn.parse(u).dataset)] = None
        fg: dict[str, Any] = {"upstreamType": "FIELD_SET", "upstreams": ups, "downstreamType": "FIELD",
                              "downstreams": [_field(urn, down)], "confidenceScore": confidence}
        if transformation:
            fg["transformOperation"] = transformation
        if query:
            fg["query"] = query
        fgl.append(fg)
    ts = int(time.time() * 1000) if ts is None else ts
    aspect = {"upstreams": [{"dataset": u, "type": "TRANSFORMED"} for u in upstream_ds], "fineGrainedLineages": fgl}
    return _mcp(urn, "upstreamLineage", aspect, ts)


@dataclass
class DeliveryReport:
    delivered: int = 0
    failures: list[tuple[str, str]] = field(default_factory=list)  # (key, error)


class Emitter:
    """An idempotent Kafka producer of change events (JSON, keyed by dataset URN).

    It first asks the brokers for metadata: if none answers within ``timeout`` seconds it raises
    :class:`SourceUnavailable` naming them and librdkafka's reason, before anything is queued."""

    def __init__(self, bootstrap_servers: str = "localhost:9092", *, topic: str = DEFAULT_TOPIC,
                 kafka: Mapping[str, Any] | None = None, timeout: float = 10.0,
                 on_delivery: Callable[[str | None, Any], None] | None = None) -> None:
        Producer = require("confluent_kafka", "kafka", "the Kafka emitter").Producer

        self.topic = topic
        self.report = DeliveryReport()
        self._on_delivery = on_delivery
        self._error: str | None = None
        self._producer = Producer({"bootstrap.servers": bootstrap_servers, **IDEMPOTENT, **dict(kafka or {}),
                                   "error_cb": self._kafka_error, "logger": LIBRDKAFKA_LOG})
        try:
            self._producer.list_topics(timeout=timeout)
        except Exception as exc:  # KafkaException: no broker answered
            reason = self._error or (exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else str(exc))
            raise SourceUnavailable(f"cannot reach the Kafka brokers at {bootstrap_servers} within {timeout:g}s: "
                                    f"{reason}") from None

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

    def emit(self, event: Mapping[str, Any] | bytes, *, key: str | None = None, topic: str | None = None,
             headers: Sequence[tuple[str, bytes]] | None = None) -> None:
        """Send one event (a dict as JSON, or bytes as they are), keyed by its dataset URN."""
        if isinstance(event, (bytes, bytearray)):
            value = bytes(event)
        else:
            value = json.dumps(event, separators=(",", ":")).encode("utf-8")
            key = key or event_key(event)
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
