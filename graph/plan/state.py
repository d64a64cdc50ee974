"""What planning reads before it starts: the stored state of the datasets a batch touches, the queries and data
jobs it names, and (for the aspects it changes out of time order) their stored timelines."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fieldgraph.changes import (
    DATASET_UPSTREAM_LINEAGE,
    JOB_LINEAGE,
    SCHEMA_METADATA,
    UPSTREAM_LINEAGE,
    AspectName,
)
from fieldgraph.normalizers import v1_path

from ..history import Held, Span

#: the jobs of DataHub queries' derived lineage (their URNs)
QUERY_URN_PREFIX = "urn:li:query:"
#: dataset property holding the stamp of each lineage aspect
LINEAGE_TS_PROP = {UPSTREAM_LINEAGE: "upstreamLineageTs", DATASET_UPSTREAM_LINEAGE: "datasetUpstreamLineageTs"}
#: dataset property holding the times of an aspect's versions (job lineage: of its deletes)
TIMES_PROP: dict[AspectName, str] = {
    SCHEMA_METADATA: "schemaTimes", UPSTREAM_LINEAGE: "upstreamLineageTimes",
    DATASET_UPSTREAM_LINEAGE: "datasetUpstreamLineageTimes", JOB_LINEAGE: "jobLineageDeletes"}


@dataclass(slots=True)
class FieldState:
    urn: str
    fieldPath: str
    placeholder: bool = False
    removed: bool = False
    schemaVersion: int = -1
    schemaTs: int = -1
    refPath: str | None = None
    #: the field's place in its schema (None: written before positions were kept)
    position: int | None = None
    #: what its newest schema states of its identity (:attr:`SchemaField.fieldId`, :attr:`SchemaField.aliases`)
    fieldId: str | None = None
    aliases: tuple[str, ...] = ()
    #: a placeholder a SQL statement declared: its column number in the statement (from 1)
    column: int | None = None


@dataclass(slots=True)
class DatasetState:
    urn: str
    placeholder: bool = True
    schemaVersion: int = -1
    schemaTs: int = -1
    lineageTs: dict[str, int] = field(default_factory=dict)
    fields: dict[str, FieldState] = field(default_factory=dict)
    #: the times of each aspect's versions (job lineage: of its deletes)
    times: dict[str, list[int]] = field(default_factory=dict)

    @classmethod
    def from_compact(cls, row: Sequence[Any]) -> DatasetState:
        """From ``[urn, placeholder, schemaVersion, schemaTs, upstreamLineageTs, datasetUpstreamLineageTs,
        [[urn, fieldPath, placeholder, removed, schemaVersion, schemaTs, refPath, position, fieldId, aliases, column],
        ...], schemaTimes, upstreamLineageTimes, datasetUpstreamLineageTimes, jobLineageDeletes]``
        (``read_state.cypher``)."""
        urn, placeholder, version, ts, ul, dul, fields, *times = row
        out = cls(urn, bool(placeholder), _int(version), _int(ts),
                  {a: _int(v) for a, v in ((UPSTREAM_LINEAGE, ul), (DATASET_UPSTREAM_LINEAGE, dul)) if v is not None})
        into = out.fields
        for furn, path, ph, removed, fversion, fts, ref, *rest in fields:
            if furn is not None:
                position, field_id, aliases, column = (*rest, None, None, None, None)[:4]
                into[furn] = FieldState(furn, path, ph is True, removed is True, -1 if fversion is None else fversion,
                                        -1 if fts is None else fts, ref, position, field_id, tuple(aliases or ()),
                                        column if ph is True else None)
        for aspect, ts_list in zip(TIMES_PROP, times, strict=False):
            if ts_list:
                out.times[aspect] = sorted(int(t) for t in ts_list)
        return out

    def version_times(self, aspect: AspectName) -> list[int]:
        """The times of the aspect's stored versions (graphs written before times were kept: the newest)."""
        times = self.times.get(aspect)
        if times:
            return times
        last = self.schemaTs if aspect == SCHEMA_METADATA else self.lineageTs.get(aspect, -1)
        return [last] if last >= 0 and (aspect != SCHEMA_METADATA or not self.placeholder) else []

    def last_time(self, aspect: AspectName) -> int:
        times = self.version_times(aspect)
        return times[-1] if times else -1


