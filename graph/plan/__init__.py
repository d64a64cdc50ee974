"""Changes -> graph writes, as pure code: typed changes and the current state in, parameter rows out.

The one write path (``fieldgraph.graph.write``) runs it for file replay, the Kafka worker, the HTTP
service and the Spark job, from its planning stage (:func:`fieldgraph.graph.batch.plan_batch`)::

    state = reads.read_state(datasets_to_read(changes))   # the reads, before planning
    plan = plan_changes(changes, state, history, ...)      # pure
    writer.apply(plan)                                     # one UNWIND per step and batch

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
  (:class:`fieldgraph.changes.EdgeProps`) plus ``firstSeen``/``lastSeen``;
- lineage drawn by hand (``source`` ``manual``) holds until it is removed by hand: nothing above ends it.

The package, by concern: :mod:`.state` (what is read before planning), :mod:`.resolve` (field references ->
fields), :mod:`.groups` (a batch per dataset and aspect; what it needs read), :mod:`.planner` (one batch's plan under
construction: fields, placeholders, edges), and one planner per aspect: :mod:`.schemas`, :mod:`.lineage`,
:mod:`.job_lineage`, :mod:`.queries`, :mod:`.editable`, :mod:`.data_jobs`, :mod:`.renames` (renames stated by schemas
and by :class:`~fieldgraph.changes.RenameChange`), :mod:`.manual` (lineage drawn by hand). A new change kind gets its
group in :class:`.groups.Groups` (mypy names the match that must take it) and its planner here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fieldgraph.changes import Change
from fieldgraph.errors import InputError

from ..steps import Plan, QueryEndRow
from .data_jobs import plan_data_jobs
from .editable import plan_editable
from .groups import Groups, datasets_to_read, history_needed, in_arrival_order
from .job_lineage import plan_job_lineage
from .lineage import plan_lineage
from .manual import plan_manual_edges
from .planner import Planner, field_props
from .queries import newest_queries, plan_queries
from .renames import plan_renames
from .resolve import Resolver, field_urn, parse_field_ref, resolve_reference, simple_ref
from .schemas import plan_schema
from .state import (
    LINEAGE_TS_PROP,
    QUERY_URN_PREFIX,
    TIMES_PROP,
    DatasetQueries,
    DatasetState,
    FieldState,
    History,
    HistoryRequest,
    LinkedQuery,
    StoredJob,
    StoredQuery,
    columns_named,
    schema_columns,
)


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
    groups = Groups.of(changes, state)
    planner = Planner(state, history)
    for urn, schemas in groups.schemas.items():
        plan_schema(planner, urn, schemas)
    planner.resolve_stored_placeholders(set(groups.schemas))
    for (urn, aspect), lineage in groups.lineage.items():
        plan_lineage(planner, urn, aspect, lineage)
    for urn, jobs in groups.jobs.items():
        plan_job_lineage(planner, urn, jobs)
    plan_queries(planner, groups.queries, queries or {})
    for urn, edits in groups.editable.items():
        plan_editable(planner, urn, edits)
    plan_data_jobs(planner, groups.data_jobs, data_jobs or {})
    plan_renames(planner, groups.renames)
    plan_manual_edges(planner, groups.manual)
    return planner.finish()


def plan_query_ends(rows: list[QueryEndRow]) -> Plan:
    """A plan that only ends query-derived edges (``close_query_lineage`` rows)."""
    planner = Planner({})
    planner.end_query_lineage(rows)
    return planner.finish()


def plan_placeholder_resolution(state: Mapping[str, DatasetState]) -> Plan:
    """The writes that resolve stored placeholder fields against the real fields of their dataset (the
    moves :func:`plan_changes` plans when a schema arrives). Pure and idempotent."""
    planner = Planner(state)
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


__all__ = [
    "LINEAGE_TS_PROP", "QUERY_URN_PREFIX", "TIMES_PROP", "DatasetQueries", "DatasetState", "FieldState", "History",
    "HistoryRequest", "LinkedQuery", "Resolver", "StoredJob", "StoredQuery", "columns_named", "datasets_to_read",
    "field_props", "field_urn", "history_needed", "in_arrival_order", "newest_queries", "parse_field_ref",
    "plan_changes", "plan_placeholder_resolution", "plan_query_ends", "resolve_reference", "schema_columns",
    "simple_ref",
]
