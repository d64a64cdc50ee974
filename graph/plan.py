"""Changes -> graph writes, as pure code: typed changes and the current state in, parameter rows out.

The one write path (``fieldgraph.graph.write``) runs it for file replay, the Kafka worker, the HTTP
service and the Spark job::

    state = store.read_state(datasets_to_read(changes))   # the only read, before planning
    plan = plan_changes(changes, state)                    # pure
    apply(plan)                                            # one UNWIND per step and batch

Rules (see the graph model in ``cypher/``):

- per dataset and aspect, the newest change is the present (schema: ``(version, ts)``; lineage: ``ts``);
  equal stamps re-apply (so replays are idempotent); a delete without a stamp of its own (``UNSTAMPED``)
  is applied in arrival order: it takes the newest stamp of its aspect the store holds or the batch
  brought before it (so it wins, and a replay re-applies it); every version also holds over its own interval
  of time (:mod:`fieldgraph.graph.history`): an older one is placed in the past and changes the present
  only if it is the newest;
- a schema is the dataset's whole field set: fields it no longer lists are marked ``removed``
  (kept with their lineage) and come back when listed again; a schema with a lower version number than
  one before it in time only adds fields never seen, as removed;
- a lineage aspect is the whole set of the dataset's incoming edges from that aspect
  (edge property ``source``); a new version closes the edges it no longer lists, DELETE closes them all;
- field references (v2, v1 dotted, RFC slash paths) resolve against the dataset's fields;
  an unknown or ambiguous one becomes a placeholder field (``placeholder``, ``ambiguous``,
  ``candidates``) that a later schema resolves;
- job lineage (CDAP program runs, OpenLineage runs) is additive: an edge per (field pair, job)
  keeps its first and last seen times and the newest run's properties, until a DELETE closes it; a
  destination field a job declares but no schema lists is a placeholder marked ``declared`` (kept
  without edges); fields a job drops get ``droppedBy`` entries;
- every ``DataDerivedFrom`` edge, whatever its source, carries one property vocabulary
  (:class:`fieldgraph.changes.EdgeProps`) plus ``firstSeen``/``lastSeen``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, TypeVar, assert_never

from fieldgraph.changes import (
    DATASET_UPSTREAM_LINEAGE,
    JOB_LINEAGE,
    SCHEMA_METADATA,
    UNSTAMPED,
    UPSTREAM_LINEAGE,
    AspectDelete,
    AspectName,
    Change,
    DataJobChange,
    DatasetDelete,
    EditableSchemaChange,
    JobLineageChange,
    LineageAspect,
    LineageChange,
    QueryChange,
    RunOperations,
    SchemaChange,
    SqlChange,
    references,
)
from fieldgraph.errors import InputError
from fieldgraph.normalizers import FieldPath, FieldPathError, FieldUrn, SchemaField, is_v2, v1_path
from fieldgraph.normalizers.urns import DatasetUrn, canonical_dataset_urn, decode, make_field_urn

from .history import (
    STATE_PROPS,
    Fact,
    Held,
    LineageVersion,
    Run,
    SchemaVersion,
    Span,
    replay_jobs,
    replay_lineage,
    replay_schema,
    state_key,
    state_props,
    stored_lineage_versions,
    stored_schema_versions,
)
from .steps import REMOVING, FieldRow, JobEdgeRow, JobRunRow, MoveRow, Plan, QueryEndRow, UpsertFieldRow

#: the jobs of DataHub queries' derived lineage (their URNs)
QUERY_URN_PREFIX = "urn:li:query:"
#: dataset property holding the stamp of each lineage aspect
LINEAGE_TS_PROP = {UPSTREAM_LINEAGE: "upstreamLineageTs", DATASET_UPSTREAM_LINEAGE: "datasetUpstreamLineageTs"}
#: dataset property holding the times of an aspect's versions (job lineage: of its deletes)
TIMES_PROP: dict[AspectName, str] = {
    SCHEMA_METADATA: "schemaTimes", UPSTREAM_LINEAGE: "upstreamLineageTimes",
    DATASET_UPSTREAM_LINEAGE: "datasetUpstreamLineageTimes", JOB_LINEAGE: "jobLineageDeletes"}


# --- state read before planning ------------------------------------------------------------------


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
        [[urn, fieldPath, placeholder, removed, schemaVersion, schemaTs, refPath, position], ...], schemaTimes,
        upstreamLineageTimes, datasetUpstreamLineageTimes, jobLineageDeletes]`` (``read_state.cypher``)."""
        urn, placeholder, version, ts, ul, dul, fields, *times = row
        out = cls(urn, bool(placeholder), _int(version), _int(ts),
                  {a: _int(v) for a, v in ((UPSTREAM_LINEAGE, ul), (DATASET_UPSTREAM_LINEAGE, dul)) if v is not None})
        into = out.fields
        for furn, path, ph, removed, fversion, fts, ref, *position in fields:
            if furn is not None:
                into[furn] = FieldState(furn, path, ph is True, removed is True, -1 if fversion is None else fversion,
                                        -1 if fts is None else fts, ref, position[0] if position else None)
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


def newest_queries(changes: Iterable[Change]) -> dict[str, QueryChange]:
    """The newest statement of each query a batch brings (the later one of equal stamps)."""
    out: dict[str, QueryChange] = {}
    for c in changes:
        if isinstance(c, QueryChange) and (c.query not in out or c.ts >= out[c.query].ts):
            out[c.query] = c
    return out


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


