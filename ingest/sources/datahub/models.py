"""DataHub's wire models: the envelopes of change events and the aspects fieldgraph reads, as strict pydantic
models, with Avro's JSON union encoding undone where DataHub's Kafka topics use it. Reading them from JSON is
:mod:`.serde`'s; what they mean to the graph is :mod:`.mapping`'s."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from fieldgraph.changes import DATASET_UPSTREAM_LINEAGE, EDITABLE_SCHEMA_METADATA, SCHEMA_METADATA, UPSTREAM_LINEAGE
from fieldgraph.normalizers import SchemaField

#: a dataset's key aspect: its DELETE deletes the dataset
DATASET_KEY = "datasetKey"
DATA_JOB_URN_PREFIX = "urn:li:dataJob:"

_NAMESPACES = ("com.linkedin.pegasus2avro.", "com.linkedin.")
_AVRO_UNION_BRANCHES = {"string", "long", "int", "float", "double", "boolean", "bytes", "array", "map"}


def unwrap_union(value: Any) -> Any:
    """Undo Avro's JSON union encoding (``{"string": "x"}`` -> ``"x"``, ``{"com.x.Y": {...}}`` -> ``{...}``)."""
    if isinstance(value, dict) and len(value) == 1:
        ((k, v),) = value.items()
        if k in _AVRO_UNION_BRANCHES or k.startswith("com.linkedin."):
            return v
    return value


def short_class(name: str) -> str:
    """A DataHub class name without its namespace (``com.linkedin.pegasus2avro.schema.X`` -> ``schema.X``)."""
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
    _normalized: list[SchemaField] | None = PrivateAttr(default=None)

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

    def normalized(self, normalize: Callable[[SchemaMetadata, str], list[SchemaField]],
                   where: str) -> list[SchemaField]:
        """The fields ``normalize`` makes of this aspect (:func:`.schemas.schema_fields`), computed once."""
        if self._normalized is None:
            self._normalized = normalize(self, where)
        return self._normalized


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
        if isinstance(data, dict):  # rebuilt only where a union is encoded (plain JSON has none)
            if any(isinstance(v, dict) for v in data.values()):
                data = {k: unwrap_union(v) for k, v in data.items()}
            for k in ("upstreams", "downstreams"):
                refs = data.get(k)
                if isinstance(refs, list) and any(isinstance(x, dict) for x in refs):
                    data = {**data, k: [unwrap_union(x) for x in refs]}
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


#: the dataset aspects fieldgraph reads, by name
ASPECT_MODELS: dict[str, type[BaseModel]] = {
    SCHEMA_METADATA: SchemaMetadata,
    UPSTREAM_LINEAGE: UpstreamLineage,
    DATASET_UPSTREAM_LINEAGE: DatasetUpstreamLineage,
    EDITABLE_SCHEMA_METADATA: EditableSchemaMetadata,
}

Aspect = SchemaMetadata | UpstreamLineage | DatasetUpstreamLineage | EditableSchemaMetadata
