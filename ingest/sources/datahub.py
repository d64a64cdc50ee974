"""The DataHub source: change events and the aspects fieldgraph reads from them, as strict pydantic
wire models, turned into typed changes (:mod:`fieldgraph.changes`).

Envelopes, as they travel on Kafka in JSON:

- ``MetadataChangeProposal`` / ``MetadataChangeLog``: ``entityUrn``, ``changeType``, ``aspectName``,
  ``aspect: {"value": "<aspect JSON as a string>", "contentType": "application/json"}``, or, as DataHub's
  file sink and golden files write them, ``aspect: {"json": {...}}``; a DELETE without ``systemMetadata``
  (DataHub's ``MetadataChangeProposalWrapper``) is :data:`~fieldgraph.changes.UNSTAMPED`.
- legacy snapshots: ``MetadataChangeEvent`` (``proposedSnapshot``) and ``MetadataAuditEvent``
  (``newSnapshot``), aspects keyed by their class name (``com.linkedin.pegasus2avro.schema.SchemaMetadata``).

Aspects: ``schemaMetadata`` -> :class:`SchemaChange`; ``upstreamLineage`` (``fineGrainedLineages``) and
the RFC's ``datasetUpstreamLineage`` (``fieldMappings``) -> :class:`LineageChange`; ``editableSchemaMetadata``
(the tags and terms set on fields in DataHub's UI or API) -> :class:`EditableSchemaChange`; a data job's
``dataJobInputOutput`` -> :class:`DataJobChange`; DELETEs -> :class:`AspectDelete` / :class:`DatasetDelete` (of a
data job's aspect or the job: an empty :class:`DataJobChange`). Query entities' ``queryProperties`` (the statement) ->
:class:`QueryChange`: an upstream of ``upstreamLineage`` made by a ``query`` for which the aspect gives no
field lineage (no fine-grained lineage names the query or reads that upstream) gets the lineage the graph
derives from the query's statement (:attr:`LineageChange.queries`). Anything wrong raises
:class:`EventError` naming the place.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

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
    EdgeProps,
    EditableSchemaChange,
    FieldEdge,
    LineageChange,
    QueryChange,
    SchemaChange,
    operation_subtype,
)
from fieldgraph.errors import EventError, FieldgraphError, UrnError
from fieldgraph.normalizers import SchemaField
from fieldgraph.normalizers.urns import DatasetUrn, FieldUrn

DATASET_KEY = "datasetKey"
#: ``sourceFormat`` of each lineage aspect's edges
SOURCE_FORMATS = {UPSTREAM_LINEAGE: "datahub", DATASET_UPSTREAM_LINEAGE: "datahub-rfc"}

_NAMESPACES = ("com.linkedin.pegasus2avro.", "com.linkedin.")
#: snapshot aspect class (without namespace) -> aspect name
_SNAPSHOT_ASPECTS = {
    "schema.SchemaMetadata": SCHEMA_METADATA,
    "dataset.UpstreamLineage": UPSTREAM_LINEAGE,
    "dataset.DatasetUpstreamLineage": DATASET_UPSTREAM_LINEAGE,
    "DatasetUpstreamLineage": DATASET_UPSTREAM_LINEAGE,
    "schema.EditableSchemaMetadata": EDITABLE_SCHEMA_METADATA,
}
DATA_JOB_URN_PREFIX = "urn:li:dataJob:"
_AVRO_UNION_BRANCHES = {"string", "long", "int", "float", "double", "boolean", "bytes", "array", "map"}


def unwrap_union(value: Any) -> Any:
    """Undo Avro's JSON union encoding (``{"string": "x"}`` -> ``"x"``, ``{"com.x.Y": {...}}`` -> ``{...}``)."""
    if isinstance(value, dict) and len(value) == 1:
        ((k, v),) = value.items()
        if k in _AVRO_UNION_BRANCHES or k.startswith("com.linkedin."):
            return v
    return value


