"""A batch's planning stage, the one entry into planning of the write path (:class:`fieldgraph.graph.write.Writer`):
read what the batch needs (through :class:`Reads`, which the writer implements on its store), derive the lineage of
its SQL (:mod:`fieldgraph.graph.sql`) and plan it (:mod:`fieldgraph.graph.plan`)::

    decode (sources) -> plan_batch(changes, reads) -> Writer.apply(plan)

Also what a batch locks before reading anything (:func:`lock_keys`), and, for writers that share the graph, what
settles their queries and placeholders after they wrote (:func:`plan_query_settlement`,
:func:`plan_placeholder_settlement`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Protocol, assert_never

from fieldgraph.changes import (
    SCHEMA_METADATA,
    UPSTREAM_LINEAGE,
    AspectDelete,
    Change,
    DataJobChange,
    DatasetDelete,
    EditableSchemaChange,
    JobLineageChange,
    LineageChange,
    ManualEdgeChange,
    QueryChange,
    RenameChange,
    SchemaChange,
    SqlChange,
)
from fieldgraph.errors import FieldgraphError

from .plan import (
    DatasetQueries,
    DatasetState,
    History,
    HistoryRequest,
    StoredJob,
    StoredQuery,
    datasets_to_read,
    history_needed,
    parse_field_ref,
    plan_changes,
    plan_placeholder_resolution,
    plan_query_ends,
)
from .sql import derive_sql, queries_named, query_lineage, settled_query_lineage
from .steps import Plan
from .values import check_values


class Reads(Protocol):
    """What planning reads from the graph, and the check that the writer locks held cover what it reached."""

    def read_state(self, dataset_urns: Sequence[str]) -> dict[str, DatasetState]: ...

    def read_queries(self, urns: Sequence[str]) -> dict[str, StoredQuery]: ...

    def read_data_jobs(self, urns: Sequence[str]) -> dict[str, StoredJob]: ...

    def read_history(self, need: HistoryRequest) -> History: ...

    def read_dataset_queries(self, urns: Sequence[str]) -> list[DatasetQueries]: ...

    def require_locks(self, keys: Iterable[str]) -> None:
        """Refuse (:class:`~fieldgraph.graph.errors.LockKeysError`) keys the writer locks held do not cover."""


def plan_batch(changes: Sequence[Change], reads: Reads) -> Plan:
    """Read the state (and the history) the batch needs and plan it (no writes). SQL changes become the job lineage
    they amount to against the schemas read (:mod:`fieldgraph.graph.sql`), and so do the DataHub queries the
    batch's lineage names. Holding writer locks, it checks they cover what the reads showed the batch reaches."""
    check_values(changes)
    state: Mapping[str, DatasetState] = reads.read_state(datasets_to_read(changes))
    named = queries_named(changes)
    queries = reads.read_queries(named) if named else {}
    if named:
        changes, state = _join_queries(changes, queries, state, reads)
    changes, derived = derive_sql(changes, state)
    check_values(derived)
    jobs = sorted({c.job for c in changes if isinstance(c, DataJobChange)})
    stored_jobs = reads.read_data_jobs(jobs) if jobs else {}
    reads.require_locks(_reached(changes, state, stored_jobs, queries))
    return plan_changes(changes, state, reads.read_history(history_needed(changes, state)), queries, stored_jobs)


def _reached(changes: Sequence[Change], state: Mapping[str, DatasetState], stored_jobs: Mapping[str, StoredJob],
             queries: Mapping[str, StoredQuery]) -> Iterator[str]:
    """The lock keys of what a batch reaches once read (lazily: a writer that holds no locks never asks)."""
    yield from state
    yield from lock_keys(changes)
    yield from (o for j in stored_jobs.values() for o in j.outputs)
    yield from (d for q in queries.values() for d, _, _ in q.datasets)


def _join_queries(changes: Sequence[Change], queries: Mapping[str, StoredQuery], state: Mapping[str, DatasetState],
                  reads: Reads) -> tuple[Sequence[Change], Mapping[str, DatasetState]]:
    """The batch with the SQL changes its queries and query references make with the stored ones, and the state
    with that of the datasets they reach."""
    joined = query_lineage(changes, queries, state)
    more = [u for u in datasets_to_read(joined) if u not in state]
    return [*changes, *joined], ({**state, **reads.read_state(more)} if more else state)


