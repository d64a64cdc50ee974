"""The change model: what a source says happened to a dataset, typed, frozen, with no I/O.

Sources (``fieldgraph.ingest.sources``: DataHub, CDAP, OpenLineage) turn wire events into these;
the graph (``fieldgraph.graph``) plans and writes them. Nothing below the sources sees a wire model.

- :class:`SchemaChange`: a dataset's whole field set (DataHub ``schemaMetadata``, an OpenLineage
  ``schema`` facet);
- :class:`LineageChange`: the whole set of a dataset's incoming edges from one lineage aspect
  (DataHub ``upstreamLineage``, the RFC's ``datasetUpstreamLineage``); it replaces the previous one;
- :class:`JobLineageChange`: the edges one job run observed into a dataset (CDAP field operations,
  OpenLineage column lineage); additive, kept per job with first and last seen times;
- :class:`SqlChange`: a SQL statement that wrote a dataset; the graph derives its field lineage against the
  schemas it holds (:mod:`fieldgraph.sqllineage`) and writes it as a :class:`JobLineageChange`;
- :class:`QueryChange`: a DataHub query entity's statement, joined in the graph to the lineage aspects
  that name the query without field lineage;
- :class:`EditableSchemaChange`: the tags and glossary terms set on a dataset's fields in DataHub's UI or API
  (DataHub ``editableSchemaMetadata``); the newest replaces the rest;
- :class:`DataJobChange`: a DataHub data job's whole column lineage (``dataJobInputOutput``), into every dataset
  it writes; the newest replaces the job's edges wherever they are;
- :class:`ManualEdgeChange`: one lineage edge drawn (or removed) by hand (``fieldgraph edge``, the service's
  ``/api/v1/edges``); no aspect, delete or job run ends it, only its own removal;
- :class:`AspectDelete` and :class:`DatasetDelete`.

Every change carries the URN it is about (:func:`subject`: ``dataset``, a canonical dataset URN; ``query`` in a
:class:`QueryChange`, ``job`` in a :class:`DataJobChange`), ``ts`` (ms; orders changes of one aspect) and
``origin`` (where it was read: ``file:line``, ``topic[partition]@offset``). Field references
(``FieldEdge.downstream``/``upstream``, ``fields``) are field URNs whose path may be v2, v1 dotted
or an RFC slash path; the graph resolves them against the dataset's fields.

Every ``DataDerivedFrom`` edge, whatever its source, carries one property vocabulary: :class:`EdgeProps`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias, assert_never, get_args

from fieldgraph.errors import InputError
from fieldgraph.normalizers.fields import SchemaField, pickled_by_fields
from fieldgraph.normalizers.urns import FieldUrn

if TYPE_CHECKING:
    from fieldgraph.sqllineage import Statement

SCHEMA_METADATA: Literal["schemaMetadata"] = "schemaMetadata"
QUERY_PROPERTIES: Literal["queryProperties"] = "queryProperties"
UPSTREAM_LINEAGE: Literal["upstreamLineage"] = "upstreamLineage"
DATASET_UPSTREAM_LINEAGE: Literal["datasetUpstreamLineage"] = "datasetUpstreamLineage"
JOB_LINEAGE: Literal["jobLineage"] = "jobLineage"
EDITABLE_SCHEMA_METADATA: Literal["editableSchemaMetadata"] = "editableSchemaMetadata"
DATA_JOB_INPUT_OUTPUT: Literal["dataJobInputOutput"] = "dataJobInputOutput"
#: the ``source`` and ``sourceFormat`` of a lineage edge drawn by hand (:class:`ManualEdgeChange`)
MANUAL: Literal["manual"] = "manual"

LineageAspect: TypeAlias = Literal["upstreamLineage", "datasetUpstreamLineage"]
AspectName: TypeAlias = Literal["schemaMetadata", "upstreamLineage", "datasetUpstreamLineage", "jobLineage",
                                "editableSchemaMetadata"]
LINEAGE_ASPECTS: tuple[LineageAspect, ...] = (UPSTREAM_LINEAGE, DATASET_UPSTREAM_LINEAGE)
#: a dataset's aspects (what deleting the dataset deletes)
ASPECTS: tuple[AspectName, ...] = (SCHEMA_METADATA, *LINEAGE_ASPECTS, JOB_LINEAGE, EDITABLE_SCHEMA_METADATA)

DIRECT: Literal["DIRECT"] = "DIRECT"
INDIRECT: Literal["INDIRECT"] = "INDIRECT"
EdgeKind: TypeAlias = Literal["DIRECT", "INDIRECT"]

_AGGREGATIONS = frozenset({"SUM", "COUNT", "AVG", "MEAN", "MIN", "MAX", "AGG", "AGGREGATE", "AGGREGATION",
                           "COUNT_DISTINCT", "MEDIAN", "STDDEV"})
_MASKING = frozenset({"MASK", "MASKED", "MASKING", "HASH", "REDACT", "ENCRYPT", "TOKENIZE"})


# --- the edge vocabulary -------------------------------------------------------------------------------

#: an edge's ``subtype``, OpenLineage's words: DIRECT ones (IDENTITY: the value unchanged; TRANSFORMATION; AGGREGATION),
#: then INDIRECT ones. Every source writes one of these, except an OpenLineage producer's: one outside the list passes
#: through as sent (upper-cased), and none given is none stored (the transformation is then ``BlackBox``)
Subtype: TypeAlias = Literal["IDENTITY", "TRANSFORMATION", "AGGREGATION", "FILTER", "JOIN", "GROUP_BY", "SORT",
                             "WINDOW", "CONDITIONAL"]
SUBTYPES: tuple[Subtype, ...] = get_args(Subtype)
#: the ``transformation`` words fieldgraph writes itself: ``Identity`` (the value unchanged), ``BlackBox`` (a
#: transformation the source did not say), else the subtype's (:data:`TRANSFORMATION_OF`). A source's own operation
#: name is written as it was sent instead: DataHub's ``transformOperation`` (``SUM``), the RFC's
#: ``transformationFunction`` (its default ``com.linkedin.finegrainedmetadata.transformation.BlackBox``), CDAP's
#: transform names (``concat``), an OpenLineage subtype outside :data:`SUBTYPES`, and the one drawn by hand
#: (``fieldgraph edge add --transformation``)
Transformation: TypeAlias = Literal["Identity", "BlackBox", "Transformation", "Aggregation", "Filter", "Join",
                                    "GroupBy", "Sort", "Window", "Conditional"]
TRANSFORMATIONS: tuple[Transformation, ...] = get_args(Transformation)
IDENTITY_TRANSFORMATION: Literal["Identity"] = "Identity"
BLACK_BOX: Literal["BlackBox"] = "BlackBox"
#: what a walk's hop across a rename (a ``RenamedFrom`` edge, not a ``DataDerivedFrom`` one) shows as its transformation
RENAME_TRANSFORMATION: Literal["Rename"] = "Rename"
#: the transformation word of each subtype
TRANSFORMATION_OF: Mapping[Subtype, Transformation] = {
    "IDENTITY": IDENTITY_TRANSFORMATION, "TRANSFORMATION": "Transformation", "AGGREGATION": "Aggregation",
    "FILTER": "Filter", "JOIN": "Join", "GROUP_BY": "GroupBy", "SORT": "Sort", "WINDOW": "Window",
    "CONDITIONAL": "Conditional"}
#: words older fieldgraphs wrote (a subtype title-cased), read as today's (:func:`read_transformation`)
OLD_TRANSFORMATIONS: Mapping[str, Transformation] = {"Blackbox": BLACK_BOX, "Group_By": "GroupBy"}
_WORDS: dict[str, str] = {subtype: word for subtype, word in TRANSFORMATION_OF.items()}


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class EdgeProps:
    """The properties every ``DataDerivedFrom`` edge carries, whatever its source.

    ``transformation``: a word of :data:`Transformation` or the source's own operation; ``kind``: DIRECT (the
    value flows into the field) or INDIRECT (it only influences it: filter, join, group by, ...);
    ``subtype``: a word of :data:`Subtype` (IDENTITY, TRANSFORMATION, AGGREGATION, FILTER, JOIN, ...); ``masking``:
    the value is masked (hashed, redacted) on the way; ``query`` or ``program`` (and ``run``, ``run_time``) that
    made it; ``operation_set``: the checksum of the run's field operations (CDAP; stored once, see
    :class:`RunOperations`); ``transformations``: every
    ``KIND/SUBTYPE`` seen (OpenLineage lists several). DataHub's aspects also say where in the aspect the
    edge was declared (``upstream_type``, ``downstream_type``, ``index``) and, where the aspect says it (the RFC's
    mappings), when (``created_at``): an edge has no time of its own otherwise, so one a new version repeats keeps
    its interval.
    """

    source_format: str
    transformation: str | None = None
    kind: EdgeKind = DIRECT
    subtype: str | None = None
    masking: bool = False
    confidence: float = 1.0
    query: str | None = None
    program: str | None = None
    run: str | None = None
    run_time: int | None = None
    description: str | None = None
    operation_set: str | None = None
    transformations: tuple[str, ...] = ()
    created_at: int | None = None
    upstream_type: str | None = None
    downstream_type: str | None = None
    index: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in (DIRECT, INDIRECT):
            raise InputError(f"edge kind must be DIRECT or INDIRECT, got {self.kind!r}")

    def to_props(self) -> dict[str, Any]:
        """The stored properties (None and empty values are not stored)."""
        props: dict[str, Any] = {
            "sourceFormat": self.source_format, "transformation": self.transformation, "kind": self.kind,
            "subtype": self.subtype, "masking": bool(self.masking), "confidenceScore": float(self.confidence),
            "query": self.query, "program": self.program, "run": self.run, "runTime": self.run_time,
            "description": self.description, "operationSet": self.operation_set,
            "transformations": list(self.transformations) or None, "createdAt": self.created_at,
            "upstreamType": self.upstream_type, "downstreamType": self.downstream_type, "index": self.index,
        }
        return {k: v for k, v in props.items() if v is not None}


def transformation_of(subtype: str | None) -> str:
    """The ``transformation`` fieldgraph writes for an edge of ``subtype`` (None: :data:`BLACK_BOX`): its word in
    :data:`TRANSFORMATION_OF`, else the subtype as sent."""
    if subtype is None:
        return BLACK_BOX
    return _WORDS.get(subtype, subtype)


def read_transformation(word: Any) -> Any:
    """A stored ``transformation`` as today's vocabulary spells it (an older fieldgraph's ``Blackbox`` is
    ``BlackBox``); anything else as stored."""
    return OLD_TRANSFORMATIONS.get(word, word) if isinstance(word, str) else word


def operation_subtype(operation: str | None) -> tuple[Subtype, bool]:
    """(subtype, masking) of an operation name (DataHub ``transformOperation``, RFC ``transformationFunction``)."""
    op = (operation or "").rsplit(".", 1)[-1].upper()
    if op in ("IDENTITY", "COPY"):
        return "IDENTITY", False
    if op in _MASKING:
        return "TRANSFORMATION", True
    if op in _AGGREGATIONS:
        return "AGGREGATION", False
    return "TRANSFORMATION", False


def carries_metadata(edge: Mapping[str, Any], *, indirect: bool = False) -> bool:
    """Whether tags and terms propagate along a stored edge: identity and direct edges carry them, masking
    edges stop them, indirect ones only when ``indirect`` is set. Edges stored before the vocabulary
    (no ``kind``) count as direct."""
    if edge.get("masking"):
        return False
    if (edge.get("kind") or DIRECT) == INDIRECT:
        return indirect
    return True


# --- changes ---------------------------------------------------------------------------------------


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class FieldEdge:
    """``downstream`` (a field of the change's dataset) derives from ``upstream`` (a field URN, or a
    dataset URN in :attr:`LineageChange.dataset_edges`)."""

    downstream: str
    upstream: str
    props: EdgeProps


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class SchemaChange:
    """A dataset's whole field set. The newest by ``(version, ts)`` is current; fields it does not list
    are kept as removed. ``glossary_terms``: field path -> glossary term names."""

    dataset: str
    fields: tuple[SchemaField, ...]
    version: int = 0
    ts: int = 0
    name: str = ""
    hash: str = ""
    platform: str = ""
    platform_schema: str | None = None
    glossary_terms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    origin: str = ""
    aspect: ClassVar[AspectName] = SCHEMA_METADATA


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class LineageChange:
    """The whole set of a dataset's incoming edges from one lineage ``aspect``; the newest (``ts``) replaces
    the rest. ``fields`` are downstream fields the aspect names (also those without an edge). ``queries``:
    the queries (``urn:li:query:...``) the aspect says made the dataset from some of its upstreams (their
    dataset URNs) without giving field lineage for them: the graph derives it from each query's statement."""

    dataset: str
    aspect: LineageAspect
    edges: tuple[FieldEdge, ...] = ()
    dataset_edges: tuple[FieldEdge, ...] = ()
    fields: tuple[str, ...] = ()
    ts: int = 0
    origin: str = ""
    queries: tuple[tuple[str, tuple[str, ...]], ...] = ()


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class RunOperations:
    """The field operations of one job run (CDAP), kept per run so lineage can be asked for a time range.
    Stored once per content (``checksum``), which every run with the same operations refers to.
    ``operations``: their canonical JSON (:class:`fieldgraph.fieldops.OperationSet`); ``sources`` and
    ``destinations``: the datasets the run read and wrote."""

    checksum: str
    operations: str
    sources: tuple[str, ...] = ()
    destinations: tuple[str, ...] = ()


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class JobLineageChange:
    """The lineage one run of ``job`` observed into a dataset at ``ts``. Additive: an edge per (field pair,
    job) keeps its first and last seen times and the newest run's properties. ``fields``: destination
    fields the job declares (with no upstream too); ``reads``: fields of other datasets the run read (known
    fields of those datasets, used or not); ``dropped``: ``(field URN, entry)`` of fields it drops;
    ``operations``: the run's field operations, kept per run; ``ordered``: ``fields`` are the dataset's columns in
    order (a SQL statement's outputs), so a declared field no schema lists keeps its column number, and a schema
    arriving later that names that column otherwise is reported with both names."""

    dataset: str
    job: str
    format: str
    run: str | None = None
    edges: tuple[FieldEdge, ...] = ()
    fields: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    dropped: tuple[tuple[str, str], ...] = ()
    ts: int = 0
    origin: str = ""
    operations: RunOperations | None = None
    ordered: bool = False
    aspect: ClassVar[AspectName] = JOB_LINEAGE


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class SqlChange:
    """A SQL ``statement`` (one, in ``dialect``) that wrote ``dataset``, run by ``job`` at ``ts``. The graph
    derives its field lineage against the schemas it holds when the change is written (``SELECT *`` and
    unqualified names need them) and writes it as ``job``'s lineage (:class:`JobLineageChange`, format
    ``sql``). ``tables``: each table name the statement reads (as :func:`fieldgraph.sqllineage.table_key`
    writes it) -> its dataset URN; ``target``: the statement's name for ``dataset`` (empty: a SELECT
    whose results ``dataset`` holds); ``query``: what edges record as their query (default: the statement);
    ``strict``: a statement that cannot be derived refuses the change (else it is logged and left out: the
    lineage of a DataHub query joined to an aspect that was sent without it); ``parsed``: ``statement`` as its
    source split it (:func:`fieldgraph.sqllineage.parse_statements`), so that the graph does not parse it again
    (``None``: the graph parses ``statement``).

    ``sent``: the lineage the producer sent for ``dataset`` (OpenLineage column lineage, when its types are filled
    from the job's SQL), of which ``untyped`` are the (downstream, upstream) pairs the producer gave no
    transformation: the graph writes ``sent`` with each untyped edge taking the kind, subtype and masking the
    statement gives its pair, and the statement's INDIRECT edges ``sent`` lacks (joins, filters, ...) added; the
    producer's typed edges, and its DIRECT lineage, as sent. A statement that cannot be derived writes ``sent`` as it
    is."""

    dataset: str
    job: str
    statement: str
    dialect: str | None = None
    tables: tuple[tuple[str, str], ...] = ()
    target: str = ""
    run: str | None = None
    query: str | None = None
    ts: int = 0
    origin: str = ""
    strict: bool = True
    parsed: Statement | None = field(default=None, compare=False, repr=False)
    sent: JobLineageChange | None = None
    untyped: tuple[tuple[str, str], ...] = ()
    aspect: ClassVar[AspectName] = JOB_LINEAGE


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class QueryChange:
    """A DataHub query entity's SQL (``queryProperties.statement``), kept in the graph (a ``Query`` node) so
    that the lineage of every dataset whose lineage aspect names the query without field lineage
    (:attr:`LineageChange.queries`) is derived from it, whichever of the two arrives first. ``query``
    is the query's URN (it keys the change as a dataset URN keys the others)."""

    query: str
    statement: str
    language: str = "SQL"
    ts: int = 0
    origin: str = ""
    aspect: ClassVar[str] = QUERY_PROPERTIES


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class EditableSchemaChange:
    """The tags and glossary terms set on a dataset's fields in DataHub's UI or API (``editableSchemaMetadata``):
    ``labels`` is (field path, labels) per field, the path as DataHub keeps it (v1 dotted or v2), the labels as
    a field's own are named (a tag by its name, a term by its URN ``urn:li:glossaryTerm:X``). The newest
    (``ts``) replaces the rest; a field's own labels are its schema's plus these, as in DataHub."""

    dataset: str
    labels: tuple[tuple[str, tuple[str, ...]], ...] = ()
    ts: int = 0
    origin: str = ""
    aspect: ClassVar[AspectName] = EDITABLE_SCHEMA_METADATA


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class DataJobChange:
    """A DataHub data job's whole column lineage (``dataJobInputOutput``): its edges into the fields of the
    datasets it writes (``outputs``), with the same properties as a dataset's ``upstreamLineage`` edges. The
    newest (``ts``) replaces the job's edges wherever they are: those it no longer lists stop holding, also in
    datasets it no longer writes; an empty one (the aspect deleted) ends them all. ``job`` is the job's URN
    (``urn:li:dataJob:...``): it keys the change as a dataset URN keys the others, and every edge keeps it
    (``program``). ``fields``: output fields the job declares (with no upstream too)."""

    job: str
    edges: tuple[FieldEdge, ...] = ()
    dataset_edges: tuple[FieldEdge, ...] = ()
    fields: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    ts: int = 0
    origin: str = ""
    aspect: ClassVar[str] = DATA_JOB_INPUT_OUTPUT


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class RenameChange:
    """Fields renamed at ``ts``, as a source states it (renames are never guessed): ``renames`` is (old, new) per
    field, field references (URNs whose path may be v2, v1 dotted or an RFC slash path), ``new`` a field of
    ``dataset``. A dataset rename sets ``from_dataset``: every field ``from_dataset`` has is renamed to the field of
    the same path in ``dataset`` (``renames`` empty). The graph keeps both fields and a ``RenamedFrom`` edge from
    the new to the old, at ``ts``; which fields a dataset lists stays what its schemas say. ``source``: what stated
    it (``sql``, ``cli``, ``api``); ``by``: who; ``note``: why. Schemas state renames too (Avro aliases, Protobuf
    field numbers, Parquet field ids: :attr:`SchemaField.aliases`, :attr:`SchemaField.field_id`), which the graph
    reads from :class:`SchemaChange` itself."""

    dataset: str
    renames: tuple[tuple[str, str], ...] = ()
    from_dataset: str | None = None
    ts: int = 0
    source: str = "cli"
    by: str | None = None
    note: str | None = None
    origin: str = ""
    aspect: ClassVar[str] = "rename"


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class ManualEdgeChange:
    """One lineage edge drawn by hand at ``ts`` (``remove``: removed), into a field of ``dataset``: ``edge`` (field
    references, as in any lineage; its properties' ``source_format`` is ``manual``). ``by``: who drew or removed
    it; ``note``: why. A drawn edge holds from ``ts`` until it is removed: no lineage aspect, delete or job run
    ends it. Drawing an edge that holds changes nothing; drawing it after its removal holds it again, from then;
    removing it keeps the interval it held (for as-of questions). Build one with :meth:`of`."""

    dataset: str
    edge: FieldEdge
    remove: bool = False
    by: str | None = None
    note: str | None = None
    ts: int = 0
    origin: str = ""
    aspect: ClassVar[str] = MANUAL

    @classmethod
    def of(cls, downstream: str, upstream: str, *, transformation: str | None = None, note: str | None = None,
           by: str | None = None, ts: int = 0, remove: bool = False, origin: str = "") -> ManualEdgeChange:
        """The change drawing (or removing) the edge ``downstream`` <- ``upstream`` (field URNs; the path v2, v1
        dotted or an RFC slash path). ``transformation`` names the operation as DataHub's ``transformOperation``
        does (``SUM`` is an aggregation, ``HASH`` masks, which stops tags); none: an edge the value flows along
        (DIRECT). :class:`~fieldgraph.errors.UrnError` if either is not a field URN."""
        down = FieldUrn.parse(downstream)
        FieldUrn.parse(upstream)
        subtype, masking = operation_subtype(transformation) if transformation else (None, False)
        props = EdgeProps(MANUAL, transformation=transformation or None, subtype=subtype, masking=masking)
        return cls(str(down.dataset), FieldEdge(downstream, upstream, props), remove, by or None, note or None, ts,
                   origin)


