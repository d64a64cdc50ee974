"""Reading DataHub's JSON into its wire models (:mod:`.models`): envelopes (MCP, MCL), legacy snapshots (MCE, MAE)
and aspects, serialized (``aspect.value``) or as objects (``aspect.json``). What does not fit raises
:class:`EventError` naming the place."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from fieldgraph.changes import DATASET_UPSTREAM_LINEAGE, EDITABLE_SCHEMA_METADATA, SCHEMA_METADATA, UPSTREAM_LINEAGE
from fieldgraph.errors import EventError

from ..validation import format_validation
from .models import (
    ASPECT_MODELS,
    Aspect,
    GenericAspect,
    MetadataChangeLog,
    MetadataChangeProposal,
    SchemaMetadata,
    short_class,
)
from .schemas import schema_fields

M = TypeVar("M", bound=BaseModel)

#: snapshot aspect class (without namespace) -> aspect name
SNAPSHOT_ASPECTS = {
    "schema.SchemaMetadata": SCHEMA_METADATA,
    "dataset.UpstreamLineage": UPSTREAM_LINEAGE,
    "dataset.DatasetUpstreamLineage": DATASET_UPSTREAM_LINEAGE,
    "DatasetUpstreamLineage": DATASET_UPSTREAM_LINEAGE,
    "schema.EditableSchemaMetadata": EDITABLE_SCHEMA_METADATA,
}
_SNAPSHOT_KEYS = {"auditHeader", "proposedSnapshot", "newSnapshot", "oldSnapshot", "systemMetadata",
                  "oldSystemMetadata", "newSystemMetadata"}


def read_model(model: type[M], value: Any, where: str) -> M:
    """``value`` as a ``model``, or :class:`EventError` with the first errors under ``where``."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise EventError(format_validation(exc, where)) from exc


def read_proposal(obj: dict[str, Any]) -> MetadataChangeProposal:
    """An MCP, or an MCL when ``obj`` has an attribute only a log has."""
    log = any(k in obj for k in ("previousAspectValue", "created", "previousSystemMetadata"))
    return read_model(MetadataChangeLog if log else MetadataChangeProposal, obj, "")


def aspect_value(aspect: GenericAspect, where: str) -> Any:
    """The aspect as an object: ``json`` as it is, ``value`` parsed as JSON."""
    if aspect.value is None:
        return aspect.json_
    try:
        return json.loads(aspect.value)
    except ValueError as exc:
        raise EventError(f"aspect.value is not JSON: {exc}", where=f"{where}.value") from exc


def aspect_where(aspect: GenericAspect, name: str) -> str:
    """The place of aspect ``name`` in an envelope, for errors: ``aspect.value(NAME)`` or ``aspect.json(NAME)``."""
    return f"aspect.{'value' if aspect.value is not None else 'json'}({name})"


def parse_aspect(name: str, value: Any, where: str = "aspect") -> Aspect:
    """Dataset aspect ``name`` (one of :data:`.models.ASPECT_MODELS`) as its model; a schema is normalized now, so
    that a bad schema is a bad event."""
    if isinstance(value, dict) and len(value) == 1 and short_class(next(iter(value))) in (
        "DatasetUpstreamLineage", "dataset.DatasetUpstreamLineage"
    ):
        value = next(iter(value.values()))  # the RFC's {"DatasetUpstreamLineage": {...}}
    aspect = read_model(ASPECT_MODELS[name], value, where)
    if isinstance(aspect, SchemaMetadata):
        schema_fields(aspect, where)
    return aspect  # type: ignore[return-value]


def read_snapshot(obj: dict[str, Any]) -> tuple[str, str, Any, dict[str, Any]]:
    """An MCE's or MAE's (key of the snapshot, its class without namespace, its body, the system metadata)."""
    key = "proposedSnapshot" if "proposedSnapshot" in obj else "newSnapshot"
    extra = sorted(set(obj) - _SNAPSHOT_KEYS)
    if extra:
        raise EventError(f"unknown attributes {', '.join(extra)} in a {'MCE' if key == 'proposedSnapshot' else 'MAE'}")
    snap = obj[key]
    if not isinstance(snap, dict) or len(snap) != 1:
        raise EventError("a snapshot is an object with one snapshot class key", where=key)
    ((cls, body),) = snap.items()
    return key, short_class(cls), body, obj.get("systemMetadata") or obj.get("newSystemMetadata") or {}


def snapshot_entity(key: str, body: Any, cls: str) -> tuple[Any, list[Any]]:
    """A snapshot body's (urn, aspects), or :class:`EventError` naming its class ``cls`` (``DatasetSnapshot``)."""
    if not isinstance(body, dict) or "urn" not in body or not isinstance(body.get("aspects"), list):
        raise EventError(f"{cls} needs urn and aspects", where=key)
    return body["urn"], body["aspects"]


def snapshot_aspects(key: str, aspects: list[Any]) -> Iterator[tuple[str, str, Any]]:
    """A snapshot's aspects as (place, class without namespace, value), each checked as it comes."""
    for i, item in enumerate(aspects):
        where = f"{key}.aspects[{i}]"
        if not isinstance(item, dict) or len(item) != 1:
            raise EventError("an aspect is an object with one aspect class key", where=where)
        ((cls, value),) = item.items()
        yield where, short_class(cls), value