def datasets_to_read(changes: Iterable[Change]) -> list[str]:
    """The datasets whose state :func:`plan_changes` needs: every dataset a change names or references."""
    urns: dict[str, None] = {}
    for c in changes:
        match c:
            case QueryChange():
                continue
            case DataJobChange():  # a job's URN is not a dataset's: its references are
                pass
            case (SchemaChange() | LineageChange() | JobLineageChange() | SqlChange() | EditableSchemaChange()
                  | AspectDelete() | DatasetDelete()):
                urns[c.dataset] = None
            case _:
                assert_never(c)
        for ref in references(c):
            urns[_dataset_of(ref)] = None
    return list(urns)


def _dataset_of(ref: str) -> str:
    return parse_field_ref(ref)[0] if ref.startswith(("urn:li:datasetField:", "urn:li:schemaField:")) \
        else canonical_dataset_urn(ref)


@lru_cache(maxsize=1 << 16)
def parse_field_ref(ref: str) -> tuple[str, str]:
    """(canonical dataset URN, decoded field path) of a field URN; cached, with a fast path for the
    usual ``urn:li:<datasetField|schemaField>:(urn:li:dataset:(...),<path>)`` shape."""
    for prefix in ("urn:li:schemaField:(urn:li:dataset:(", "urn:li:datasetField:(urn:li:dataset:("):
        if ref.startswith(prefix) and ref.endswith(")"):
            start = len(prefix) - len("urn:li:dataset:(")
            end = ref.find(")", len(prefix))  # dataset names have their parentheses percent-encoded
            if end > 0 and ref[end + 1:end + 2] == ",":
                return canonical_dataset_urn(ref[start:end + 1]), decode(ref[end + 2:-1])
    f = FieldUrn.parse(ref)
    return str(f.dataset), f.field_path


def field_urn(dataset_urn: str, path: str) -> str:
    """The stored URN of a dataset's field (``urn:li:datasetField:...``)."""
    return make_field_urn(dataset_urn, path)


def _dataset_props(urn: str) -> dict[str, Any]:
    d = DatasetUrn.parse(urn)
    return {"platform": d.platform, "name": d.name, "env": d.env}


def field_props(dataset_urn: str, f: SchemaField) -> dict[str, Any]:
    t = f.type
    return {
        "datasetUrn": dataset_urn, "fieldPath": f.fieldPath, "simplePath": f.simple_path, "type": t.name,
        "nativeDataType": f.nativeDataType, "nullable": f.nullable, "description": f.description,
        "isPartOfKey": f.isPartOfKey, "recursive": f.recursive, "jsonProps": f.jsonProps,
        "tags": list(f.tags) or None, "nestedType": list(t.nested_type) if t.nested_type else None,
        "keyType": t.key_type, "valueType": t.value_type,
    }


# --- reference resolution ----------------------------------------------------------------------------


def _tokens(path: str) -> list[tuple[str, bool]]:
    """(value, is_type) tokens of a field path (a v1 path has names only)."""
    if is_v2(path):
        try:
            fp = FieldPath.parse(path)
            return [(t.value, t.is_type) for t in fp.tokens]
        except FieldPathError:
            pass
    return [(n, False) for n in path.split(".") if n]


def _slash_matches(comps: Sequence[str], tokens: Sequence[tuple[str, bool]]) -> bool:
    """``comps`` names every field name of ``tokens`` in order; other components must name one of
    its type tokens (the RFC's ``/foo2/bar2/int`` for a union member), case-insensitively."""
    names = [v for v, is_type in tokens if not is_type]
    types = {v.lower() for v, is_type in tokens if is_type}
    i = 0
    for comp in comps:
        if i < len(names) and comp == names[i]:
            i += 1
        elif comp.lower() not in types:
            return False
    return i == len(names)


class Resolver:
    """Resolves field references against one dataset's fields (indexed once)."""

    def __init__(self, fields: Iterable[FieldState]) -> None:
        self.real = [f for f in fields if not f.placeholder]
        self.by_path = {f.fieldPath: f for f in self.real}
        self._by_simple: dict[str, list[FieldState]] | None = None

    @property
    def by_simple(self) -> dict[str, list[FieldState]]:
        if self._by_simple is None:
            self._by_simple = {}
            for f in self.real:
                self._by_simple.setdefault(v1_path(f.fieldPath), []).append(f)
        return self._by_simple

    def resolve(self, path: str) -> tuple[str, list[str]]:
        if path in self.by_path:
            return "exact", [path]
        if is_v2(path):
            return "unknown", []
        if path.startswith("/"):
            comps = [c for c in path.split("/") if c]
            cands = [f for f in self.real if comps and _slash_matches(comps, _tokens(f.fieldPath))]
        else:
            cands = self.by_simple.get(path, [])
        current = [f for f in cands if not f.removed]
        paths = sorted({f.fieldPath for f in (current or cands)})
        if not paths:
            return "unknown", []
        return ("unique", paths) if len(paths) == 1 else ("ambiguous", paths)


def resolve_reference(path: str, fields: Sequence[FieldState]) -> tuple[str, list[str]]:
    """Resolve a field reference (v2, v1 dotted or RFC slash path) against a dataset's fields.

    Returns ``(kind, field paths)``: ``exact`` (a path the dataset has), ``unique``,
    ``ambiguous`` (more than one candidate; never silently picked) or ``unknown``.
    Current fields are preferred over removed ones.
    """
    return Resolver(fields).resolve(path)


# --- planning ---------------------------------------------------------------------------------------------

