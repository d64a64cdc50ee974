"""Guess a schema file's format from its name and content."""

from __future__ import annotations

import json

from .errors import SchemaNormalizationError

_BY_SUFFIX = {
    ".avsc": "avro",
}


def detect_format(name: str, data: bytes) -> str:
    """The format of the schema file ``name`` holding ``data``."""
    lower = name.lower()
    for suffix, fmt in _BY_SUFFIX.items():
        if lower.endswith(suffix):
            return fmt
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        doc = None
    if isinstance(doc, dict) and "table_list" in doc:
        return "datamine"
    if isinstance(doc, (dict, list, str)):
        return "avro"
    raise SchemaNormalizationError(
        "cannot tell the schema format from the file name or content; pass --format", schema=name
    )
