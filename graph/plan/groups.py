"""A batch's changes grouped per dataset and aspect, and what planning them needs read first: the datasets' state
(:func:`datasets_to_read`) and the timelines of the aspects they change out of time order (:func:`history_needed`).
Whether a group appends one newer version (the fast path) or must be replayed into its stored timeline is decided
here, once, for the reads and for the planners."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar, assert_never

from fieldgraph.changes import (
    JOB_LINEAGE,
    SCHEMA_METADATA,
    UNSTAMPED,
    AspectDelete,
    Change,
    DataJobChange,
    DatasetDelete,
    EditableSchemaChange,
    JobLineageChange,
    LineageAspect,
    LineageChange,
    ManualEdgeChange,
    QueryChange,
    RenameChange,
    SchemaChange,
    SqlChange,
    references,
)

from .resolve import dataset_of
from .state import DatasetState, HistoryRequest


def datasets_to_read(changes: Iterable[Change]) -> list[str]:
    """The datasets whose state :func:`~fieldgraph.graph.plan.plan_changes` needs: every dataset a change names or
    references."""
    urns: dict[str, None] = {}
    for c in changes:
        match c:
            case QueryChange():
                continue
            case DataJobChange():  # a job's URN is not a dataset's: its references are
                pass
            case (SchemaChange() | LineageChange() | JobLineageChange() | SqlChange() | EditableSchemaChange()
                  | RenameChange() | ManualEdgeChange() | AspectDelete() | DatasetDelete()):
                urns[c.dataset] = None
            case _:
                assert_never(c)
        for ref in references(c):
            urns[dataset_of(ref)] = None
    return list(urns)


@dataclass
class Groups:
    """A batch's changes per dataset and aspect, in arrival order (a dataset delete: a delete of each aspect)."""

    schemas: dict[str, list[SchemaChange | AspectDelete]] = field(default_factory=dict)
    lineage: dict[tuple[str, LineageAspect], list[LineageChange | AspectDelete]] = field(default_factory=dict)
    jobs: dict[str, list[JobLineageChange | AspectDelete]] = field(default_factory=dict)
    queries: list[QueryChange] = field(default_factory=list)
    editable: dict[str, list[EditableSchemaChange | AspectDelete]] = field(default_factory=dict)
    data_jobs: list[DataJobChange] = field(default_factory=list)
    renames: list[RenameChange] = field(default_factory=list)
    manual: list[ManualEdgeChange] = field(default_factory=list)

    @classmethod
    def of(cls, changes: Sequence[Change], state: Mapping[str, DatasetState]) -> Groups:
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
                case ManualEdgeChange():
                    g.manual.append(c)
                case RenameChange():
                    g.renames.append(c)
                case AspectDelete():
                    g.add_delete(c)
                case DatasetDelete():
                    for d in c.aspects():
                        g.add_delete(d)
                case SqlChange():  # planned as the job lineage it amounts to (fieldgraph.graph.sql.derive_sql)
                    pass
                case _:
                    assert_never(c)
        g.stamp_deletes(state)
        return g

    def stamp_deletes(self, state: Mapping[str, DatasetState]) -> None:
        """Unstamped schema and lineage deletes stamped in arrival order (:func:`in_arrival_order`)."""
        empty = DatasetState("")
        for urn, schemas in self.schemas.items():
            st = state.get(urn, empty)
            self.schemas[urn] = in_arrival_order(schemas, max(st.last_time(SCHEMA_METADATA), st.schemaTs))
        for (urn, aspect), lineage in self.lineage.items():
            self.lineage[(urn, aspect)] = in_arrival_order(lineage, state.get(urn, empty).last_time(aspect))


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


def schema_key(c: SchemaChange | AspectDelete, st: DatasetState) -> tuple[int, int]:
    # a delete counts as the newest version seen, so among deletes and schemas the stamp decides
    return (c.version, c.ts) if isinstance(c, SchemaChange) else (max(st.schemaVersion, 0), c.ts)


def schema_appends(group: Sequence[SchemaChange | AspectDelete], st: DatasetState) -> bool:
    """One schema version, newer than every stored one: the fast path (no timeline to read)."""
    return len(group) == 1 and group[0].ts >= st.last_time(SCHEMA_METADATA) \
        and schema_key(group[0], st) >= (st.schemaVersion, st.schemaTs)


def lineage_appends(group: Sequence[LineageChange | AspectDelete], st: DatasetState, aspect: LineageAspect) -> bool:
    return len(group) == 1 and group[0].ts >= st.last_time(aspect)


def jobs_append(group: Sequence[JobLineageChange | AspectDelete], st: DatasetState) -> bool:
    last_delete = st.last_time(JOB_LINEAGE)
    return all(isinstance(c, JobLineageChange) and c.ts >= last_delete for c in group)


def history_needed(changes: Sequence[Change], state: Mapping[str, DatasetState]) -> HistoryRequest:
    """The stored timelines :func:`~fieldgraph.graph.plan.plan_changes` needs: of the aspects the batch changes
    other than by appending one newer version (a late event, several versions of one aspect)."""
    g = Groups.of(changes, state)
    return HistoryRequest(
        frozenset(u for u, grp in g.schemas.items() if u in state and not schema_appends(grp, state[u])),
        frozenset(k for k, grp in g.lineage.items() if k[0] in state and not lineage_appends(grp, state[k[0]], k[1])),
        frozenset(u for u, grp in g.jobs.items() if u in state and not jobs_append(grp, state[u])))