@dataclass
class _Groups:
    """A batch's changes per dataset and aspect, in arrival order (a dataset delete: a delete of each aspect)."""

    schemas: dict[str, list[SchemaChange | AspectDelete]] = field(default_factory=dict)
    lineage: dict[tuple[str, LineageAspect], list[LineageChange | AspectDelete]] = field(default_factory=dict)
    jobs: dict[str, list[JobLineageChange | AspectDelete]] = field(default_factory=dict)
    queries: list[QueryChange] = field(default_factory=list)
    editable: dict[str, list[EditableSchemaChange | AspectDelete]] = field(default_factory=dict)
    data_jobs: list[DataJobChange] = field(default_factory=list)

    @classmethod
    def of(cls, changes: Sequence[Change], state: Mapping[str, DatasetState]) -> _Groups:
        """Grouped, with unstamped schema and lineage deletes stamped (job lineage ones are stamped by the
        planner, which reads the job edges' times)."""
        g = cls()
        for c in changes:
            match c:
                case SchemaChange():
                    g.schemas.setdefault(c.dataset, []).append(c)
                case JobLineageChange():
                    g.jobs.setdefault(c.dataset, []).append(c)
                case LineageChange():
                    g.lineage.setdefault((c.dataset, c.aspect), []).append(c)
                case QueryChange():
                    g.queries.append(c)
                case EditableSchemaChange():
                    g.editable.setdefault(c.dataset, []).append(c)
                case DataJobChange():
                    g.data_jobs.append(c)
                case AspectDelete():
                    g.add_delete(c)
                case DatasetDelete():
                    for d in c.aspects():
                        g.add_delete(d)
                case SqlChange():  # planned as the job lineage it amounts to (fieldgraph.graph.sql.derive_sql)
                    pass
                case _:
                    assert_never(c)
        empty = DatasetState("")
        for urn, schemas in g.schemas.items():
            st = state.get(urn, empty)
            g.schemas[urn] = in_arrival_order(schemas, max(st.last_time(SCHEMA_METADATA), st.schemaTs))
        for (urn, aspect), lineage in g.lineage.items():
            g.lineage[(urn, aspect)] = in_arrival_order(lineage, state.get(urn, empty).last_time(aspect))
        return g


    def add_delete(self, d: AspectDelete) -> None:
        match d.aspect:
            case "schemaMetadata":
                self.schemas.setdefault(d.dataset, []).append(d)
            case "jobLineage":
                self.jobs.setdefault(d.dataset, []).append(d)
            case "upstreamLineage" | "datasetUpstreamLineage":
                self.lineage.setdefault((d.dataset, d.aspect), []).append(d)
            case "editableSchemaMetadata":
                self.editable.setdefault(d.dataset, []).append(d)
            case _:
                assert_never(d.aspect)


C = TypeVar("C", bound=SchemaChange | LineageChange | JobLineageChange | AspectDelete)


def in_arrival_order(group: list[C], newest: int) -> list[C]:
    """``group`` (one aspect of one dataset, in arrival order) with each :data:`UNSTAMPED` delete stamped
    ``newest`` so far: the newest stamp stored (``newest``) or among the changes before it."""
    if all(c.ts != UNSTAMPED for c in group):
        return group
    out: list[C] = []
    for c in group:
        if isinstance(c, AspectDelete) and c.ts == UNSTAMPED:
            c = replace(c, ts=max(newest, 0))
        newest = max(newest, c.ts)
        out.append(c)
    return out


def _schema_key(c: SchemaChange | AspectDelete, st: DatasetState) -> tuple[int, int]:
    # a delete counts as the newest version seen, so among deletes and schemas the stamp decides
    return (c.version, c.ts) if isinstance(c, SchemaChange) else (max(st.schemaVersion, 0), c.ts)


def _schema_appends(group: Sequence[SchemaChange | AspectDelete], st: DatasetState) -> bool:
    """One schema version, newer than every stored one: the fast path (no timeline to read)."""
    return len(group) == 1 and group[0].ts >= st.last_time(SCHEMA_METADATA) \
        and _schema_key(group[0], st) >= (st.schemaVersion, st.schemaTs)


def _lineage_appends(group: Sequence[LineageChange | AspectDelete], st: DatasetState, aspect: LineageAspect) -> bool:
    return len(group) == 1 and group[0].ts >= st.last_time(aspect)


def _jobs_append(group: Sequence[JobLineageChange | AspectDelete], st: DatasetState) -> bool:
    last_delete = st.last_time(JOB_LINEAGE)
    return all(isinstance(c, JobLineageChange) and c.ts >= last_delete for c in group)


def history_needed(changes: Sequence[Change], state: Mapping[str, DatasetState]) -> HistoryRequest:
    """The stored timelines :func:`plan_changes` needs: of the aspects the batch changes other than by appending
    one newer version (a late event, several versions of one aspect)."""
    g = _Groups.of(changes, state)
    return HistoryRequest(
        frozenset(u for u, grp in g.schemas.items() if u in state and not _schema_appends(grp, state[u])),
        frozenset(k for k, grp in g.lineage.items() if k[0] in state and not _lineage_appends(grp, state[k[0]], k[1])),
        frozenset(u for u, grp in g.jobs.items() if u in state and not _jobs_append(grp, state[u])))


def plan_changes(changes: Sequence[Change], state: Mapping[str, DatasetState],
                 history: History | None = None, queries: Mapping[str, StoredQuery] | None = None,
                 data_jobs: Mapping[str, StoredJob] | None = None) -> Plan:
    """The graph writes for ``changes`` given the ``state`` of the datasets they touch, the ``history``
    :func:`history_needed` asks for (``None``: none needed), the stored ``queries`` the batch names and the
    stored ``data_jobs`` it changes. Pure."""
    if history is None:
        if history_needed(changes, state):
            raise InputError("plan_changes: these changes need the stored history of what they change "
                             "(history_needed)")
        history = History()
    groups = _Groups.of(changes, state)
    planner = _Planner(state, history)
    for urn, schemas in groups.schemas.items():
        planner.schema(urn, schemas)
    planner.resolve_stored_placeholders(set(groups.schemas))
    for (urn, aspect), lineage in groups.lineage.items():
        planner.lineage(urn, aspect, lineage)
    for urn, jobs in groups.jobs.items():
        planner.job_lineage(urn, jobs)
    planner.queries(groups.queries, queries or {})
    for urn, edits in groups.editable.items():
        planner.editable(urn, edits)
    planner.data_jobs(groups.data_jobs, data_jobs or {})
    return planner.finish()