@dataclass(frozen=True, slots=True)
class StoredQuery:
    """A DataHub query the graph holds: its statement (and when it was set) and the datasets whose
    ``upstreamLineage`` names it, with the upstreams it made."""

    urn: str
    statement: str | None
    language: str | None
    ts: int = -1
    #: (dataset, the upstreams the query made, the stamp of the dataset's upstreamLineage)
    datasets: tuple[tuple[str, tuple[str, ...], int], ...] = ()

    @classmethod
    def from_row(cls, r: Mapping[str, Any]) -> StoredQuery:
        """From a row of ``read_queries.cypher``."""
        datasets = tuple((d, tuple(ups or ()), _int(ts)) for d, ups, ts in (x for x in r["datasets"] or [] if x))
        return cls(r["urn"], r["statement"], r["language"], _int(r["ts"]), datasets)


@dataclass(frozen=True, slots=True)
class LinkedQuery:
    urn: str
    statement: str | None
    ts: int
    upstreams: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DatasetQueries:
    """The queries a dataset's present ``upstreamLineage`` names (as stored), and that version's stamp."""

    dataset: str
    lineage_ts: int
    queries: tuple[LinkedQuery, ...] = ()

    @classmethod
    def from_row(cls, r: Mapping[str, Any]) -> DatasetQueries:
        """From a row of ``read_dataset_queries.cypher``."""
        return cls(r["dataset"], _int(r["ts"]), tuple(LinkedQuery(q, text, _int(ts), tuple(ups or ()))
                                                       for q, text, ts, ups in (x for x in r["queries"] or [] if x)))


@dataclass(frozen=True, slots=True)
class StoredJob:
    """A DataHub data job the graph holds (``dataJobInputOutput``): the stamp of its version and the datasets
    its edges go into."""

    urn: str
    ts: int = -1
    outputs: tuple[str, ...] = ()

    @classmethod
    def from_row(cls, r: Mapping[str, Any]) -> StoredJob:
        """From a row of ``read_data_jobs.cypher``."""
        return cls(r["urn"], _int(r["ts"]), tuple(r["outputs"] or ()))


def _int(v: Any) -> int:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else -1


@dataclass
class History:
    """What the slow path reads before planning (see :func:`history_needed`): the stored timelines of the
    aspects a batch changes out of time order."""

    #: dataset -> real field URN -> its states, the present one last
    fields: dict[str, dict[str, list[Held]]] = field(default_factory=dict)
    #: (dataset, lineage aspect) -> the spans of its edges
    lineage: dict[tuple[str, str], list[Span]] = field(default_factory=dict)
    #: dataset -> the spans of its job lineage edges
    jobs: dict[str, list[Span]] = field(default_factory=dict)


@dataclass(frozen=True)
class HistoryRequest:
    """The timelines a batch needs read: schemas of ``schemas``, lineage of ``lineage`` (dataset, aspect),
    job lineage of ``jobs``."""

    schemas: frozenset[str] = frozenset()
    lineage: frozenset[tuple[str, str]] = frozenset()
    jobs: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.schemas or self.lineage or self.jobs)


def schema_columns(fields: Iterable[FieldState]) -> tuple[list[str], bool]:
    """A dataset's current columns (dotted paths, nested ones too) in its schema's order, and whether that order is
    known (every field has its place: fields written before positions were kept have none, and go last)."""
    live = sorted((f for f in fields if not f.placeholder and not f.removed),
                  key=lambda f: (f.position is None, f.position or 0, f.fieldPath))
    return list(dict.fromkeys(v1_path(f.fieldPath) for f in live)), all(f.position is not None for f in live)


def columns_named(fields: Iterable[FieldState]) -> list[str]:
    """A dataset's columns as SQL numbers them: its top-level fields in its schema's order (none when the order is
    not known)."""
    paths, ordered = schema_columns(fields)
    return [p for p in paths if "." not in p] if ordered else []
