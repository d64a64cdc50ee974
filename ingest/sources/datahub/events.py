"""One DataHub event in, its changes out: the envelope read (:mod:`.serde`), routed by entity (datasets, data
jobs, queries), each aspect mapped (:mod:`.mapping`).

- ``MetadataChangeProposal`` / ``MetadataChangeLog``: ``entityUrn``, ``changeType``, ``aspectName``,
  ``aspect: {"value": "<aspect JSON as a string>", "contentType": "application/json"}``, or, as DataHub's
  file sink and golden files write them, ``aspect: {"json": {...}}``; a DELETE without ``systemMetadata``
  (DataHub's ``MetadataChangeProposalWrapper``) is :data:`~fieldgraph.changes.UNSTAMPED`.
- legacy snapshots: ``MetadataChangeEvent`` (``proposedSnapshot``) and ``MetadataAuditEvent``
  (``newSnapshot``), aspects keyed by their class name (``com.linkedin.pegasus2avro.schema.SchemaMetadata``).

DELETEs of a dataset's aspect or of the dataset -> :class:`AspectDelete` / :class:`DatasetDelete`; of a data job's
aspect or of the job: an empty :class:`DataJobChange`. Query entities' ``queryProperties`` -> :class:`QueryChange`:
an upstream of ``upstreamLineage`` made by a ``query`` for which the aspect gives no field lineage (no
fine-grained lineage names the query or reads that upstream) gets the lineage the graph derives from the query's
statement (:attr:`LineageChange.queries`). Anything wrong raises :class:`EventError` naming the place.
"""

from __future__ import annotations

from typing import Any

from fieldgraph.changes import (
    DATA_JOB_INPUT_OUTPUT,
    DATASET_UPSTREAM_LINEAGE,
    EDITABLE_SCHEMA_METADATA,
    QUERY_PROPERTIES,
    SCHEMA_METADATA,
    UNSTAMPED,
    UPSTREAM_LINEAGE,
    AspectDelete,
    Change,
    DataJobChange,
    DatasetDelete,
)
from fieldgraph.errors import EventError

from .mapping import (
    aspect_times,
    canonical_dataset,
    check_lineage_refs,
    data_job_change,
    first_stamp,
    job_urn,
    query_change,
    to_change,
)
from .models import (
    ASPECT_MODELS,
    DATASET_KEY,
    ChangeType,
    DataJobInputOutput,
    MetadataChangeLog,
    MetadataChangeProposal,
    QueryProperties,
)
from .serde import (
    SNAPSHOT_ASPECTS,
    aspect_value,
    aspect_where,
    parse_aspect,
    read_model,
    read_proposal,
    read_snapshot,
    snapshot_aspects,
    snapshot_entity,
)


def is_datahub_event(obj: dict[str, Any]) -> bool:
    return any(k in obj for k in ("proposedSnapshot", "newSnapshot", "entityType", "changeType"))


def decode_datahub_event(obj: dict[str, Any], origin: str = "") -> list[Change]:
    """The dataset changes in one DataHub event (MCP, MCL, MCE or MAE), or :class:`EventError`.

    Aspects fieldgraph does not use, and entities other than datasets, give an empty list.
    """
    if "proposedSnapshot" in obj or "newSnapshot" in obj:
        return _decode_snapshot(obj, origin)
    return _decode_proposal(obj, origin)


def _decode_proposal(obj: dict[str, Any], origin: str) -> list[Change]:
    ev = read_proposal(obj)
    if ev.entityType == "query":
        return _query(ev, origin)
    if ev.entityType == "dataJob":
        return _data_job(ev, origin)
    if ev.entityType != "dataset":
        return []
    if not ev.entityUrn:
        raise EventError("entityUrn is missing (fieldgraph needs the dataset URN)", where="entityUrn")
    urn = canonical_dataset(ev.entityUrn, "entityUrn")
    sysmeta = ev.systemMetadata or {}
    created = _created(ev)
    name = ev.aspectName
    if ev.changeType == ChangeType.DELETE:
        ts = first_stamp(sysmeta.get("lastObserved"), created) or UNSTAMPED
        if name in (None, DATASET_KEY):
            return [DatasetDelete(urn, ts, origin)]
        if name in (SCHEMA_METADATA, UPSTREAM_LINEAGE, DATASET_UPSTREAM_LINEAGE, EDITABLE_SCHEMA_METADATA):
            return [AspectDelete(urn, name, ts, origin)]
        return []
    if name not in ASPECT_MODELS:
        return []
    if ev.changeType == ChangeType.PATCH:
        raise EventError(f"changeType PATCH of {name} is not supported; send the whole aspect (UPSERT)",
                         where="changeType")
    if ev.aspect is None:
        raise EventError(f"changeType {ev.changeType.value} of {name} has no aspect", where="aspect")
    value = aspect_value(ev.aspect, "aspect")
    where = aspect_where(ev.aspect, name)
    aspect = parse_aspect(name, value, where=where)
    check_lineage_refs(urn, aspect, where=where)
    ts = first_stamp(sysmeta.get("lastObserved"), created, *aspect_times(aspect))
    return [to_change(urn, aspect, ts, origin, where)]


