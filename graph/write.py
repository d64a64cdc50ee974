"""The one write path: typed changes -> a plan -> the graph. File replay, the Kafka worker, the HTTP
service and the Spark job all write through :class:`Writer`; none of them names a statement.

A batch, decoded, goes through two stages, each entered once per run: planning
(:func:`fieldgraph.graph.batch.plan_batch`: read the state of the datasets it touches and, for the aspects it changes
out of time order, their stored timelines (:mod:`fieldgraph.graph.history`), derive the lineage of its SQL, plan:
pure, :mod:`fieldgraph.graph.plan`), then :meth:`Writer.apply` (the plan's steps in order, one ``UNWIND`` statement
per step and batch of rows). Writers that share a
graph (two ``ingest`` runs, workers, the HTTP service) take turns per dataset: each batch is read, planned and
written holding the writer locks (:meth:`GraphStore.sole_writer`) of what it reads and writes
(:func:`~fieldgraph.graph.batch.lock_keys`:
the datasets it names or references, the queries and jobs it writes; then what reading shows it reaches: a data
job's stored outputs, the datasets naming a query it changes, the upstream datasets of edges it removes), so no
batch is planned against a state another writer changes before it is written, and writers on different datasets
write at the same time. Placeholders are created, linked and cleaned up only holding their dataset's lock: the
cleanup of a batch is that of its locked datasets. The modes differ only where several writers share the graph:

- ``single``: one writer (``fieldgraph ingest``, tests);
- ``concurrent``: several writers (Kafka workers on different partitions, ``fieldgraph serve``). Placeholder
  fields are created with a statement that tolerates a concurrent create. Holding the locks of every dataset its
  statements touch, a batch meets no other writer there; after applying, one round trip tells whether the locks
  held unbroken (:meth:`GraphStore.locks_unbroken`). If they did not (a lock expired under a writer that stalled,
  or its Neo4j connection dropped), the batch checks its lineage edges all exist and writes again (idempotent)
  if another writer's cleanup removed a node between two statements; then (once per :meth:`Writer.write_each`
  batch, after its last run) it re-reads the datasets that got a schema or a placeholder and resolves what now
  resolves (another writer may have written the schema meanwhile), and settles the queries and the lineage
  naming them. Whichever writer finishes last sees both writes, so no placeholder that a schema resolves
  survives. (A backfill takes no locks: it runs before the workers take over, as docs/how-to/backfill.md says);
- ``backfill``: many Spark tasks at once, each on its own datasets, without writer locks (the tasks
  write apart). The placeholder cleanup is
  left out (it could delete a placeholder another task has created but not linked yet) and run once at
  the end (:meth:`Writer.cleanup_placeholders`); edge rows go in a stable order so concurrent Neo4j
  transactions lock nodes in the same order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from enum import StrEnum
from typing import Any, TypeVar, assert_never

from fieldgraph.changes import (
    JOB_LINEAGE,
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
from fieldgraph.errors import FieldgraphError, GraphUnavailable, TransientError

from . import cypher as cy
from .batch import (
    lock_keys,
    plan_batch,
    plan_placeholder_settlement,
    plan_query_ends_again,
    plan_query_settlement,
)
from .errors import LockKeysError
from .history import TIME_PROPS, Fact, Held, Span, state_props
from .plan import DatasetQueries, DatasetState, History, HistoryRequest, StoredJob, StoredQuery
from .steps import CLEANUP, Plan, Step, Summary
from .store import GraphStore

log = logging.getLogger("fieldgraph.graph")

#: datasets read per state query
READ_CHUNK = 500
#: edges checked per verification query
VERIFY_CHUNK = 5000
#: writes of one batch before concurrent writers are given up on
MAX_ATTEMPTS = 5
#: times a batch takes a larger set of writer locks before it is given up on
MAX_LOCK_ROUNDS = 8

T = TypeVar("T")


class WriteMode(StrEnum):
    SINGLE = "single"
    CONCURRENT = "concurrent"
    BACKFILL = "backfill"


#: plan steps run with another statement in a mode (the statement safe under concurrent writers)
_STATEMENTS: dict[WriteMode, dict[Step, str]] = {
    WriteMode.CONCURRENT: {Step.ENSURE_FIELDS: "ensure_placeholder_fields"}}
#: steps whose rows go in a stable order in the backfill mode, so concurrent Neo4j transactions lock nodes in one order
_ORDERED = (Step.MERGE_FIELD_EDGES, Step.MERGE_DATASET_EDGES)
#: the cleanup steps as run holding writer locks: in the locked datasets only
_LOCKED_CLEANUP = {Step.CLEANUP_PLACEHOLDER_FIELDS: "cleanup_placeholder_fields_in",
                   Step.CLEANUP_PLACEHOLDER_DATASETS: "cleanup_placeholder_datasets_in"}


class Writer:
    """Plans and applies batches of changes on one store, in one :class:`WriteMode`."""

    def __init__(self, store: GraphStore, mode: WriteMode = WriteMode.SINGLE) -> None:
        self.store = store
        self.mode = mode
        self._statements = _STATEMENTS.get(mode, {})

    def read_state(self, dataset_urns: Sequence[str]) -> dict[str, DatasetState]:
        out: dict[str, DatasetState] = {}
        for batch in chunks(dataset_urns, READ_CHUNK):
            for row in self.store.read_state(batch):
                st = DatasetState.from_compact(row)
                out[st.urn] = st
        return out

    def read_queries(self, urns: Sequence[str]) -> dict[str, StoredQuery]:
        """The stored DataHub queries among ``urns``, with the datasets whose lineage names them."""
        out: dict[str, StoredQuery] = {}
        for batch in chunks(urns, READ_CHUNK):
            for r in self.store.run_named("read_queries", {"urns": batch}):
                out[r["urn"]] = StoredQuery.from_row(r)
        return out

    def read_data_jobs(self, urns: Sequence[str]) -> dict[str, StoredJob]:
        """The stored DataHub data jobs among ``urns``."""
        out: dict[str, StoredJob] = {}
        for batch in chunks(urns, READ_CHUNK):
            for r in self.store.run_named("read_data_jobs", {"urns": batch}):
                out[r["urn"]] = StoredJob.from_row(r)
        return out

    def read_history(self, need: HistoryRequest) -> History:
        """The stored timelines of the aspects ``need`` names (see :class:`fieldgraph.graph.plan.History`)."""
        out = History()
        for batch in chunks(sorted(need.schemas), READ_CHUNK):
            for r in self.store.run_named("read_schema_history", {"urns": batch}):
                out.fields.setdefault(r["dataset"], {})[r["urn"]] = _field_timeline(r)
        for pairs in chunks(sorted(need.lineage), READ_CHUNK):
            rows = [{"datasetUrn": d, "source": a} for d, a in pairs]
            for r in self.store.run_named("read_lineage_history", {"rows": rows}):
                fact = Fact(r["down"], r["up"], _fact_props(r["props"]), dataset=bool(r["toDataset"]))
                out.lineage.setdefault((r["dataset"], r["source"]), []).append(_span(fact, r["props"]))
        for batch in chunks(sorted(need.jobs), READ_CHUNK):
            for r in self.store.run_named("read_job_history", {"urns": batch}):
                fact = Fact(r["down"], r["up"], _fact_props(r["props"]), additive=True)
                out.jobs.setdefault(r["dataset"], []).append(_span(fact, r["props"]))
        return out

    def plan(self, changes: Sequence[Change]) -> Plan:
        """Read what the batch needs and plan it (no writes): the planning stage
        (:func:`fieldgraph.graph.batch.plan_batch`), reading from this writer's store. Holding writer locks, it
        checks they cover what the reads showed the batch reaches (:class:`LockKeysError` if not)."""
        return plan_batch(changes, self)

    def require_locks(self, keys: Iterable[str]) -> None:
        """Raise :class:`LockKeysError` if this thread holds writer locks and ``keys`` are not all among them."""
        held = self.store.held_keys()
        if held is not None:
            missing = frozenset(keys) - held
            if missing:
                raise LockKeysError(missing)

    def _holding(self, changes: Sequence[Change], body: Callable[[], T]) -> T:
        """``body()`` holding the writer locks of what ``changes`` read and write (:func:`lock_keys`), but in the
        backfill mode. When reading shows the batch reaches more (a data job's stored outputs, the datasets that
        name a query, the upstream datasets of edges a replay removes: :class:`LockKeysError`), the locks are
        released and the union is taken, in sorted order, and ``body()`` runs again: a writer never waits for a
        key while holding one that sorts after it, so writers cannot deadlock (and a batch's writes are
        idempotent: running it again changes nothing that it wrote)."""
        if self.mode is WriteMode.BACKFILL:
            return body()
        keys = lock_keys(changes)
        if self.store.held_keys() is not None:  # inside another hold: it is the one to take more keys
            with self.store.sole_writer(keys):
                return body()
        for _ in range(MAX_LOCK_ROUNDS):
            try:
                with self.store.sole_writer(keys):
                    return body()
            except LockKeysError as exc:
                log.debug("a batch reaches %d more lock keys; taking the union", len(exc.keys))
                keys |= exc.keys
        raise GraphUnavailable(f"a batch kept reaching datasets it had not locked ({MAX_LOCK_ROUNDS} rounds)")

    def write(self, changes: Sequence[Change]) -> Plan:
        """Plan and apply one batch (see the module for what each mode adds), holding the writer locks of what
        it reads and writes (:meth:`_holding`) but in the backfill mode, whose tasks write datasets apart."""
        return self._holding(changes, lambda: self._write_run(changes, None))

    def _write_run(self, changes: Sequence[Change], unsettled: list[tuple[Sequence[Change], Plan]] | None) -> Plan:
        """:meth:`write`; with ``unsettled`` (concurrent mode), the placeholders and queries are left for the
        caller to settle once for all its runs (:meth:`write_each`), the run and its plan added to the list."""
        if self.mode is not WriteMode.CONCURRENT:
            plan = self.plan(changes)
            self.apply(plan)
            return plan
        plan = self._write_verified(changes)
        if unsettled is None:
            self._settle(changes, [plan])
        else:
            unsettled.append((changes, plan))
        return plan

    def _settle(self, changes: Sequence[Change], plans: Sequence[Plan]) -> None:
        if self.store.locks_unbroken():  # no other writer wrote what the batch covers: nothing to settle
            return
        self._settle_placeholders(changes, plans)
        self._settle_queries(changes)

    def write_each(self, events: Sequence[Sequence[Change]]) -> tuple[Summary, list[tuple[int, FieldgraphError]]]:
        """Write the events' changes as one batch. When the graph refuses it for good (a value it cannot hold, a
        statement it refuses), halve the batch until the event(s) responsible are found and write the rest, in
        order; returns them (by index in ``events``) with the refusal. Transient errors propagate: retrying the
        whole batch rewrites what was written, which changes nothing."""
        return self._holding([c for cs in events for c in cs], lambda: self._write_each(events))

    def _write_each(self, events: Sequence[Sequence[Change]]) -> tuple[Summary, list[tuple[int, FieldgraphError]]]:
        """:meth:`write_each`, holding the locks (once for the runs and halves, not once each)."""
        # concurrent mode: placeholders and queries settled once, after the last run (still holding the lock;
        # settling reads what the graph holds now, so once at the end settles every run); a settle the graph
        # refuses for good (not seen in practice) writes the batch again settling each run, to find the event
        unsettled: list[tuple[Sequence[Change], Plan]] | None = [] if self.mode is WriteMode.CONCURRENT else None
        total, refused = self._write_runs(events, unsettled)
        if unsettled:
            try:
                self._settle([c for cs, _ in unsettled for c in cs], [p for _, p in unsettled])
            except TransientError:
                raise
            except FieldgraphError:
                total, refused = self._write_runs(events, None)
        return total, refused

    def _write_runs(self, events: Sequence[Sequence[Change]], unsettled: list[tuple[Sequence[Change], Plan]] | None
                    ) -> tuple[Summary, list[tuple[int, FieldgraphError]]]:
        refused: list[tuple[int, FieldgraphError]] = []
        total = Summary()
        for first, run in one_version_each(events):
            self._write_halving(run, first, refused, total, unsettled)
        return total, refused

    def _write_halving(self, events: Sequence[Sequence[Change]], first: int, refused: list[tuple[int, FieldgraphError]],
                       total: Summary, unsettled: list[tuple[Sequence[Change], Plan]] | None = None) -> None:
        try:
            total.add(self._write_run([c for cs in events for c in cs], unsettled))
            return
        except TransientError:
            raise
        except FieldgraphError as exc:
            if len(events) == 1:
                refused.append((first, exc))
                return
        mid = len(events) // 2
        for part, start in ((events[:mid], first), (events[mid:], first + mid)):
            self._write_halving(part, start, refused, total, unsettled)

    def apply(self, plan: Plan) -> None:
        """Run the plan's steps in order (the plan is not changed). Holding writer locks, the placeholder cleanup is
        that of the locked datasets (another writer may have created a placeholder elsewhere and not linked it yet);
        a plan that deletes edges first checks it holds the locks of their upstream datasets, where it may leave
        placeholders."""
        backfill = self.mode is WriteMode.BACKFILL
        held = self.store.held_keys()
        if held is not None:
            self.require_locks(self.read_upstream_datasets(plan))
        for step, rows in (plan.without_cleanup() if backfill else plan).steps():
            if backfill and step in _ORDERED:
                rows = sorted(rows, key=lambda r: (r["up"], r["down"]))
            if held is not None and step in _LOCKED_CLEANUP:
                self.store.run_named(_LOCKED_CLEANUP[step], {"datasets": sorted(held)}, write=True)
                continue
            self.store.run_step(self._statements.get(step, step), rows)

    def read_upstream_datasets(self, plan: Plan) -> set[str]:
        """The datasets at the upstream end of the stored edges the plan deletes (replays clear an aspect's edges
        to write them again; edges derived from a query that never held go): they may be left with placeholders
        without edges, which the plan's cleanup deletes."""
        rows = [{"datasetUrn": r["datasetUrn"], "source": r["source"], "queries": False}
                for r in plan.clear_lineage]
        rows += [{"datasetUrn": r["datasetUrn"], "source": None, "queries": False}
                 for r in plan.clear_job_lineage]
        rows += [{"datasetUrn": r["datasetUrn"], "source": r["only"], "queries": True}
                 for r in plan.drop_query_lineage]
        return {r["urn"] for batch in chunks(rows, READ_CHUNK)
                for r in self.store.run_named("read_upstream_datasets", {"rows": batch})}

    def cleanup_placeholders(self) -> None:
        """Delete placeholder fields and datasets nothing points at any more, in the whole graph: at the end of a
        backfill, when no other writer writes (no writer lock covers the whole graph)."""
        for step in CLEANUP:
            self.store.run_step(step, ())

    def _write_verified(self, changes: Sequence[Change]) -> Plan:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            plan = self.plan(changes)
            self.apply(plan)
            keys = plan.edge_keys()
            if not keys or self.store.locks_unbroken() or self._count_edges(keys) >= len(keys):
                return plan
            log.info("a concurrent write removed a node this batch's edges need; writing the batch again (%d)",
                     attempt)
        raise GraphUnavailable(f"lineage edges of a batch went missing after {MAX_ATTEMPTS} writes "
                               "(concurrent writers?)")

    def _count_edges(self, keys: set[tuple[str, str, str]]) -> int:
        stmt = cy.statement("count_lineage_edges")
        rows = [{"down": d, "up": u, "source": s} for d, u, s in keys]
        n = 0
        for batch in chunks(rows, VERIFY_CHUNK):
            res = self.store.run(stmt, {"rows": batch})
            n += int(res[0]["n"]) if res else 0
        return n

    def read_dataset_queries(self, urns: Sequence[str]) -> list[DatasetQueries]:
        """The queries each dataset's present ``upstreamLineage`` names, as stored."""
        return [DatasetQueries.from_row(r) for batch in chunks(urns, READ_CHUNK)
                for r in self.store.run_named("read_dataset_queries", {"urns": batch})]

    def _settle_queries(self, changes: Sequence[Change]) -> None:
        """Queries and the lineage naming them, written by several writers at once, may each have been planned
        before another's write: make the graph's query-derived edges what it now joins (idempotent; whichever
        writer finishes last sees every write)."""
        settlement = plan_query_settlement(changes, self)
        if settlement is None:
            return
        ends, joined = settlement
        self.apply(ends)
        if joined:
            self._write_verified(joined)
            self.apply(plan_query_ends_again(joined, self))

    def _settle_placeholders(self, changes: Sequence[Change], plans: Sequence[Plan]) -> None:
        fix = plan_placeholder_settlement(changes, plans, self)
        if fix:
            self.apply(fix)
            log.info("resolved %d placeholder fields left by a concurrent write", len(fix.delete_fields))