class _Planner:
    """One batch's plan, built step by step against the state read before it (never mutated)."""

    def __init__(self, state: Mapping[str, DatasetState], history: History | None = None) -> None:
        self.state = state
        self.history = history or History()
        self.plan = Plan()
        self.dataset_rows: dict[str, dict[str, Any]] = {}
        #: fields after this batch, per dataset (the resolution target of lineage references)
        self.known: dict[str, dict[str, FieldState]] = {u: dict(s.fields) for u, s in state.items()}
        self.ensured: set[str] = set()
        #: references resolved in this batch (schemas are applied before any reference is resolved)
        self.resolved: dict[str, str] = {}
        #: the placeholder fields planned in this batch, by URN
        self.placeholder_rows: dict[str, FieldRow] = {}
        self.resolvers: dict[str, Resolver] = {}
        #: job lineage edges per (down, up, job), merged over the batch
        self.job_edges: dict[tuple[str, str, str], JobEdgeRow] = {}
        #: job runs (row, operations) per (job, run)
        self.job_runs: dict[tuple[str, str], tuple[JobRunRow, RunOperations]] = {}
        self.dropped: dict[tuple[str, str], None] = {}

    def stored(self, urn: str) -> DatasetState:
        return self.state.get(urn) or DatasetState(urn)

    def dataset_row(self, urn: str) -> dict[str, Any]:
        if urn not in self.dataset_rows:
            props = _dataset_props(urn)
            if urn not in self.state:
                props["placeholder"] = True
            self.dataset_rows[urn] = props
        return self.dataset_rows[urn]

    # ---- schemas ----

    def schema(self, urn: str, group: list[SchemaChange | AspectDelete]) -> None:
        if _schema_appends(group, self.stored(urn)):
            self._schema_appended(urn, group[0])
        else:
            self._schema_replayed(urn, group)

    def _schema_appended(self, urn: str, c: SchemaChange | AspectDelete) -> None:
        """The fast path: the newest version; fields whose state changes have the old one archived."""
        key = _schema_key(c, self.stored(urn))
        fields_now = self.known.setdefault(urn, {})
        current = self._schema_wins(urn, c, key)
        if isinstance(c, SchemaChange):
            self._write_fields(urn, [c], lambda _: key, current, archive=True)
        self._mark_removed(urn, fields_now, current, c.ts)
        self._add_times(urn, SCHEMA_METADATA, [c.ts])

    def _schema_replayed(self, urn: str, group: list[SchemaChange | AspectDelete]) -> None:
        """The slow path: the aspect's timeline replayed with the batch's versions placed by time."""
        st = self.stored(urn)
        self.plan.tally["replayed"] += 1
        versions = stored_schema_versions(st.version_times(SCHEMA_METADATA), self.history.fields.get(urn, {}))
        schemas = [c for c in group if isinstance(c, SchemaChange)]
        for i, c in enumerate(group):
            listed = {} if isinstance(c, AspectDelete) else \
                {field_urn(urn, f.fieldPath): state_props(self._field_props(urn, c, f)) for f in c.fields}
            adds_only = isinstance(c, SchemaChange) and _outranked(c, st, schemas)
            versions.append(SchemaVersion(c.ts, listed, order=i, adds_only=adds_only))
        timelines = replay_schema(versions)
        newest = max((v for v in versions if not v.adds_only), key=lambda v: (v.ts, v.order), default=None)
        fields_now = self.known.setdefault(urn, {})
        current = {u for u, tl in timelines.items() if not tl[-1].removed}
        win = group[newest.order] if newest is not None and newest.order >= 0 else None
        if win is not None:
            self._schema_wins(urn, win, _schema_key(win, st))
        self.plan.tally["superseded"] += len(group) - (win is not None)
        self._write_fields(urn, sorted(schemas, key=lambda c: _schema_key(c, st)), lambda c: _schema_key(c, st),
                           current, archive=False)
        self.plan.clear_field_states.append({"datasetUrn": urn})
        for furn, timeline in timelines.items():
            now = timeline[-1]
            self.plan.set_listed_from.append({"urn": furn, "listedFrom": timeline[0].start})
            self.plan.set_field_props.append({"urn": furn, "props": {
                **dict.fromkeys(STATE_PROPS), **now.props, "removed": now.removed, "since": now.start,
                "stateKey": state_key(now.props)}})
            self.plan.create_field_states.extend(
                {"urn": furn, "props": _state_node(h)} for h in timeline[:-1] if h.end is not None and h.start < h.end)
            fs = fields_now.get(furn)
            if fs is not None and fs.removed != now.removed:
                fields_now[furn] = replace(fs, removed=now.removed)
        self._add_times(urn, SCHEMA_METADATA, [v.ts for v in versions if not v.adds_only])

    def _schema_wins(self, urn: str, win: SchemaChange | AspectDelete, win_key: tuple[int, int]) -> set[str]:
        """The dataset row of the winning schema; returns the current field set after the batch."""
        deleted = isinstance(win, AspectDelete)
        self.plan.tally["schema_deletes" if deleted else "schemas"] += 1
        row = self.dataset_row(urn)
        row.pop("placeholder", None)
        row.update(placeholder=False, schemaVersion=win_key[0], schemaTs=win_key[1], schemaDeleted=deleted)
        if isinstance(win, AspectDelete):  # the dataset has no schema now (its fields stay, removed)
            row.update(schemaVersion=None, schemaName=None, schemaHash=None, schemaPlatform=None,
                       platformSchemaType=None)
            return set()
        row.update(schemaName=win.name, schemaHash=win.hash, schemaPlatform=win.platform,
                   platformSchemaType=win.platform_schema)
        return {field_urn(urn, f.fieldPath) for f in win.fields}

    def _field_props(self, urn: str, c: SchemaChange, f: SchemaField) -> dict[str, Any]:
        props = field_props(urn, f)
        terms = c.glossary_terms.get(f.fieldPath)
        props["glossaryTerms"] = list(terms) if terms else None
        return props

    def _write_fields(self, urn: str, schemas: list[SchemaChange], key: Any, current: set[str], *,
                      archive: bool) -> None:
        """Every schema writes the fields it lists that no newer schema wrote (oldest first); appending, a field
        whose state changes has its old state archived first."""
        fields_now = self.known[urn]
        written: dict[str, UpsertFieldRow] = {}
        for c in schemas:
            version, ts = key(c)
            for position, f in enumerate(c.fields):
                furn = field_urn(urn, f.fieldPath)
                prev = fields_now.get(furn)
                if prev is not None and not prev.placeholder and (prev.schemaVersion, prev.schemaTs) > (version, ts):
                    continue
                props = self._field_props(urn, c, f)
                props.update(placeholder=False, ambiguous=False, candidates=None, refPath=None,
                             removed=furn not in current, schemaVersion=version, schemaTs=ts,
                             stateKey=state_key(props), position=position)
                written[furn] = {"datasetUrn": urn, "urn": furn, "at": c.ts, "props": props}
                fields_now[furn] = FieldState(furn, f.fieldPath, False, furn not in current, version, ts,
                                              position=position)
        self.plan.upsert_fields.extend(written.values())
        if archive:
            self.plan.archive_field_states.extend(
                {"urn": r["urn"], "at": r["at"], "stateKey": r["props"]["stateKey"], "removed": r["props"]["removed"]}
                for r in written.values())
        if written:
            self.dataset_row(urn)

    def _mark_removed(self, urn: str, fields_now: dict[str, FieldState], current: set[str], at: int) -> None:
        for furn, fs in list(fields_now.items()):
            if not fs.placeholder and furn not in current and not fs.removed:
                fields_now[furn] = replace(fs, removed=True)  # never mutate the caller's state
                self.plan.archive_field_states.append({"urn": furn, "at": at, "stateKey": None, "removed": True})
                self.plan.set_field_props.append({"urn": furn, "props": {"removed": True}})
                self.plan.tally["fields_removed"] += 1

    def _add_times(self, urn: str, aspect: AspectName, times: Iterable[int]) -> None:
        merged = sorted({*self.stored(urn).version_times(aspect), *times})
        self.dataset_row(urn)[TIMES_PROP[aspect]] = merged

    def resolve_stored_placeholders(self, urns: set[str]) -> None:
        """Placeholders already in the graph, of datasets whose schema changed: resolve them now."""
        for urn in urns:
            fields_now = self.known.get(urn, {})
            resolver = Resolver(fields_now.values())
            stored = self.stored(urn).fields
            for furn, fs in list(fields_now.items()):
                if fs.placeholder and furn in stored:
                    self._resolve_placeholder(urn, furn, fs, resolver)

    def _resolve_placeholder(self, urn: str, furn: str, fs: FieldState, resolver: Resolver) -> None:
        ref = fs.refPath or fs.fieldPath
        kind, paths = resolver.resolve(ref)
        if kind in ("unique", "exact") and field_urn(urn, paths[0]) != furn:
            self.plan_move(furn, field_urn(urn, paths[0]))
            del self.known[urn][furn]
        elif kind == "ambiguous":
            self.plan.set_field_props.append({"urn": furn, "props": {"ambiguous": True, "candidates": paths}})
            self.plan.ambiguous.append((urn, ref, paths))
        elif kind == "unknown":
            self.plan.set_field_props.append({"urn": furn, "props": {"ambiguous": False, "candidates": None}})

    def plan_move(self, placeholder: str, target: str) -> None:
        """Move a placeholder's edges, present and past, to the field it resolved to, and delete it."""
        move: MoveRow = {"from": placeholder, "to": target}
        for rows in (self.plan.move_out_edges, self.plan.move_in_edges, self.plan.move_past_out_edges,
                     self.plan.move_past_in_edges):
            rows.append(move)
        self.plan.delete_fields.append({"urn": placeholder})

    # ---- references ----

    def ensure_dataset(self, ds: str) -> None:
        if ds not in self.state and ds not in self.dataset_rows and ds not in self.ensured:
            self.plan.ensure_datasets.append({"urn": ds, "props": {**_dataset_props(ds), "placeholder": True}})
            self.ensured.add(ds)

    def resolve(self, ref: str, declared: bool = False) -> str:
        """The URN of the field ``ref`` names, after this batch's schemas; a placeholder when none or several."""
        hit = self.resolved.get(ref)
        if hit is not None:
            if declared and hit in self.placeholder_rows:
                self.placeholder_rows[hit]["props"]["declared"] = True
            return hit
        self.resolved[ref] = urn = self._resolve(ref, declared)
        return urn

    def _resolve(self, ref: str, declared: bool) -> str:
        ds, path = parse_field_ref(ref)
        fields_now = self.known.setdefault(ds, {})
        exact = fields_now.get(field_urn(ds, path))
        if exact is not None and not exact.placeholder:  # the common case, without building a Resolver
            return exact.urn
        if ds not in self.resolvers:  # schemas are all applied by now; placeholders do not count
            self.resolvers[ds] = Resolver(fields_now.values())
        kind, paths = self.resolvers[ds].resolve(path)
        if kind in ("exact", "unique"):
            return field_urn(ds, paths[0])
        return self._placeholder(ds, path, kind, paths, declared)

    def _placeholder(self, ds: str, path: str, kind: str, paths: list[str], declared: bool) -> str:
        purn = field_urn(ds, path)
        row = self.placeholder_rows.get(purn)
        if row is not None:  # planned already in this batch
            if declared:
                row["props"]["declared"] = True
            return purn
        fields_now = self.known[ds]
        self.ensure_dataset(ds)
        if purn not in fields_now or fields_now[purn].placeholder:
            props = {"datasetUrn": ds, "fieldPath": path, "simplePath": simple_ref(path),
                     "placeholder": True, "removed": False, "refPath": path,
                     "ambiguous": kind == "ambiguous", "candidates": paths or None}
            if declared:
                props["declared"] = True
            self.placeholder_rows[purn] = {"datasetUrn": ds, "urn": purn, "props": props}
            self.plan.ensure_fields.append(self.placeholder_rows[purn])
            if purn not in fields_now:
                self.plan.tally["placeholders"] += 1
            if kind == "ambiguous":
                self.plan.ambiguous.append((ds, path, paths))
            fields_now[purn] = FieldState(purn, path, True, refPath=path)
        return purn

    def dataset_target(self, ref: str) -> str:
        ds = canonical_dataset_urn(ref)
        self.ensure_dataset(ds)
        return ds

    # ---- lineage aspects ----

    def lineage(self, urn: str, aspect: LineageAspect, group: list[LineageChange | AspectDelete]) -> None:
        st = self.stored(urn)
        self.dataset_row(urn)
        if _lineage_appends(group, st, aspect):
            c = group[0]
            self._lineage_queries(urn, c)
            facts = self._facts(c) if isinstance(c, LineageChange) else []
            self.plan.tally["lineage_deletes" if isinstance(c, AspectDelete) else "lineages"] += 1
            self.plan.close_lineage.append(
                {"datasetUrn": urn, "source": aspect, "at": c.ts, "keep": sorted([*f.key] for f in facts)})
            for f in facts:
                self._merge_edge(f, c.ts, c.ts)
            self._lineage_times(urn, aspect, [c.ts])
            return
        self.plan.tally["replayed"] += 1
        versions = stored_lineage_versions(st.version_times(aspect), self.history.lineage.get((urn, aspect), []))
        for i, c in enumerate(group):
            versions.append(LineageVersion(c.ts, tuple(self._facts(c)) if isinstance(c, LineageChange) else (), i))
        newest = max(versions, key=lambda v: (v.ts, v.order))
        if newest.order >= 0:
            self.plan.tally["lineage_deletes" if isinstance(group[newest.order], AspectDelete) else "lineages"] += 1
            self._lineage_queries(urn, group[newest.order])
        self.plan.tally["superseded"] += len(group) - (newest.order >= 0)
        self.plan.clear_lineage.append({"datasetUrn": urn, "source": aspect})
        for span in replay_lineage(versions):
            if span.end is None:
                self._merge_edge(span.fact, span.start, span.last_seen)
            else:
                self._past_edge(span)
        self._lineage_times(urn, aspect, [v.ts for v in versions])

    def _lineage_queries(self, urn: str, present: LineageChange | AspectDelete) -> None:
        """The queries the present version of ``upstreamLineage`` names without field lineage replace the old;
        the edges derived from the queries it no longer names stop holding."""
        if present.aspect != UPSTREAM_LINEAGE:
            return
        queries = present.queries if isinstance(present, LineageChange) else ()
        self.plan.unlink_lineage_queries.append({"datasetUrn": urn})
        self.plan.link_lineage_queries.extend(
            {"datasetUrn": urn, "query": q, "upstreams": list(ups)} for q, ups in queries)
        self.end_query_lineage([{"datasetUrn": urn, "at": present.ts, "keep": [q for q, _ in queries], "only": None}])

    def queries(self, changes: Sequence[QueryChange], stored: Mapping[str, StoredQuery]) -> None:
        """Each query's newest statement, unless the graph holds a newer one; a changed statement ends the edges
        derived from the old one (those that still hold are derived again, from the new one)."""
        for urn, q in newest_queries(changes).items():
            held = stored.get(urn)
            if held is not None and held.ts > q.ts:
                continue
            self.plan.upsert_queries.append({"urn": urn, "statement": q.statement, "language": q.language,
                                                "ts": q.ts})
            if held is not None and held.statement is not None and held.statement != q.statement:
                self.end_query_lineage([{"datasetUrn": d, "at": max(q.ts, ts), "keep": [], "only": urn}
                                        for d, _, ts in held.datasets])

    def end_query_lineage(self, rows: list[QueryEndRow]) -> None:
        """Query-derived edges stop holding (see ``close_query_lineage.cypher``)."""
        self.plan.close_query_lineage.extend(rows)
        self.plan.drop_query_lineage.extend(rows)

    # ---- DataHub: tags and terms set on fields, data jobs ----

    def editable(self, urn: str, group: list[EditableSchemaChange | AspectDelete]) -> None:
        """The newest of the batch's ``editableSchemaMetadata`` versions of a dataset (the later of equal stamps;
        an unstamped delete is newer than what came before it), written unless the graph holds a newer one
        (``set_editable_labels.cypher`` compares). Kept on the dataset, as DataHub keeps it: the labels of each
        field path, matched to the fields when they are read, whichever arrives first."""
        self.dataset_row(urn)
        newest: tuple[int, EditableSchemaChange | AspectDelete, bool] | None = None
        for c in group:
            unstamped = c.ts == UNSTAMPED
            ts = max(newest[0], 0) if unstamped and newest else max(c.ts, 0)
            if newest is None or unstamped or ts >= newest[0]:
                newest = (ts, c, unstamped)
        assert newest is not None
        ts, c, unstamped = newest
        labels = [[path, list(ls)] for path, ls in c.labels] if isinstance(c, EditableSchemaChange) else []
        self.plan.set_editable_labels.append({"urn": urn, "ts": ts, "unstamped": unstamped,
                                                 "labels": json.dumps(labels) if labels else None})
        self.plan.tally["editable"] += 1
        self.plan.tally["superseded"] += len(group) - 1

    def data_jobs(self, changes: Sequence[DataJobChange], stored: Mapping[str, StoredJob]) -> None:
        """Each job's newest ``dataJobInputOutput`` (the later of equal stamps), unless the graph holds a newer
        one: the job's edges it does not repeat stop holding at its time, wherever they are (the datasets the
        stored version wrote and this one writes), and its edges hold from then (those it repeats keep their
        ``validFrom``). An older version arriving late changes nothing; an unstamped delete is newer than what
        came before it, stored or in the batch."""
        newest: dict[str, DataJobChange] = {}
        for c in changes:
            prev = newest.get(c.job)
            if c.ts == UNSTAMPED:
                held = stored.get(c.job)
                c = replace(c, ts=max(prev.ts if prev else 0, held.ts if held else 0))
            if prev is None or c.ts >= prev.ts:
                newest[c.job] = c
        self.plan.tally["superseded"] += len(changes) - len(newest)
        for job, c in newest.items():
            held = stored.get(job)
            if held is not None and held.ts > c.ts:
                self.plan.tally["superseded"] += 1
                continue
            self.plan.tally["lineages"] += 1
            facts = self._facts(c, source=job)
            outputs = sorted({*c.outputs, *(parse_field_ref(f.down)[0] for f in facts)})
            keep = sorted([*f.key] for f in facts)
            for ds in sorted({*outputs, *(held.outputs if held else ())}):
                self.plan.close_lineage.append({"datasetUrn": ds, "source": job, "at": c.ts, "keep": keep})
            for f in facts:
                self._merge_edge(f, c.ts, c.ts)
            self.plan.upsert_data_jobs.append({"urn": job, "ts": c.ts, "outputs": outputs})

    def _lineage_times(self, urn: str, aspect: LineageAspect, times: list[int]) -> None:
        self._add_times(urn, aspect, times)
        row = self.dataset_row(urn)
        row[LINEAGE_TS_PROP[aspect]] = row[TIMES_PROP[aspect]][-1]

    def _facts(self, change: LineageChange | DataJobChange, source: str | None = None) -> list[Fact]:
        """The edges of a lineage version, references resolved (downstream fields it names get placeholders);
        ``source`` (default: the aspect) keys them among the edges of their downstream dataset."""
        for ref in change.fields:
            self.resolve(ref)
        facts: dict[tuple[str, str, bool], Fact] = {}
        for edges, target, to_dataset in ((change.edges, self.resolve, False),
                                          (change.dataset_edges, self.dataset_target, True)):
            for e in edges:
                down = self.resolve(e.downstream)
                up = target(e.upstream)
                facts[(down, up, to_dataset)] = Fact(down, up, {**e.props.to_props(),
                                                                "source": source or change.aspect}, to_dataset)
        return list(facts.values())

    def _merge_edge(self, f: Fact, valid_from: int, last_seen: int) -> None:
        """An edge that holds now (kept if it already does: its ``validFrom`` stays)."""
        (self.plan.merge_dataset_edges if f.dataset else self.plan.merge_field_edges).append(
            {"down": f.down, "up": f.up, "source": f.props["source"], "fact": f.fact, "validFrom": valid_from,
             "props": {**f.props, "fact": f.fact, "lastSeen": last_seen}})

    def _past_edge(self, span: Span) -> None:
        f = span.fact
        props = {**f.props, "validFrom": span.start, "validTo": span.end, "firstSeen": span.first_seen,
                 "lastSeen": span.last_seen}
        if not f.additive:
            props["fact"] = f.fact
        (self.plan.create_past_dataset_edges if f.dataset else self.plan.create_past_field_edges).append(
            {"down": f.down, "up": f.up, "props": props})

    # ---- job lineage ----

    def job_lineage(self, urn: str, group: list[JobLineageChange | AspectDelete]) -> None:
        """Additive edges per (down, up, job) with first/last seen, closed by deletes; declared and dropped
        fields. The lineage of DataHub queries is merged as it comes: the dataset's ``upstreamLineage`` ends it
        (:meth:`end_query_lineage`), not job-lineage deletes or replays."""
        rest: list[JobLineageChange | AspectDelete] = []
        for c in group:
            if isinstance(c, JobLineageChange) and c.job.startswith(QUERY_URN_PREFIX):
                self.plan.tally["job_lineages"] += 1
                for f in self._job_facts(c):
                    self._job_edge(f, c.ts)
            else:
                rest.append(c)
        group = rest
        if not group:
            self.dataset_row(urn)
            return
        if any(c.ts == UNSTAMPED for c in group):  # stamped after the newest run seen, stored or before it
            seen = [s.last_seen for s in self.history.jobs.get(urn, [])]
            group = in_arrival_order(group, max([self.stored(urn).last_time(JOB_LINEAGE), *seen]))
        runs = sorted((c for c in group if isinstance(c, JobLineageChange)), key=lambda c: c.ts)
        facts = [(c, self._job_facts(c)) for c in runs]
        self.plan.tally["job_lineages"] += len(runs)
        if _jobs_append(group, self.stored(urn)):
            for c, fs in facts:
                for f in fs:
                    self._job_edge(f, c.ts)
        else:
            self.plan.tally["replayed"] += 1
            deletes = [c.ts for c in group if isinstance(c, AspectDelete)]
            self.plan.tally["lineage_deletes"] += len(deletes)
            stored = self.history.jobs.get(urn, [])
            history = [Run(t, (s.fact,)) for s in stored for t in {s.first_seen, s.last_seen}]
            self.plan.clear_job_lineage.append({"datasetUrn": urn})
            times = sorted({*self.stored(urn).version_times(JOB_LINEAGE), *deletes})
            for span in replay_jobs(history + [Run(c.ts, tuple(fs)) for c, fs in facts], times):
                if span.end is None:
                    self._job_edge(span.fact, span.last_seen, span.first_seen)
                else:
                    self._past_edge(span)
            if deletes:
                self._add_times(urn, JOB_LINEAGE, deletes)
        self.dataset_row(urn)
        for c in runs:
            for ref, entry in c.dropped:
                self.dropped[(self.resolve(ref), entry)] = None
            if c.operations is not None:
                self._job_run(c, c.operations)

    def _job_run(self, c: JobLineageChange, ops: RunOperations) -> None:
        """A run and its operations, once per (job, run): a run sent again replaces what it said before."""
        run = c.run or f"@{c.ts}"
        for ds in (*ops.sources, *ops.destinations):
            self.ensure_dataset(ds)
        self.job_runs[(c.job, run)] = ({"job": c.job, "run": run, "time": c.ts, "checksum": ops.checksum,
                                        "operations": ops.operations}, ops)

    def _job_facts(self, c: JobLineageChange) -> list[Fact]:
        for ref in (*c.fields, *c.reads):
            self.resolve(ref, declared=True)
        props: dict[int, dict[str, Any]] = {}  # edges of one run often share their properties
        for e in c.edges:
            if id(e.props) not in props:
                props[id(e.props)] = {**e.props.to_props(), "source": c.job}
        return [Fact(self.resolve(e.downstream, declared=True), self.resolve(e.upstream), props[id(e.props)],
                     additive=True) for e in c.edges]

    def _job_edge(self, f: Fact, ts: int, first: int | None = None) -> None:
        key = (f.down, f.up, f.props["source"])
        props = {k: v for k, v in f.props.items() if k != "source"}
        prev = self.job_edges.get(key)
        if prev is None:
            self.job_edges[key] = {"down": f.down, "up": f.up, "source": f.props["source"],
                                   "firstSeen": ts if first is None else first, "lastSeen": ts, "props": props}
            return
        prev["firstSeen"] = min(prev["firstSeen"], ts if first is None else first)
        if ts >= prev["lastSeen"]:
            prev["lastSeen"] = ts
            prev["props"] = props

    # ---- the end ----

    def finish(self) -> Plan:
        plan = self.plan
        plan.merge_job_edges.extend(self.job_edges.values())
        for row, ops in self.job_runs.values():
            plan.clear_job_runs.append({"job": row["job"], "run": row["run"]})
            plan.merge_job_runs.append(row)
            plan.link_run_sources.extend({"job": row["job"], "run": row["run"], "urn": u} for u in ops.sources)
            plan.link_run_destinations.extend({"job": row["job"], "run": row["run"], "urn": u}
                                              for u in ops.destinations)
        plan.mark_dropped.extend({"urn": u, "entry": entry} for u, entry in self.dropped)
        plan.upsert_datasets = [{"urn": u, "props": p} for u, p in self.dataset_rows.items()]
        if any(plan.rows(s) for s in REMOVING):
            plan.cleanup_placeholder_fields = [{}]
            plan.cleanup_placeholder_datasets = [{}]
        return plan


