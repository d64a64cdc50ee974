"""DataHub's aspects (:mod:`.models`) as typed changes (:mod:`fieldgraph.changes`): ``schemaMetadata`` ->
:class:`SchemaChange`; ``upstreamLineage`` (``fineGrainedLineages``) and the RFC's ``datasetUpstreamLineage``
(``fieldMappings``) -> :class:`LineageChange`; ``editableSchemaMetadata`` -> :class:`EditableSchemaChange`; a data
job's ``dataJobInputOutput`` -> :class:`DataJobChange`; a query's ``queryProperties`` -> :class:`QueryChange`.
References that do not parse, or point outside the aspect's dataset, raise :class:`EventError` naming the place."""

from __future__ import annotations

from typing import Any

from fieldgraph.changes import (
    DATASET_UPSTREAM_LINEAGE,
    UPSTREAM_LINEAGE,
    Change,
    DataJobChange,
    EdgeProps,
    EditableSchemaChange,
    FieldEdge,
    LineageChange,
    QueryChange,
    SchemaChange,
    operation_subtype,
)
from fieldgraph.errors import EventError, UrnError
from fieldgraph.normalizers.urns import DatasetUrn, parse_field_ref

from .models import (
    DATA_JOB_URN_PREFIX,
    Aspect,
    DataJobInputOutput,
    DatasetUpstreamLineage,
    EditableSchemaMetadata,
    FineGrainedLineage,
    QueryProperties,
    SchemaMetadata,
    UpstreamLineage,
)
from .schemas import schema_fields

#: ``sourceFormat`` of each lineage aspect's edges
SOURCE_FORMATS = {UPSTREAM_LINEAGE: "datahub", DATASET_UPSTREAM_LINEAGE: "datahub-rfc"}


def first_stamp(*candidates: Any) -> int:
    """The first candidate that is a positive time in epoch milliseconds, else 0."""
    for c in candidates:
        if isinstance(c, (int, float)) and not isinstance(c, bool) and c > 0:
            return int(c)
    return 0


def aspect_times(aspect: Aspect) -> list[Any]:
    """The aspect's own stamps, newest first (``lastModified``, ``created``), where it has them."""
    if isinstance(aspect, (SchemaMetadata, EditableSchemaMetadata)):
        return [s.time if s else None for s in (aspect.lastModified, aspect.created)]
    return []


def canonical_dataset(urn: Any, where: str) -> str:
    """A dataset URN in its canonical form, or :class:`EventError` at ``where``."""
    try:
        return str(DatasetUrn.parse(urn))
    except UrnError as exc:
        raise EventError(str(exc), where=where) from exc


def job_urn(urn: str | None, where: str = "entityUrn") -> str:
    """A data job's URN, or :class:`EventError` at ``where``."""
    if not urn or not urn.startswith(DATA_JOB_URN_PREFIX + "("):
        raise EventError(f"a data job's URN starts with {DATA_JOB_URN_PREFIX}(, got {urn!r}", where=where)
    return urn


def to_change(urn: str, aspect: Aspect, ts: int, origin: str, where: str = "aspect") -> Change:
    """The typed change an aspect of dataset ``urn`` stands for."""
    match aspect:
        case SchemaMetadata():
            return SchemaChange(urn, tuple(schema_fields(aspect, where)), aspect.version, ts, aspect.schemaName,
                                aspect.hash, aspect.platform, aspect.platform_schema_class,
                                _glossary_terms(aspect), origin)
        case UpstreamLineage():
            return _upstream_lineage(urn, aspect, ts, origin)
        case DatasetUpstreamLineage():
            return _dataset_upstream_lineage(urn, aspect, ts, origin)
        case EditableSchemaMetadata():
            return EditableSchemaChange(urn, tuple((f.fieldPath, f.labels) for f in aspect.editableSchemaFieldInfo
                                                   if f.labels), ts, origin)


def query_change(urn: str, props: QueryProperties, ts: int, origin: str) -> QueryChange:
    """A query entity's statement, its language upper-cased."""
    return QueryChange(urn, props.statement.value, props.statement.language.upper(), ts, origin)