#: the stamp of a delete that has none of its own (DataHub's ``MetadataChangeProposalWrapper`` sends DELETEs
#: without ``systemMetadata``): it is applied in arrival order, as newer than what the store holds when it
#: arrives and than the changes of its aspect that came before it (the planner gives it that stamp)
UNSTAMPED = -1


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class AspectDelete:
    """One aspect of a dataset removed: a schema's fields become removed, lineage edges go.
    ``ts`` may be :data:`UNSTAMPED`."""

    dataset: str
    aspect: AspectName
    ts: int = 0
    origin: str = ""


@pickled_by_fields
@dataclass(frozen=True, slots=True)
class DatasetDelete:
    """The whole dataset removed: every aspect of it. ``ts`` may be :data:`UNSTAMPED`."""

    dataset: str
    ts: int = 0
    origin: str = ""

    def aspects(self) -> tuple[AspectDelete, ...]:
        return tuple(AspectDelete(self.dataset, a, self.ts, self.origin) for a in ASPECTS)


#: a change of one aspect (every change but a whole-dataset delete)
AspectChange: TypeAlias = (SchemaChange | LineageChange | JobLineageChange | SqlChange | QueryChange
                           | EditableSchemaChange | DataJobChange | RenameChange | ManualEdgeChange | AspectDelete)
