"""Kafka message values <-> event objects: JSON, or Avro in the Confluent wire format.

Confluent wire format: byte 0 is the magic byte ``0``, bytes 1-4 the schema id (big-endian), the
rest the Avro binary body. The writer schema comes from the schema registry when one is
configured (confluent-kafka's ``SchemaRegistryClient``, cached per id), else from local ``.avsc``
files: a file named ``<id>.avsc`` is that id; otherwise the schema whose record name matches the
topic (``MetadataChangeLog_*`` -> ``MetadataChangeLog``, ``MetadataChangeProposal_*``,
``MetadataAuditEvent_*``), or the only schema given.

Everything wrong raises :class:`MessageDecodeError` with a short ``kind`` (the DLQ header
``fieldgraph.error``) and a reason.

Writing, :class:`McpEncoder` puts MCPs in DataHub's Avro form: with the schema registered for the subject
(DataHub's own, where DataHub registered it), or else DataHub's MCP schema as fieldgraph ships it
(``schemas/MetadataChangeProposal.avsc``, registered under the subject).

A registry URL ``mock://NAME`` is confluent-kafka's in-process registry, one per name and process.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypedDict

from fieldgraph.errors import EmitError, MessageDecodeError, SourceUnavailable
from fieldgraph.ingest.secrets import redact

MAGIC = 0
#: DataHub's MetadataChangeProposal Avro schema (com.linkedin.pegasus2avro.mxe), as DataHub publishes it
MCP_SCHEMA = Path(__file__).parent / "schemas" / "MetadataChangeProposal.avsc"
_REGISTRIES: dict[tuple[str, tuple[tuple[str, Any], ...]], Any] = {}


def registry_client(url: str, conf: Mapping[str, Any] | None = None) -> Any:
    """The schema registry client for ``url`` (one per URL and settings in a process)."""
    key = (url, tuple(sorted((conf or {}).items())))
    if key not in _REGISTRIES:
        try:
            from confluent_kafka.schema_registry import SchemaRegistryClient
        except ImportError as exc:  # pragma: no cover - the kafka extra brings it
            raise MessageDecodeError("schema", f"the schema registry client is not installed: {exc}") from exc
        _REGISTRIES[key] = SchemaRegistryClient.new_client({"url": url, **(conf or {})})
    return _REGISTRIES[key]


#: topic prefix -> Avro record (short) name of the events it carries
TOPIC_RECORDS = {
    "MetadataChangeLog": "MetadataChangeLog",
    "MetadataChangeProposal": "MetadataChangeProposal",
    "FailedMetadataChangeProposal": "FailedMetadataChangeProposal",
    "MetadataAuditEvent": "MetadataAuditEvent",
    "MetadataChangeEvent": "MetadataChangeEvent",
}


#: fastavro reader options: a record in a union of several records (an MCE's snapshot and aspects) comes named
class _ReadNamed(TypedDict):
    return_record_name: bool
    return_record_name_override: bool


READ_NAMED: _ReadNamed = {"return_record_name": True, "return_record_name_override": True}


def avro_to_json(v: Any) -> Any:
    """A value fastavro read (with :data:`READ_NAMED`) as the JSON DataHub writes of it: a union's record as
    ``{"<record name>": {...}}``, bytes as UTF-8 text (else ``UnicodeDecodeError``), nulls left out."""
    if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str):
        return {v[0]: avro_to_json(v[1])}
    if isinstance(v, dict):
        return {k: avro_to_json(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [avro_to_json(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8")
    return v


class ValueDecoder:
    """Decodes message values; one per worker (schemas are cached)."""

    def __init__(self, *, registry_url: str | None = None, registry_conf: Mapping[str, Any] | None = None,
                 avsc: Iterable[str | Path] = ()) -> None:
        self.registry_url = registry_url
        self._registry_conf = dict(registry_conf or {})
        self._registry: Any = None
        self._by_id: dict[int, Any] = {}
        self._local: dict[str, Any] = {}  # file stem -> parsed schema
        self._local_names: dict[str, Any] = {}  # record short name -> parsed schema
        for p in avsc:
            self._load_avsc(Path(p))

    def _load_avsc(self, path: Path) -> None:
        from fastavro import parse_schema

        files = sorted(path.rglob("*.avsc")) if path.is_dir() else [path]
        if path.is_dir() and not files:
            raise MessageDecodeError("schema", f"{path}: no .avsc files in this folder")
        for f in files:
            try:
                doc = json.loads(f.read_text(encoding="utf-8"))
                parsed = parse_schema(doc)
            except OSError as exc:
                raise MessageDecodeError("schema", f"{f}: cannot read: {exc.strerror or exc}") from exc
            except Exception as exc:  # json or fastavro SchemaParseException
                raise MessageDecodeError("schema", f"{f}: not an Avro schema: {exc}") from exc
            self._local[f.stem] = parsed
            name = doc.get("name", "") if isinstance(doc, dict) else ""
            self._local_names[name.rsplit(".", 1)[-1]] = parsed

    # -- schemas --
    def _registry_schema(self, schema_id: int) -> Any:
        from fastavro import parse_schema

        if self._registry is None:
            self._registry = registry_client(self.registry_url or "", self._registry_conf)
        try:
            schema = self._registry.get_schema(schema_id)
        except Exception as exc:
            # a registry that is down is not bad input: the caller retries (RegistryUnavailable)
            status = getattr(exc, "http_status_code", None)
            if status == 404:
                raise MessageDecodeError("schema", f"schema id {schema_id} is not in the registry at "
                                         f"{redact(self.registry_url or '')}") from exc
            raise RegistryUnavailable(redact(f"schema registry at {self.registry_url}: {exc}")) from exc
        if schema.schema_type not in (None, "AVRO"):
            raise MessageDecodeError("schema", f"schema id {schema_id} is {schema.schema_type}, not Avro")
        return parse_schema(json.loads(schema.schema_str))

    def _local_schema(self, schema_id: int, topic: str) -> Any:
        if str(schema_id) in self._local:
            return self._local[str(schema_id)]
        for prefix, record in TOPIC_RECORDS.items():
            if topic.startswith(prefix) and record in self._local_names:
                return self._local_names[record]
        if len(self._local) == 1:
            return next(iter(self._local.values()))
        if not self._local:
            raise MessageDecodeError("schema", f"Avro message (schema id {schema_id}) but no schema registry "
                                     "(--schema-registry-url) and no local .avsc files (--avsc) are configured")
        raise MessageDecodeError("schema", f"no local schema for id {schema_id} on topic {topic!r}: name the file "
                                 f"{schema_id}.avsc, or configure the schema registry")

    def schema(self, schema_id: int, topic: str) -> Any:
        s = self._by_id.get(schema_id) if self.registry_url else None
        if s is None:
            s = self._registry_schema(schema_id) if self.registry_url else self._local_schema(schema_id, topic)
            if self.registry_url:
                self._by_id[schema_id] = s
        return s

    # -- values --
    def decode(self, value: bytes | None, topic: str = "") -> Any:
        """The event object in ``value`` (a dict for every DataHub event)."""
        if not value:
            raise MessageDecodeError("empty", "the message has no value (a tombstone or an empty message)")
        if value[0] == MAGIC and len(value) >= 5:
            return self.decode_avro(value, topic)
        try:
            return json.loads(value)
        except (ValueError, UnicodeDecodeError) as exc:
            raise MessageDecodeError("json", f"not JSON (and not Confluent wire-format Avro): {exc}") from exc
        except RecursionError:
            raise MessageDecodeError("json", "nested too deep to read (deeper than the JSON reader's recursion "
                                     "goes)") from None

    def decode_avro(self, value: bytes, topic: str = "") -> Any:
        from fastavro import schemaless_reader

        (schema_id,) = struct.unpack(">I", value[1:5])
        schema = self.schema(schema_id, topic)
        try:
            obj = schemaless_reader(io.BytesIO(value[5:]), schema, None, **READ_NAMED)
        except Exception as exc:
            raise MessageDecodeError("avro", f"Avro body does not match schema id {schema_id}: "
                                     f"{type(exc).__name__}: {exc}") from exc
        try:
            return avro_to_json(obj)
        except UnicodeDecodeError as exc:
            raise MessageDecodeError("avro", f"a bytes value is not UTF-8: {exc}") from exc


class RegistryUnavailable(SourceUnavailable):
    """The schema registry cannot be reached: not bad input, the worker retries."""


def encode_avro(obj: Mapping[str, Any], schema: Any, schema_id: int) -> bytes:
    """``obj`` in the Confluent wire format (for producers and tests)."""
    from fastavro import parse_schema, schemaless_writer

    buf = io.BytesIO()
    buf.write(struct.pack(">bI", MAGIC, schema_id))
    schemaless_writer(buf, parse_schema(schema) if isinstance(schema, dict) else schema, dict(obj))
    return buf.getvalue()


class McpEncoder:
    """MCP records -> Confluent wire-format Avro, with the schema of ``subject`` (see the module's doc)."""

    def __init__(self, registry_url: str, registry_conf: Mapping[str, Any] | None = None, *, subject: str) -> None:
        from confluent_kafka.schema_registry import Schema
        from confluent_kafka.schema_registry.error import SchemaRegistryError
        from fastavro import parse_schema

        client = registry_client(registry_url, registry_conf)
        self.subject = subject
        try:
            try:
                latest = client.get_latest_version(subject)
                self.schema_id, text = latest.schema_id, latest.schema.schema_str
            except SchemaRegistryError as exc:
                if exc.http_status_code != 404:
                    raise
                text = MCP_SCHEMA.read_text(encoding="utf-8")
                self.schema_id = client.register_schema(subject, Schema(text, "AVRO"))
        except SchemaRegistryError as exc:
            raise EmitError(redact(f"schema registry at {registry_url}, subject {subject}: {exc}")) from exc
        except Exception as exc:  # noqa: BLE001 - the HTTP client's connection errors
            raise RegistryUnavailable(redact(f"schema registry at {registry_url}: {type(exc).__name__}: {exc}")) \
                from exc
        self.schema = parse_schema(json.loads(text))

    def encode(self, mcp: Mapping[str, Any]) -> bytes:
        try:
            return encode_avro(mcp, self.schema, self.schema_id)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise EmitError(f"the event does not fit the MCP schema of {self.subject} "
                            f"(id {self.schema_id}): {type(exc).__name__}: {exc}") from exc