def plan_query_ends(rows: list[QueryEndRow]) -> Plan:
    """A plan that only ends query-derived edges (``close_query_lineage`` rows)."""
    planner = _Planner({})
    planner.end_query_lineage(rows)
    return planner.finish()


def plan_placeholder_resolution(state: Mapping[str, DatasetState]) -> Plan:
    """The writes that resolve stored placeholder fields against the real fields of their dataset (the
    moves :func:`plan_changes` plans when a schema arrives). Pure and idempotent."""
    planner = _Planner(state)
    for urn, st in state.items():
        if not any(f.placeholder for f in st.fields.values()) or all(f.placeholder for f in st.fields.values()):
            continue
        resolver = Resolver(st.fields.values())
        for furn, fs in st.fields.items():
            if not fs.placeholder:
                continue
            kind, paths = resolver.resolve(fs.refPath or fs.fieldPath)
            if kind in ("unique", "exact") and field_urn(urn, paths[0]) != furn:
                planner.plan_move(furn, field_urn(urn, paths[0]))
    return planner.plan


def _outranked(c: SchemaChange, st: DatasetState, schemas: Sequence[SchemaChange]) -> bool:
    """A schema with a lower version number than one before it in time: it only adds fields never seen."""
    if st.schemaVersion > c.version and 0 <= st.schemaTs <= c.ts:
        return True
    return any(o.version > c.version and o.ts <= c.ts for o in schemas)


def _state_node(h: Held) -> dict[str, Any]:
    """The properties of a ``FieldState`` node: a field's state over ``[validFrom, validTo)``."""
    return {**h.props, "validFrom": h.start, "validTo": h.end, "removed": h.removed, "stateKey": state_key(h.props)}


def simple_ref(path: str) -> str:
    if path.startswith("/"):
        return ".".join(c for c in path.split("/") if c)
    return v1_path(path)
