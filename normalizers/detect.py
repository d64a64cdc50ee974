"""Guess a schema file's format from its name, then its content."""

from __future__ import annotations

import json
import re
from typing import Any

from .errors import SchemaNormalizationError

_BY_SUFFIX = (
    (".avsc", "avro"),
    (".schema.json", "json-schema"),
    (".proto", "protobuf"),
    (".desc", "protobuf"),
    (".pb", "protobuf"),
    (".protoset", "protobuf"),
    (".binpb", "protobuf"),
    (".fds", "protobuf"),
    (".arrow", "arrow"),
    (".arrows", "arrow"),
    (".feather", "arrow"),
    (".ipc", "arrow"),
    (".parquet", "parquet"),
)
_MAGIC = ((b"PAR1", "parquet"), (b"ARROW1", "arrow"), (b"\xff\xff\xff\xff", "arrow"))
_PROTO_TEXT = re.compile(
    rb"\A(?:\xef\xbb\xbf)?(?:\s|//[^\n]*\n|/\*.*?\*/)*(?:syntax|edition|package|import|option|message|enum|service|extend)\b",
    re.S,
)
_ODF_MANIFEST = re.compile(rb"SetDataSchema|setDataSchema")
_JSON_SCHEMA_KEYS = ("$schema", "properties", "$defs", "definitions", "oneOf", "anyOf", "allOf", "$ref")


def detect_format(name: str, data: bytes) -> str:
    """The format of the schema file ``name`` holding ``data``."""
    lower = name.lower()
    for suffix, fmt in _BY_SUFFIX:
        if lower.endswith(suffix):
            return fmt
    for magic, fmt in _MAGIC:
        if data.startswith(magic):
            return fmt
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        doc = None
    found = _by_text(data) if doc is None else _by_document(doc, data)
    if found is not None:
        return found
    if isinstance(doc, (dict, list, str)):
        return "avro"
    raise SchemaNormalizationError(
        "cannot tell the schema format from the file name or content; pass --format", schema=name
    )


def _by_text(data: bytes) -> str | None:
    """The format of content that is not JSON: .proto text, an ODF manifest in YAML, a descriptor set."""
    if _PROTO_TEXT.match(data):
        return "protobuf"
    if _ODF_MANIFEST.search(data[:65536]):
        return "arrow"  # an Open Data Fabric manifest in YAML
    from .protobuf import is_descriptor_set

    if is_descriptor_set(data):
        return "protobuf"
    return None


def _by_document(doc: Any, data: bytes) -> str | None:
    """The format of a JSON document other than Avro (which is what any other JSON is taken for)."""
    if not isinstance(doc, dict):
        return None
    if "table_list" in doc:
        return "datamine"
    if doc.get("type") == "struct" and isinstance(doc.get("fields"), list):
        return "spark"
    if doc.get("kind") in ("SetDataSchema", "MetadataBlock") or _ODF_MANIFEST.search(data[:65536]):
        return "arrow"
    if doc.get("type") == "object" or (
        doc.get("type") not in ("record", "enum", "fixed", "array", "map", "error")
        and any(k in doc for k in _JSON_SCHEMA_KEYS)
    ):
        return "json-schema"
    return None