def short_class(name: str) -> str:
    for ns in _NAMESPACES:
        if name.startswith(ns):
            return name[len(ns):]
    return name


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class _Open(BaseModel):
    """Aspect records: unknown attributes (DataHub adds some over time) are kept, not refused."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


class ChangeType(StrEnum):
    UPSERT = "UPSERT"
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    PATCH = "PATCH"
    RESTATE = "RESTATE"
    CREATE_ENTITY = "CREATE_ENTITY"


class AuditStamp(_Open):
    time: int = 0
    actor: str | None = None


class GenericAspect(_Strict):
    """An aspect as DataHub sends it: serialized in ``value`` (Kafka, REST), or as an object in ``json``
    (DataHub's file sink and golden files)."""

    value: str | None = None
    json_: Any = Field(default=None, alias="json")
    contentType: str = "application/json"

    @field_validator("contentType")
    @classmethod
    def _json_only(cls, v: str) -> str:
        if v != "application/json":
            raise ValueError(f"contentType {v!r} is not supported; only application/json")
        return v

    @model_validator(mode="after")
    def _one_form(self) -> GenericAspect:
        if (self.value is None) == (self.json_ is None):
            raise ValueError("an aspect has either value (the aspect serialized) or json (the aspect as an object)")
        return self

    def parsed(self, where: str) -> Any:
        """The aspect as an object."""
        if self.value is None:
            return self.json_
        try:
            return json.loads(self.value)
        except ValueError as exc:
            raise EventError(f"aspect.value is not JSON: {exc}", where=f"{where}.value") from exc


class MetadataChangeProposal(_Strict):
    auditHeader: dict[str, Any] | None = None
    entityType: str
    entityUrn: str | None = None
    entityKeyAspect: GenericAspect | None = None
    changeType: ChangeType
    aspectName: str | None = None
    aspect: GenericAspect | None = None
    systemMetadata: dict[str, Any] | None = None
    headers: dict[str, str] | None = None


class MetadataChangeLog(MetadataChangeProposal):
    previousAspectValue: GenericAspect | None = None
    previousSystemMetadata: dict[str, Any] | None = None
    created: AuditStamp | None = None


# --- aspects ---------------------------------------------------------------------------------


class SchemaMetadata(_Open):
    schemaName: str = ""
    platform: str = ""
    version: int = 0
    created: AuditStamp | None = None
    lastModified: AuditStamp | None = None
    deleted: AuditStamp | None = None
    dataset: str | None = None
    cluster: str | None = None
    hash: str = ""
    platformSchema: dict[str, Any] = Field(default_factory=dict)
    fields: list[dict[str, Any]] | None = None
    _fields: list[SchemaField] | None = PrivateAttr(default=None)

    @field_validator("dataset", "cluster", mode="before")
    @classmethod
    def _unwrap(cls, v: Any) -> Any:
        return unwrap_union(v)

    @field_validator("created", "lastModified", "deleted", mode="before")
    @classmethod
    def _unwrap_stamp(cls, v: Any) -> Any:
        return unwrap_union(v)

    @property
    def platform_schema_class(self) -> str | None:
        if len(self.platformSchema) == 1:
            return short_class(next(iter(self.platformSchema))).rsplit(".", 1)[-1]
        return None

    @property
    def platform_schema_body(self) -> dict[str, Any]:
        if len(self.platformSchema) == 1:
            body = next(iter(self.platformSchema.values()))
            return body if isinstance(body, dict) else {}
        return self.platformSchema

    def schema_fields(self, where: str = "schemaMetadata") -> list[SchemaField]:
        """The fields: ``fields`` when present, else the platform schema normalized (computed once)."""
        if self._fields is None:
            self._fields = self._schema_fields(where)
        return self._fields

    def _schema_fields(self, where: str) -> list[SchemaField]:
        if self.fields is not None:
            out = []
            for i, f in enumerate(self.fields):
                try:
                    out.append(SchemaField.from_datahub(f))
                except ValueError as exc:
                    raise EventError(str(exc), where=f"{where}.fields[{i}]") from exc
            return out
        return _normalize_platform_schema(self, where)


_DOC_TYPE_FORMATS = {"AVRO": "avro", "PROTOBUF": "protobuf", "JSON": "json-schema"}


def _normalize_platform_schema(meta: SchemaMetadata, where: str) -> list[SchemaField]:
    from fieldgraph.normalizers import normalize, normalize_text

    cls = meta.platform_schema_class
    body = meta.platform_schema_body
    parts: list[tuple[str, str, bool]] = []  # (schema text, format, key)
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
    fields: list[SchemaField] = []
    for text, fmt, key in parts:
        try:
            if isinstance(text, str):  # the usual: remembered by its text, as streams repeat their schemas
                fields.extend(normalize_text(text, fmt, key=key, name=meta.schemaName or None))
            else:
                fields.extend(normalize(text, fmt, key=key, name=meta.schemaName or None))
        except FieldgraphError as exc:
            raise EventError(f"cannot normalize the {'key' if key else 'value'} schema: {exc}",
                             where=f"{where}.platformSchema") from exc
    return fields


class FineGrainedLineage(_Open):
    upstreamType: Literal["FIELD_SET", "DATASET", "NONE"]
    upstreams: list[str] = Field(default_factory=list)
    downstreamType: Literal["FIELD", "FIELD_SET"]
    downstreams: list[str] = Field(default_factory=list)
    transformOperation: str | None = None
    confidenceScore: float = 1.0
    query: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {k: unwrap_union(v) for k, v in data.items()}
            for k in ("upstreams", "downstreams"):
                if isinstance(data.get(k), list):
                    data[k] = [unwrap_union(x) for x in data[k]]
        return data

    @model_validator(mode="after")
    def _check(self) -> FineGrainedLineage:
        if self.downstreamType == "FIELD" and len(self.downstreams) > 1:
            raise ValueError(f"downstreamType FIELD allows one downstream, got {len(self.downstreams)}")
        return self


class Upstream(_Open):
    dataset: str
    type: str = "TRANSFORMED"
    query: str | None = None


class UpstreamLineage(_Open):
    upstreams: list[Upstream] = Field(default_factory=list)
    fineGrainedLineages: list[FineGrainedLineage] | None = None

    @field_validator("fineGrainedLineages", mode="before")
    @classmethod
    def _unwrap(cls, v: Any) -> Any:
        return unwrap_union(v)


class DatasetFieldMapping(_Open):
    sourceFields: list[str]
    destinationField: str
    transformationFunction: str = "com.linkedin.finegrainedmetadata.transformation.BlackBox"
    created: AuditStamp | None = None

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {k: unwrap_union(v) for k, v in data.items()}
            if isinstance(data.get("sourceFields"), list):
                data["sourceFields"] = [unwrap_union(x) for x in data["sourceFields"]]
            if data.get("transformationFunction") is None:
                data.pop("transformationFunction", None)
        return data


class DatasetUpstreamLineage(_Open):
    fieldMappings: list[DatasetFieldMapping]


class QueryStatement(_Open):
    value: str
    language: str = "SQL"


class QueryProperties(_Open):
    """A query entity's ``queryProperties``: the statement, and when it was made or last changed."""

    statement: QueryStatement
    created: AuditStamp | None = None
    lastModified: AuditStamp | None = None


def _named_urn(v: str, prefix: str, what: str) -> str:
    """``v`` when it is ``prefix`` followed by a name, else the error naming what it should be."""
    if not v.startswith(prefix) or v == prefix:
        raise ValueError(f"a {what} is a {what} URN ({prefix}NAME), got {v!r}")
    return v


class TagAssociation(_Open):
    tag: str

    @field_validator("tag")
    @classmethod
    def _tag_urn(cls, v: str) -> str:
        return _named_urn(v, "urn:li:tag:", "tag")


class GlobalTags(_Open):
    tags: list[TagAssociation] = Field(default_factory=list)


class GlossaryTermAssociation(_Open):
    urn: str

    @field_validator("urn")
    @classmethod
    def _term_urn(cls, v: str) -> str:
        return _named_urn(v, "urn:li:glossaryTerm:", "glossary term")


class GlossaryTerms(_Open):
    terms: list[GlossaryTermAssociation] = Field(default_factory=list)


class EditableSchemaFieldInfo(_Open):
    fieldPath: str
    description: str | None = None
    globalTags: GlobalTags | None = None
    glossaryTerms: GlossaryTerms | None = None

    @field_validator("description", "globalTags", "glossaryTerms", mode="before")
    @classmethod
    def _unwrap(cls, v: Any) -> Any:
        return unwrap_union(v)

    @property
    def labels(self) -> tuple[str, ...]:
        """Tags by name, terms by URN: as a field's own labels are named."""
        tags = (t.tag.removeprefix("urn:li:tag:") for t in (self.globalTags.tags if self.globalTags else ()))
        terms = (t.urn for t in (self.glossaryTerms.terms if self.glossaryTerms else ()))
        return tuple(dict.fromkeys((*tags, *terms)))


class EditableSchemaMetadata(_Open):
    """The tags, terms and descriptions set on a dataset's fields in DataHub's UI or API."""

    editableSchemaFieldInfo: list[EditableSchemaFieldInfo] = Field(default_factory=list)
    created: AuditStamp | None = None
    lastModified: AuditStamp | None = None

    @field_validator("created", "lastModified", mode="before")
    @classmethod
    def _unwrap_stamp(cls, v: Any) -> Any:
        return unwrap_union(v)


class DatasetEdge(_Open):
    destinationUrn: str


class DataJobInputOutput(_Open):
    """A data job's inputs and outputs, and the column lineage it makes (``fineGrainedLineages``)."""

    inputDatasets: list[str] = Field(default_factory=list)
    outputDatasets: list[str] = Field(default_factory=list)
    inputDatasetEdges: list[DatasetEdge] | None = None
    outputDatasetEdges: list[DatasetEdge] | None = None
    inputDatasetFields: list[str] | None = None
    outputDatasetFields: list[str] | None = None
    fineGrainedLineages: list[FineGrainedLineage] | None = None

    @field_validator("inputDatasetEdges", "outputDatasetEdges", "inputDatasetFields", "outputDatasetFields",
                     "fineGrainedLineages", mode="before")
    @classmethod
    def _unwrap(cls, v: Any) -> Any:
        return unwrap_union(v)


ASPECT_MODELS: dict[str, type[BaseModel]] = {
    SCHEMA_METADATA: SchemaMetadata,
    UPSTREAM_LINEAGE: UpstreamLineage,
    DATASET_UPSTREAM_LINEAGE: DatasetUpstreamLineage,
    EDITABLE_SCHEMA_METADATA: EditableSchemaMetadata,
}

Aspect = SchemaMetadata | UpstreamLineage | DatasetUpstreamLineage | EditableSchemaMetadata


def _format_validation(exc: ValidationError, prefix: str) -> str:
    errs = exc.errors()
    parts = []
    for e in errs[:3]:
        loc = ".".join(str(x) for x in e["loc"])
        parts.append(f"{prefix + '.' if prefix else ''}{loc}: {e['msg']}")
    more = f" (+{len(errs) - 3} more)" if len(errs) > 3 else ""
    return "; ".join(parts) + more


def parse_aspect(name: str, value: Any, where: str = "aspect") -> Aspect:
    model = ASPECT_MODELS[name]
    if isinstance(value, dict) and len(value) == 1 and short_class(next(iter(value))) in (
        "DatasetUpstreamLineage", "dataset.DatasetUpstreamLineage"
    ):
        value = next(iter(value.values()))  # the RFC's {"DatasetUpstreamLineage": {...}}
    try:
        aspect = model.model_validate(value)
    except ValidationError as exc:
        raise EventError(_format_validation(exc, where)) from exc
    if isinstance(aspect, SchemaMetadata):
        aspect.schema_fields(where)  # normalize now, so a bad schema is a bad event
    return aspect  # type: ignore[return-value]


def _canonical_dataset(urn: Any, where: str) -> str:
    try:
        return str(DatasetUrn.parse(urn))
    except UrnError as exc:
        raise EventError(str(exc), where=where) from exc


def _ts(*candidates: Any) -> int:
    for c in candidates:
        if isinstance(c, (int, float)) and not isinstance(c, bool) and c > 0:
            return int(c)
    return 0


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
    model = MetadataChangeLog if any(k in obj for k in ("previousAspectValue", "created", "previousSystemMetadata")) \
        else MetadataChangeProposal
    try:
        ev = model.model_validate(obj)
    except ValidationError as exc:
        raise EventError(_format_validation(exc, "")) from exc
    if ev.entityType == "query":
        return _query(ev, origin)
    if ev.entityType == "dataJob":
        return _data_job(ev, origin)
    if ev.entityType != "dataset":
        return []
    if not ev.entityUrn:
        raise EventError("entityUrn is missing (fieldgraph needs the dataset URN)", where="entityUrn")
    urn = _canonical_dataset(ev.entityUrn, "entityUrn")
    sysmeta = ev.systemMetadata or {}
    created = ev.created.time if isinstance(ev, MetadataChangeLog) and ev.created else None
    name = ev.aspectName
    if ev.changeType == ChangeType.DELETE:
        ts = _ts(sysmeta.get("lastObserved"), created) or UNSTAMPED
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
    value = ev.aspect.parsed("aspect")
    where = f"aspect.{'value' if ev.aspect.value is not None else 'json'}({name})"
    aspect = parse_aspect(name, value, where=where)
    check_lineage_refs(urn, aspect, where=where)
    ts = _ts(sysmeta.get("lastObserved"), created, *_aspect_times(aspect))
    return [to_change(urn, aspect, ts, origin, where)]


def _query(ev: MetadataChangeProposal, origin: str) -> list[Change]:
    """A query entity's ``queryProperties`` UPSERT (other aspects and changes of queries: nothing)."""
    if ev.aspectName != QUERY_PROPERTIES or ev.changeType not in (ChangeType.UPSERT, ChangeType.CREATE) \
            or ev.aspect is None:
        return []
    if not ev.entityUrn or not ev.entityUrn.startswith("urn:li:query:"):
        raise EventError(f"a query entity's URN starts with urn:li:query:, got {ev.entityUrn!r}", where="entityUrn")
    where = f"aspect.{'value' if ev.aspect.value is not None else 'json'}({QUERY_PROPERTIES})"
    try:
        props = QueryProperties.model_validate(ev.aspect.parsed("aspect"))
    except ValidationError as exc:
        raise EventError(_format_validation(exc, where)) from exc
    stamps = [s.time if s else None for s in (props.lastModified, props.created)]
    ts = _ts((ev.systemMetadata or {}).get("lastObserved"), *stamps)
    return [QueryChange(ev.entityUrn, props.statement.value, props.statement.language.upper(), ts, origin)]


def _data_job(ev: MetadataChangeProposal, origin: str) -> list[Change]:
    """A data job's ``dataJobInputOutput`` UPSERT; a DELETE of it or of the job: an empty version (other aspects
    of jobs: nothing)."""
    sysmeta = ev.systemMetadata or {}
    created = ev.created.time if isinstance(ev, MetadataChangeLog) and ev.created else None
    if ev.changeType == ChangeType.DELETE:
        if ev.aspectName not in (None, "dataJobKey", DATA_JOB_INPUT_OUTPUT):
            return []
        return [DataJobChange(_job_urn(ev.entityUrn), ts=_ts(sysmeta.get("lastObserved"), created) or UNSTAMPED,
                              origin=origin)]
    if ev.aspectName != DATA_JOB_INPUT_OUTPUT:
        return []
    if ev.changeType == ChangeType.PATCH:
        raise EventError(f"changeType PATCH of {DATA_JOB_INPUT_OUTPUT} is not supported; send the whole aspect "
                         "(UPSERT)", where="changeType")
    if ev.aspect is None:
        raise EventError(f"changeType {ev.changeType.value} of {DATA_JOB_INPUT_OUTPUT} has no aspect", where="aspect")
    where = f"aspect.{'value' if ev.aspect.value is not None else 'json'}({DATA_JOB_INPUT_OUTPUT})"
    return [_data_job_change(_job_urn(ev.entityUrn), ev.aspect.parsed("aspect"),
                             _ts(sysmeta.get("lastObserved"), created), origin, where)]


def _job_urn(urn: str | None, where: str = "entityUrn") -> str:
    if not urn or not urn.startswith(DATA_JOB_URN_PREFIX + "("):
        raise EventError(f"a data job's URN starts with {DATA_JOB_URN_PREFIX}(, got {urn!r}", where=where)
    return urn


def _data_job_change(job: str, value: Any, ts: int, origin: str, where: str) -> DataJobChange:
    """A job's lineage: its fine-grained lineages as a dataset's ``upstreamLineage`` ones, the job on every edge
    (its ``program``); its outputs, the datasets it lists and those of the fields it writes."""
    try:
        aspect = DataJobInputOutput.model_validate(value)
    except ValidationError as exc:
        raise EventError(_format_validation(exc, where)) from exc
    lineages = aspect.fineGrainedLineages or []
    outputs = [_canonical_dataset(u, f"{where}.outputDatasets[{i}]") for i, u in enumerate(aspect.outputDatasets)]
    outputs += (_canonical_dataset(e.destinationUrn, f"{where}.outputDatasetEdges[{i}].destinationUrn")
                for i, e in enumerate(aspect.outputDatasetEdges or []))
    outputs += (str(_field_ref(ref, f"{where}.outputDatasetFields[{i}]").dataset)
                for i, ref in enumerate(aspect.outputDatasetFields or []))
    outputs += _check_fine_grained(lineages, f"{where}.fineGrainedLineages")
    edges, dataset_edges, fields = _fine_grained_edges(lineages, program=job)
    return DataJobChange(job, tuple(edges), tuple(dataset_edges),
                         tuple(dict.fromkeys([*(aspect.outputDatasetFields or []), *fields])),
                         tuple(dict.fromkeys(outputs)), ts, origin)


def _aspect_times(aspect: Aspect) -> list[Any]:
    if isinstance(aspect, (SchemaMetadata, EditableSchemaMetadata)):
        return [s.time if s else None for s in (aspect.lastModified, aspect.created)]
    return []


def _decode_snapshot(obj: dict[str, Any], origin: str) -> list[Change]:
    key = "proposedSnapshot" if "proposedSnapshot" in obj else "newSnapshot"
    allowed = {"auditHeader", "proposedSnapshot", "newSnapshot", "oldSnapshot", "systemMetadata", "oldSystemMetadata",
               "newSystemMetadata"}
    extra = sorted(set(obj) - allowed)
    if extra:
        raise EventError(f"unknown attributes {', '.join(extra)} in a {'MCE' if key == 'proposedSnapshot' else 'MAE'}")
    snap = obj[key]
    if not isinstance(snap, dict) or len(snap) != 1:
        raise EventError("a snapshot is an object with one snapshot class key", where=key)
    ((cls, body),) = snap.items()
    if short_class(cls) == "metadata.snapshot.DataJobSnapshot":
        return _job_snapshot(key, body, obj, origin)
    if short_class(cls) != "metadata.snapshot.DatasetSnapshot":
        return []
    if not isinstance(body, dict) or "urn" not in body or not isinstance(body.get("aspects"), list):
        raise EventError("DatasetSnapshot needs urn and aspects", where=key)
    urn = _canonical_dataset(body["urn"], f"{key}.urn")
    sysmeta = obj.get("systemMetadata") or obj.get("newSystemMetadata") or {}
    out: list[Change] = []
    for i, item in enumerate(body["aspects"]):
        where = f"{key}.aspects[{i}]"
        if not isinstance(item, dict) or len(item) != 1:
            raise EventError("an aspect is an object with one aspect class key", where=where)
        ((acls, value),) = item.items()
        name = _SNAPSHOT_ASPECTS.get(short_class(acls))
        if name is None:
            continue
        where = f"{where}({short_class(acls)})"
        aspect = parse_aspect(name, value, where=where)
        check_lineage_refs(urn, aspect, where=where)
        out.append(to_change(urn, aspect, _ts(sysmeta.get("lastObserved"), *_aspect_times(aspect)), origin, where))
    return out


def _job_snapshot(key: str, body: Any, obj: dict[str, Any], origin: str) -> list[Change]:
    if not isinstance(body, dict) or "urn" not in body or not isinstance(body.get("aspects"), list):
        raise EventError("DataJobSnapshot needs urn and aspects", where=key)
    job = _job_urn(body["urn"], f"{key}.urn")
    sysmeta = obj.get("systemMetadata") or obj.get("newSystemMetadata") or {}
    out: list[Change] = []
    for i, item in enumerate(body["aspects"]):
        if not isinstance(item, dict) or len(item) != 1:
            raise EventError("an aspect is an object with one aspect class key", where=f"{key}.aspects[{i}]")
        ((acls, value),) = item.items()
        if short_class(acls) == "datajob.DataJobInputOutput":
            out.append(_data_job_change(job, value, _ts(sysmeta.get("lastObserved")), origin,
                                        f"{key}.aspects[{i}](datajob.DataJobInputOutput)"))
    return out


# --- aspects -> changes ------------------------------------------------------------------------------


def to_change(urn: str, aspect: Aspect, ts: int, origin: str, where: str = "aspect") -> Change:
    """The typed change an aspect of dataset ``urn`` stands for."""
    match aspect:
        case SchemaMetadata():
            return SchemaChange(urn, tuple(aspect.schema_fields(where)), aspect.version, ts, aspect.schemaName,
                                aspect.hash, aspect.platform, aspect.platform_schema_class,
                                _glossary_terms(aspect), origin)
        case UpstreamLineage():
            return _upstream_lineage(urn, aspect, ts, origin)
        case DatasetUpstreamLineage():
            return _dataset_upstream_lineage(urn, aspect, ts, origin)
        case EditableSchemaMetadata():
            return EditableSchemaChange(urn, tuple((f.fieldPath, f.labels) for f in aspect.editableSchemaFieldInfo
                                                   if f.labels), ts, origin)


def _upstream_lineage(urn: str, aspect: UpstreamLineage, ts: int, origin: str) -> LineageChange:
    edges, dataset_edges, fields = _fine_grained_edges(aspect.fineGrainedLineages or [])
    return LineageChange(urn, UPSTREAM_LINEAGE, tuple(edges), tuple(dataset_edges), tuple(fields), ts, origin,
                         _underived_queries(aspect))


def _fine_grained_edges(lineages: list[FineGrainedLineage], program: str | None = None,
                        ) -> tuple[list[FieldEdge], list[FieldEdge], list[str]]:
    """DataHub's fine-grained lineages (a dataset's ``upstreamLineage``, a job's ``dataJobInputOutput``) as field
    edges, dataset edges (``upstreamType`` DATASET) and the downstream fields they name; ``program``: the job that
    made them. They carry no time of their own (``createdAt`` only when the source gives one, as the RFC's
    mappings do): an edge the next version repeats is the same fact and keeps its ``validFrom``, where a stamp of
    each version would split it at every version DataHub sends."""
    edges: list[FieldEdge] = []
    dataset_edges: list[FieldEdge] = []
    fields: list[str] = []
    for i, fg in enumerate(lineages):
        subtype, masking = operation_subtype(fg.transformOperation)
        props = EdgeProps(SOURCE_FORMATS[UPSTREAM_LINEAGE], transformation=fg.transformOperation, subtype=subtype,
                          masking=masking, confidence=fg.confidenceScore, query=fg.query, program=program,
                          upstream_type=fg.upstreamType, downstream_type=fg.downstreamType, index=i)
        fields.extend(fg.downstreams)
        into = dataset_edges if fg.upstreamType == "DATASET" else edges
        into.extend(FieldEdge(d, u, props) for d in fg.downstreams for u in fg.upstreams)
    return edges, dataset_edges, fields


def _underived_queries(aspect: UpstreamLineage) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(query, its upstream datasets) for the upstreams made by a query the aspect gives no field lineage for."""
    fgs = aspect.fineGrainedLineages or []
    named = {fg.query for fg in fgs if fg.query}
    read = {u if fg.upstreamType == "DATASET" else _field_dataset(u) for fg in fgs for u in fg.upstreams}
    out: dict[str, list[str]] = {}
    for up in aspect.upstreams:
        if up.query and up.query not in named:
            out.setdefault(up.query, []).append(_canonical_dataset(up.dataset, "upstreams.dataset"))
    return tuple((q, tuple(ups)) for q, ups in out.items() if not read & set(ups))


def _field_dataset(ref: str) -> str:
    try:
        return str(FieldUrn.parse(ref).dataset)
    except UrnError:
        return ""


def _dataset_upstream_lineage(urn: str, aspect: DatasetUpstreamLineage, ts: int, origin: str) -> LineageChange:
    edges: list[FieldEdge] = []
    for i, m in enumerate(aspect.fieldMappings):
        subtype, masking = operation_subtype(m.transformationFunction)
        props = EdgeProps(SOURCE_FORMATS[DATASET_UPSTREAM_LINEAGE], transformation=m.transformationFunction,
                          subtype=subtype, masking=masking, created_at=m.created.time if m.created and m.created.time
                          else None, upstream_type="FIELD_SET", downstream_type="FIELD", index=i)
        edges.extend(FieldEdge(m.destinationField, u, props) for u in m.sourceFields)
    return LineageChange(urn, DATASET_UPSTREAM_LINEAGE, tuple(edges), (),
                         tuple(m.destinationField for m in aspect.fieldMappings), ts, origin)


def _glossary_terms(aspect: SchemaMetadata) -> dict[str, tuple[str, ...]]:
    """fieldPath -> glossary term names (``glossaryTerms.terms[].urn`` of the aspect's field dicts)."""
    out: dict[str, tuple[str, ...]] = {}
    for f in aspect.fields or []:
        if not isinstance(f, dict) or not f.get("glossaryTerms"):
            continue
        terms = f["glossaryTerms"].get("terms") if isinstance(f["glossaryTerms"], dict) else None
        names = tuple(str(t.get("urn", "")).removeprefix("urn:li:glossaryTerm:") for t in terms or []
                      if isinstance(t, dict) and t.get("urn"))
        if names and isinstance(f.get("fieldPath"), str):
            out[f["fieldPath"]] = names
    return out


def _field_ref(ref: str, where: str) -> FieldUrn:
    try:
        return FieldUrn.parse(ref)
    except UrnError as exc:
        raise EventError(str(exc), where=where) from exc


def _check_fine_grained(lineages: list[FineGrainedLineage], where: str, dataset_urn: str | None = None) -> list[str]:
    """Every reference of fine-grained lineages parses, and each downstream field belongs to ``dataset_urn`` when
    given (a dataset's aspect; a job's may write several); returns the downstream fields' datasets."""
    datasets: list[str] = []
    for i, fg in enumerate(lineages):
        w = f"{where}[{i}]"
        for j, ref in enumerate(fg.downstreams):
            ds = str(_field_ref(ref, f"{w}.downstreams[{j}]").dataset)
            if dataset_urn is not None and ds != dataset_urn:
                raise EventError(f"downstream field {ref!r} is not a field of the aspect's dataset {dataset_urn}",
                                 where=f"{w}.downstreams[{j}]")
            datasets.append(ds)
        for j, ref in enumerate(fg.upstreams):
            if fg.upstreamType == "DATASET":
                _canonical_dataset(ref, f"{w}.upstreams[{j}]")
            else:
                _field_ref(ref, f"{w}.upstreams[{j}]")
    return datasets


def check_lineage_refs(dataset_urn: str, aspect: Aspect, where: str) -> None:
    """Every reference parses, and every downstream field belongs to the aspect's own dataset."""
    if isinstance(aspect, UpstreamLineage):
        _check_fine_grained(aspect.fineGrainedLineages or [], f"{where}.fineGrainedLineages", dataset_urn)
    elif isinstance(aspect, DatasetUpstreamLineage):
        for i, m in enumerate(aspect.fieldMappings):
            w = f"{where}.fieldMappings[{i}]"
            f = _field_ref(m.destinationField, f"{w}.destinationField")
            if str(f.dataset) != dataset_urn:
                raise EventError(f"destination field {m.destinationField!r} is not a field of the aspect's dataset "
                                 f"{dataset_urn}", where=f"{w}.destinationField")
            for j, ref in enumerate(m.sourceFields):
                _field_ref(ref, f"{w}.sourceFields[{j}]")