def data_job_change(job: str, aspect: DataJobInputOutput, ts: int, origin: str, where: str) -> DataJobChange:
    """A job's lineage: its fine-grained lineages as a dataset's ``upstreamLineage`` ones, the job on every edge
    (its ``program``); its outputs, the datasets it lists and those of the fields it writes."""
    lineages = aspect.fineGrainedLineages or []
    outputs = [canonical_dataset(u, f"{where}.outputDatasets[{i}]") for i, u in enumerate(aspect.outputDatasets)]
    outputs += (canonical_dataset(e.destinationUrn, f"{where}.outputDatasetEdges[{i}].destinationUrn")
                for i, e in enumerate(aspect.outputDatasetEdges or []))
    outputs += (_field_dataset_at(ref, where, f".outputDatasetFields[{i}]")
                for i, ref in enumerate(aspect.outputDatasetFields or []))
    outputs += _check_fine_grained(lineages, f"{where}.fineGrainedLineages")
    edges, dataset_edges, fields = _fine_grained_edges(lineages, program=job)
    return DataJobChange(job, tuple(edges), tuple(dataset_edges),
                         tuple(dict.fromkeys([*(aspect.outputDatasetFields or []), *fields])),
                         tuple(dict.fromkeys(outputs)), ts, origin)


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
            out.setdefault(up.query, []).append(canonical_dataset(up.dataset, "upstreams.dataset"))
    return tuple((q, tuple(ups)) for q, ups in out.items() if not read & set(ups))


def _field_dataset(ref: str) -> str:
    try:
        return parse_field_ref(ref)[0]
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


def _field_dataset_at(ref: str, where: str, at: str) -> str:
    """The dataset of field URN ``ref``, found at ``where`` + ``at`` (:class:`EventError` naming it if it is not
    one; the place is spelled only then: there is one per field reference)."""
    try:
        return parse_field_ref(ref)[0]
    except UrnError as exc:
        raise EventError(str(exc), where=where + at) from exc


def _check_fine_grained(lineages: list[FineGrainedLineage], where: str, dataset_urn: str | None = None) -> list[str]:
    """Every reference of fine-grained lineages parses, and each downstream field belongs to ``dataset_urn`` when
    given (a dataset's aspect; a job's may write several); returns the downstream fields' datasets."""
    datasets: list[str] = []
    for i, fg in enumerate(lineages):
        for j, ref in enumerate(fg.downstreams):
            ds = _field_dataset_at(ref, where, f"[{i}].downstreams[{j}]")
            if dataset_urn is not None and ds != dataset_urn:
                raise EventError(f"downstream field {ref!r} is not a field of the aspect's dataset {dataset_urn}",
                                 where=f"{where}[{i}].downstreams[{j}]")
            datasets.append(ds)
        for j, ref in enumerate(fg.upstreams):
            if fg.upstreamType == "DATASET":
                canonical_dataset(ref, f"{where}[{i}].upstreams[{j}]")
            else:
                _field_dataset_at(ref, where, f"[{i}].upstreams[{j}]")
    return datasets


def check_lineage_refs(dataset_urn: str, aspect: Aspect, where: str) -> None:
    """Every reference parses, and every downstream field belongs to the aspect's own dataset."""
    if isinstance(aspect, UpstreamLineage):
        _check_fine_grained(aspect.fineGrainedLineages or [], f"{where}.fineGrainedLineages", dataset_urn)
    elif isinstance(aspect, DatasetUpstreamLineage):
        for i, m in enumerate(aspect.fieldMappings):
            w = f"{where}.fieldMappings[{i}]"
            if _field_dataset_at(m.destinationField, w, ".destinationField") != dataset_urn:
                raise EventError(f"destination field {m.destinationField!r} is not a field of the aspect's dataset "
                                 f"{dataset_urn}", where=f"{w}.destinationField")
            for j, ref in enumerate(m.sourceFields):
                _field_dataset_at(ref, w, f".sourceFields[{j}]")