def plan_query_settlement(changes: Sequence[Change], reads: Reads) -> tuple[Plan, list[SqlChange]] | None:
    """For writers that share the graph: the queries and the lineage naming them may each have been planned before
    another writer's write. What the graph now joins, for the datasets the batch's queries and ``upstreamLineage``
    reach: a plan ending the edges of queries their present lineage no longer names, and the SQL changes of those
    it names (to write, idempotent). None: nothing to settle."""
    named = queries_named(changes)
    datasets = {c.dataset for c in changes if isinstance(c, (DatasetDelete, LineageChange, AspectDelete))
                and (isinstance(c, DatasetDelete) or c.aspect == UPSTREAM_LINEAGE)}
    if named:
        datasets.update(d for q in reads.read_queries(named).values() for d, _, _ in q.datasets)
    if not datasets:
        return None
    reads.require_locks(datasets)  # the datasets naming a query: another writer changes them only holding the query
    joined, ends = settled_query_lineage(reads.read_dataset_queries(sorted(datasets)))
    return plan_query_ends(ends), joined


def plan_query_ends_again(joined: Sequence[SqlChange], reads: Reads) -> Plan:
    """After writing ``joined`` (:func:`plan_query_settlement`): another writer may have dropped a query from a
    lineage between that read and the write; the plan ending what no longer holds."""
    _, ends = settled_query_lineage(reads.read_dataset_queries(sorted({c.dataset for c in joined})))
    return plan_query_ends(ends)


def plan_placeholder_settlement(changes: Sequence[Change], plans: Sequence[Plan], reads: Reads) -> Plan | None:
    """For writers that share the graph: another writer may have written the schema a placeholder of the batch
    resolves against. The plan resolving what now resolves, in the datasets that got a schema or a placeholder
    (None: none did)."""
    urns = {c.dataset for c in changes if isinstance(c, (SchemaChange, AspectDelete))
            and (isinstance(c, SchemaChange) or c.aspect == SCHEMA_METADATA)}
    urns.update(r["datasetUrn"] for plan in plans for r in plan.ensure_fields)
    if not urns:
        return None
    return plan_placeholder_resolution(reads.read_state(sorted(urns)))


def lock_keys(changes: Iterable[Change]) -> set[str]:
    """The writer lock keys of a batch, before reading anything: every dataset it names or references
    (:func:`datasets_to_read`; a SQL change's tables are references), the datasets of the fields its lineage
    writes into and those its job runs read and write, the queries it brings or names and the jobs it writes
    runs of (their nodes and the runs are shared by the datasets they write). A change whose references do not
    parse adds none: planning it refuses it (and halving the batch finds it)."""
    keys: set[str] = set()
    for c in changes:
        try:
            keys.update(datasets_to_read([c]))
            keys.update(queries_named([c]))
            keys.update(_written_keys(c))
        except FieldgraphError:
            continue
    return keys


def _written_keys(c: Change) -> Iterator[str]:
    """The lock keys of what a change writes beyond the datasets it names or references: the query or job whose
    node it writes, the datasets of the fields its lineage writes into, those its job run read and wrote."""
    match c:
        case QueryChange(query=urn) | DataJobChange(job=urn):
            yield urn
        case SqlChange(job=job):
            yield job
        case LineageChange():
            yield from (parse_field_ref(ref)[0] for ref in (*c.fields, *(e.downstream for e in c.edges),
                                                            *(e.downstream for e in c.dataset_edges)))
        case JobLineageChange():
            yield c.job
            yield from (parse_field_ref(ref)[0] for ref in (*c.fields, *(e.downstream for e in c.edges)))
            if c.operations is not None:
                yield from (*c.operations.sources, *c.operations.destinations)
        case (SchemaChange() | EditableSchemaChange() | RenameChange() | ManualEdgeChange() | AspectDelete()
              | DatasetDelete()):  # a rename's fields are references; an edge's downstream is in the dataset named
            pass
        case _:
            assert_never(c)