Change: TypeAlias = AspectChange | DatasetDelete


# --- what each kind of change says ----------------------------------------------------------------------
#
# Code that does something different per kind of change matches on :data:`Change` and ends with
# ``case _: assert_never(c)``: a new kind is then named by mypy at every place it must reach.


def subject(change: Change) -> str:
    """The URN a change is about: its dataset's, or the query's (:class:`QueryChange`) or the job's
    (:class:`DataJobChange`)."""
    match change:
        case QueryChange(query=urn) | DataJobChange(job=urn):
            return urn
        case ManualEdgeChange(dataset=urn):
            return urn
        case (SchemaChange(dataset=urn) | LineageChange(dataset=urn) | JobLineageChange(dataset=urn)
              | SqlChange(dataset=urn) | EditableSchemaChange(dataset=urn) | RenameChange(dataset=urn)
              | AspectDelete(dataset=urn)
              | DatasetDelete(dataset=urn)):
            return urn
        case _:
            assert_never(change)


def where(change: Change) -> str:
    """What a message about a change names: its subject (:func:`subject`) and the place it came from, if known."""
    return f"{subject(change)}{f' ({change.origin})' if change.origin else ''}"


def references(change: Change) -> list[str]:
    """The upstream references of a change (field URNs, dataset URNs of dataset edges)."""
    match change:
        case LineageChange(edges=edges, dataset_edges=dataset_edges, queries=queries):
            return [e.upstream for e in edges] + [e.upstream for e in dataset_edges] + \
                [u for _, ups in queries for u in ups]
        case DataJobChange(edges=edges, dataset_edges=dataset_edges, fields=fields, outputs=outputs):
            # the job's URN is not a dataset: its downstream fields and outputs are what it touches
            return [e.upstream for e in edges] + [e.upstream for e in dataset_edges] + \
                [e.downstream for e in (*edges, *dataset_edges)] + list(fields) + list(outputs)
        case JobLineageChange(edges=edges, reads=reads, dropped=dropped):
            return [e.upstream for e in edges] + list(reads) + [ref for ref, _ in dropped]
        case SqlChange(tables=tables, sent=sent):
            return [urn for _, urn in tables] + (references(sent) if sent is not None else [])
        case ManualEdgeChange(edge=edge):
            return [edge.upstream]
        case RenameChange(renames=renames, from_dataset=from_dataset):
            return [old for old, _ in renames] + [new for _, new in renames] + \
                ([from_dataset] if from_dataset else [])
        case SchemaChange() | QueryChange() | EditableSchemaChange() | AspectDelete() | DatasetDelete():
            return []
        case _:
            assert_never(change)


__all__ = [
    "ASPECTS", "AspectChange", "AspectDelete", "AspectName", "BLACK_BOX", "Change", "DATASET_UPSTREAM_LINEAGE",
    "DATA_JOB_INPUT_OUTPUT", "DIRECT", "DataJobChange", "DatasetDelete", "EDITABLE_SCHEMA_METADATA", "EdgeKind",
    "EdgeProps", "EditableSchemaChange", "FieldEdge", "IDENTITY_TRANSFORMATION", "INDIRECT", "JOB_LINEAGE",
    "JobLineageChange",
    "LINEAGE_ASPECTS", "LineageAspect", "LineageChange", "QUERY_PROPERTIES", "QueryChange", "RenameChange",
    "MANUAL", "ManualEdgeChange", "OLD_TRANSFORMATIONS", "RENAME_TRANSFORMATION",
    "RunOperations", "SCHEMA_METADATA", "SUBTYPES", "SchemaChange", "SqlChange", "Subtype", "TRANSFORMATIONS",
    "TRANSFORMATION_OF", "Transformation", "UNSTAMPED", "UPSTREAM_LINEAGE",
    "carries_metadata", "operation_subtype", "read_transformation", "references", "subject", "transformation_of",
    "where",
]