def _created(ev: MetadataChangeProposal) -> int | None:
    """An MCL's ``created`` time."""
    return ev.created.time if isinstance(ev, MetadataChangeLog) and ev.created else None


def _query(ev: MetadataChangeProposal, origin: str) -> list[Change]:
    """A query entity's ``queryProperties`` UPSERT (other aspects and changes of queries: nothing)."""
    if ev.aspectName != QUERY_PROPERTIES or ev.changeType not in (ChangeType.UPSERT, ChangeType.CREATE) \
            or ev.aspect is None:
        return []
    if not ev.entityUrn or not ev.entityUrn.startswith("urn:li:query:"):
        raise EventError(f"a query entity's URN starts with urn:li:query:, got {ev.entityUrn!r}", where="entityUrn")
    props = read_model(QueryProperties, aspect_value(ev.aspect, "aspect"), aspect_where(ev.aspect, QUERY_PROPERTIES))
    stamps = [s.time if s else None for s in (props.lastModified, props.created)]
    ts = first_stamp((ev.systemMetadata or {}).get("lastObserved"), *stamps)
    return [query_change(ev.entityUrn, props, ts, origin)]


def _data_job(ev: MetadataChangeProposal, origin: str) -> list[Change]:
    """A data job's ``dataJobInputOutput`` UPSERT; a DELETE of it or of the job: an empty version (other aspects
    of jobs: nothing)."""
    sysmeta = ev.systemMetadata or {}
    created = _created(ev)
    if ev.changeType == ChangeType.DELETE:
        if ev.aspectName not in (None, "dataJobKey", DATA_JOB_INPUT_OUTPUT):
            return []
        return [DataJobChange(job_urn(ev.entityUrn), ts=first_stamp(sysmeta.get("lastObserved"), created)
                              or UNSTAMPED, origin=origin)]
    if ev.aspectName != DATA_JOB_INPUT_OUTPUT:
        return []
    if ev.changeType == ChangeType.PATCH:
        raise EventError(f"changeType PATCH of {DATA_JOB_INPUT_OUTPUT} is not supported; send the whole aspect "
                         "(UPSERT)", where="changeType")
    if ev.aspect is None:
        raise EventError(f"changeType {ev.changeType.value} of {DATA_JOB_INPUT_OUTPUT} has no aspect", where="aspect")
    job = job_urn(ev.entityUrn)
    where = aspect_where(ev.aspect, DATA_JOB_INPUT_OUTPUT)
    aspect = read_model(DataJobInputOutput, aspect_value(ev.aspect, "aspect"), where)
    return [data_job_change(job, aspect, first_stamp(sysmeta.get("lastObserved"), created), origin, where)]


def _decode_snapshot(obj: dict[str, Any], origin: str) -> list[Change]:
    key, cls, body, sysmeta = read_snapshot(obj)
    if cls == "metadata.snapshot.DataJobSnapshot":
        return _job_snapshot(key, body, sysmeta, origin)
    if cls != "metadata.snapshot.DatasetSnapshot":
        return []
    raw_urn, aspects = snapshot_entity(key, body, "DatasetSnapshot")
    urn = canonical_dataset(raw_urn, f"{key}.urn")
    out: list[Change] = []
    for where, acls, value in snapshot_aspects(key, aspects):
        name = SNAPSHOT_ASPECTS.get(acls)
        if name is None:
            continue
        where = f"{where}({acls})"
        aspect = parse_aspect(name, value, where=where)
        check_lineage_refs(urn, aspect, where=where)
        out.append(to_change(urn, aspect, first_stamp(sysmeta.get("lastObserved"), *aspect_times(aspect)), origin,
                             where))
    return out


def _job_snapshot(key: str, body: Any, sysmeta: dict[str, Any], origin: str) -> list[Change]:
    raw_urn, aspects = snapshot_entity(key, body, "DataJobSnapshot")
    job = job_urn(raw_urn, f"{key}.urn")
    out: list[Change] = []
    for where, acls, value in snapshot_aspects(key, aspects):
        if acls == "datajob.DataJobInputOutput":
            where = f"{where}(datajob.DataJobInputOutput)"
            aspect = read_model(DataJobInputOutput, value, where)
            out.append(data_job_change(job, aspect, first_stamp(sysmeta.get("lastObserved")), origin, where))
    return out