def one_version_each(events: Sequence[Sequence[Change]]) -> Iterator[tuple[int, Sequence[Sequence[Change]]]]:
    """``events`` cut, in order, into runs in which no dataset's schema or lineage aspect changes twice; with the
    index of each run's first event. A run's versions then append to what is stored, without the stored timeline
    to read and replay (what several versions of one aspect in a batch need, at a cost that grows with the
    aspect's history: batch after batch of a long history, quadratic); only a late event still needs it."""
    start, seen = 0, set[tuple[str, str]]()
    for i, event in enumerate(events):
        keys = {key for c in event for key in _versioned(c)}
        if keys & seen:
            yield start, events[start:i]
            start, seen = i, set()
        seen |= keys
    if start < len(events):
        yield start, events[start:]


def _versioned(c: Change) -> Iterator[tuple[str, str]]:
    """The (aspect, dataset or data job) whose versions ``c`` changes (job lineage adds runs: not a version)."""
    match c:
        case SchemaChange() | LineageChange():
            yield c.aspect, c.dataset
        case DataJobChange():
            yield c.aspect, c.job
        case ManualEdgeChange():  # each edge changes once per run: a run's plan draws or removes it once
            yield c.aspect, f"{c.edge.downstream} {c.edge.upstream}"
        case AspectDelete():
            if c.aspect != JOB_LINEAGE:
                yield c.aspect, c.dataset
        case DatasetDelete():
            for d in c.aspects():
                yield from _versioned(d)
        case JobLineageChange() | SqlChange() | QueryChange() | EditableSchemaChange() | RenameChange():
            pass
        case _:
            assert_never(c)


def _field_timeline(row: dict[str, Any]) -> list[Held]:
    past = [Held(int(p["validFrom"]), int(p["validTo"]), bool(p.get("removed")), state_props(p))
            for p in row["past"] or [] if p]
    return sorted(past, key=lambda h: h.start) + [Held(int(row["since"]), None, bool(row["removed"]), state_props(row))]


def _fact_props(props: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k not in TIME_PROPS}


def _span(fact: Fact, props: dict[str, Any]) -> Span:
    first = props.get("firstSeen", props.get("validFrom", 0))
    start = props.get("validFrom", first)
    return Span(fact, int(start), props.get("validTo"), int(first), int(props.get("lastSeen", first)))


def chunks(items: Iterable[T], n: int) -> Iterator[list[T]]:
    """``items`` in lists of ``n`` (the last one shorter)."""
    buf: list[T] = []
    for x in items:
        buf.append(x)
        if len(buf) >= n:
            yield buf
            buf = []
    if buf:
        yield buf
