"""A ``schemaMetadata`` aspect's fields: the ``fields`` it lists, or else its platform schema normalized
(``KafkaSchema``'s key and value schemas in Avro, Protobuf or JSON Schema; ``OtherSchema``'s raw Avro record or
JSON Schema). Anything else raises :class:`EventError` naming the place."""

from __future__ import annotations

import json

from fieldgraph.errors import EventError, FieldgraphError
from fieldgraph.normalizers import SchemaField, normalize, normalize_text

from .models import SchemaMetadata, unwrap_union

#: ``KafkaSchema.documentSchemaType`` -> the normalizer's format
_DOC_TYPE_FORMATS = {"AVRO": "avro", "PROTOBUF": "protobuf", "JSON": "json-schema"}


def schema_fields(meta: SchemaMetadata, where: str = "schemaMetadata") -> list[SchemaField]:
    """The fields: ``fields`` when present, else the platform schema normalized (computed once per aspect)."""
    return meta.normalized(_schema_fields, where)


def _schema_fields(meta: SchemaMetadata, where: str) -> list[SchemaField]:
    if meta.fields is not None:
        out = []
        for i, f in enumerate(meta.fields):
            try:
                out.append(SchemaField.from_datahub(f))
            except ValueError as exc:
                raise EventError(str(exc), where=f"{where}.fields[{i}]") from exc
        return out
    return _normalize_platform_schema(meta, where)


def _normalize_platform_schema(meta: SchemaMetadata, where: str) -> list[SchemaField]:
    fields: list[SchemaField] = []
    for text, fmt, key in _schema_parts(meta, where):
        try:
            if isinstance(text, str):  # the usual: remembered by its text, as streams repeat their schemas
                fields.extend(normalize_text(text, fmt, key=key, name=meta.schemaName or None))
            else:
                fields.extend(normalize(text, fmt, key=key, name=meta.schemaName or None))
        except FieldgraphError as exc:
            raise EventError(f"cannot normalize the {'key' if key else 'value'} schema: {exc}",
                             where=f"{where}.platformSchema") from exc
    return fields


def _schema_parts(meta: SchemaMetadata, where: str) -> list[tuple[str, str, bool]]:
    """The platform schema's parts as (schema text, format, is the key schema)."""
    cls = meta.platform_schema_class
    body = meta.platform_schema_body
    parts: list[tuple[str, str, bool]] = []
    if cls == "KafkaSchema":
        fmt = _DOC_TYPE_FORMATS.get(unwrap_union(body.get("documentSchemaType")) or "AVRO")
        if fmt is None:
            raise EventError(f"documentSchemaType {body.get('documentSchemaType')!r} is not one fieldgraph reads",
                             where=f"{where}.platformSchema")
        key_schema = unwrap_union(body.get("keySchema"))
        if key_schema:
            key_fmt = _DOC_TYPE_FORMATS.get(unwrap_union(body.get("keySchemaType")) or "AVRO", fmt)
            parts.append((key_schema, key_fmt, True))
        if not body.get("documentSchema"):
            raise EventError("KafkaSchema has no documentSchema and the aspect lists no fields",
                             where=f"{where}.platformSchema")
        parts.append((body["documentSchema"], fmt, False))
    elif cls == "OtherSchema" and isinstance(body.get("rawSchema"), str):
        raw = body["rawSchema"]
        try:
            doc = json.loads(raw)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and doc.get("type") == "record":
            parts.append((raw, "avro", False))
        elif isinstance(doc, dict) and ("$schema" in doc or "properties" in doc):
            parts.append((raw, "json-schema", False))
        else:
            raise EventError("OtherSchema.rawSchema is neither an Avro record nor a JSON Schema, and the aspect lists "
                             "no fields", where=f"{where}.platformSchema")
    else:
        raise EventError(f"the aspect lists no fields and its platform schema ({cls or 'none'}) is not one fieldgraph "
                         "normalizes (KafkaSchema, OtherSchema with an Avro or JSON Schema rawSchema)",
                         where=f"{where}.platformSchema")
    return parts
