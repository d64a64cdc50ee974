"""The planner of job lineage (CDAP program runs, OpenLineage runs, SQL statements, DataHub queries' derived lineage):
additive, an edge per (down, up, job) keeps its first and last seen times and the newest run's properties until a
delete closes it; destination fields a job declares but no schema lists are placeholders marked ``declared``; fields
a job drops get ``droppedBy`` entries; each run keeps its field operations."""

from __future__ import annotations

from typing import Any

from fieldgraph.changes import JOB_LINEAGE, UNSTAMPED, AspectDelete, JobLineageChange, RunOperations

from ..history import Fact, Run, replay_jobs
from .groups import in_arrival_order, jobs_append
from .planner import Planner
from .state import QUERY_URN_PREFIX

#: a job-lineage change and the edges of its run
_RunFacts = tuple[JobLineageChange, list[Fact]]


def plan_job_lineage(p: Planner, urn: str, group: list[JobLineageChange | AspectDelete]) -> None:
    """The batch's job lineage into a dataset (runs and deletes), in arrival order: runs newer than the last
    delete append their edges; anything else replays the stored runs with the batch's. The lineage of DataHub
    queries is merged as it comes: the dataset's ``upstreamLineage`` ends it
    (:meth:`~.planner.Planner.end_query_lineage`), not job-lineage deletes or replays."""
    group = _merge_query_runs(p, group)
    if not group:
        p.dataset_row(urn)
        return
    if any(c.ts == UNSTAMPED for c in group):  # stamped after the newest run seen, stored or before it
        seen = [s.last_seen for s in p.history.jobs.get(urn, [])]
        group = in_arrival_order(group, max([p.stored(urn).last_time(JOB_LINEAGE), *seen]))
    runs = sorted((c for c in group if isinstance(c, JobLineageChange)), key=lambda c: c.ts)
    facts = [(c, _job_facts(p, c)) for c in runs]
    p.plan.tally["job_lineages"] += len(runs)
    if jobs_append(group, p.stored(urn)):
        for c, fs in facts:
            for f in fs:
                _job_edge(p, f, c.ts)
    else:
        _replayed(p, urn, group, facts)
    p.dataset_row(urn)
    for c in runs:
        _dropped_and_operations(p, c)


def _merge_query_runs(p: Planner, group: list[JobLineageChange | AspectDelete]
                      ) -> list[JobLineageChange | AspectDelete]:
    """The lineage derived from DataHub queries merged; the rest of ``group`` returned."""
    rest: list[JobLineageChange | AspectDelete] = []
    for c in group:
        if isinstance(c, JobLineageChange) and c.job.startswith(QUERY_URN_PREFIX):
            p.plan.tally["job_lineages"] += 1
            for f in _job_facts(p, c):
                _job_edge(p, f, c.ts)
        else:
            rest.append(c)
    return rest


def _replayed(p: Planner, urn: str, group: list[JobLineageChange | AspectDelete], facts: list[_RunFacts]) -> None:
    """The slow path: the dataset's job lineage cleared and written again from the stored runs and the batch's,
    the deletes closing what held before them."""
    p.plan.tally["replayed"] += 1
    deletes = [c.ts for c in group if isinstance(c, AspectDelete)]
    p.plan.tally["lineage_deletes"] += len(deletes)
    stored = p.history.jobs.get(urn, [])
    history = [Run(t, (s.fact,)) for s in stored for t in {s.first_seen, s.last_seen}]
    p.plan.clear_job_lineage.append({"datasetUrn": urn})
    times = sorted({*p.stored(urn).version_times(JOB_LINEAGE), *deletes})
    for span in replay_jobs(history + [Run(c.ts, tuple(fs)) for c, fs in facts], times):
        if span.end is None:
            _job_edge(p, span.fact, span.last_seen, span.first_seen)
        else:
            p.past_edge(span)
    if deletes:
        p.add_times(urn, JOB_LINEAGE, deletes)


def _dropped_and_operations(p: Planner, c: JobLineageChange) -> None:
    """The fields a run drops (``droppedBy`` entries) and its field operations."""
    for ref, entry in c.dropped:
        p.dropped[(p.resolve(ref), entry)] = None
    if c.operations is not None:
        _job_run(p, c, c.operations)


def _job_run(p: Planner, c: JobLineageChange, ops: RunOperations) -> None:
    """A run and its operations, once per (job, run): a run sent again replaces what it said before."""
    run = c.run or f"@{c.ts}"
    for ds in (*ops.sources, *ops.destinations):
        p.ensure_dataset(ds)
    p.job_runs[(c.job, run)] = ({"job": c.job, "run": run, "time": c.ts, "checksum": ops.checksum,
                                 "operations": ops.operations}, ops)


def _job_facts(p: Planner, c: JobLineageChange) -> list[Fact]:
    """The edges of a run, references resolved (the fields it declares and reads too, as placeholders if needed; a
    placeholder among the columns of an ordered run keeps its column number, counted from 1)."""
    for number, ref in enumerate(c.fields, 1):
        placeholder = p.placeholder_rows.get(p.resolve(ref, declared=True))
        if c.ordered and placeholder is not None:
            placeholder["props"]["column"] = number
    for ref in c.reads:
        p.resolve(ref, declared=True)
    props: dict[int, dict[str, Any]] = {}  # edges of one run often share their properties
    for e in c.edges:
        if id(e.props) not in props:
            props[id(e.props)] = {**e.props.to_props(), "source": c.job}
    return [Fact(p.resolve(e.downstream, declared=True), p.resolve(e.upstream), props[id(e.props)],
                 additive=True) for e in c.edges]


def _job_edge(p: Planner, f: Fact, ts: int, first: int | None = None) -> None:
    """A job edge seen at ``ts`` (first seen at ``first``), merged with the batch's other sightings of it."""
    key = (f.down, f.up, f.props["source"])
    props = {k: v for k, v in f.props.items() if k != "source"}
    prev = p.job_edges.get(key)
    if prev is None:
        p.job_edges[key] = {"down": f.down, "up": f.up, "source": f.props["source"],
                            "firstSeen": ts if first is None else first, "lastSeen": ts, "props": props}
        return
    prev["firstSeen"] = min(prev["firstSeen"], ts if first is None else first)
    if ts >= prev["lastSeen"]:
        prev["lastSeen"] = ts
        prev["props"] = props
