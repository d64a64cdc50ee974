"""The planner of the lineage aspects (``upstreamLineage``, ``datasetUpstreamLineage``): each version is the whole set
of a dataset's incoming edges from that aspect. One newer version closes the edges it no longer lists and merges
the rest; anything else replays the aspect's stored timeline with the batch's versions placed by time. The present
``upstreamLineage`` also says which DataHub queries made the dataset (their lineage: :mod:`.queries`)."""

from __future__ import annotations

from fieldgraph.changes import UPSTREAM_LINEAGE, AspectDelete, LineageAspect, LineageChange

from ..history import LineageVersion, replay_lineage, stored_lineage_versions
from .groups import lineage_appends
from .planner import Planner
from .state import LINEAGE_TS_PROP, TIMES_PROP


def plan_lineage(p: Planner, urn: str, aspect: LineageAspect, group: list[LineageChange | AspectDelete]) -> None:
    """The batch's versions of one lineage aspect of a dataset (and deletes of it), in arrival order."""
    p.dataset_row(urn)
    if lineage_appends(group, p.stored(urn), aspect):
        _appended(p, urn, aspect, group[0])
    else:
        _replayed(p, urn, aspect, group)


def _appended(p: Planner, urn: str, aspect: LineageAspect, c: LineageChange | AspectDelete) -> None:
    """The fast path: one version, newer than every stored one."""
    _lineage_queries(p, urn, c)
    facts = p.facts(c) if isinstance(c, LineageChange) else []
    p.plan.tally["lineage_deletes" if isinstance(c, AspectDelete) else "lineages"] += 1
    p.plan.close_lineage.append(
        {"datasetUrn": urn, "source": aspect, "at": c.ts, "keep": sorted([*f.key] for f in facts)})
    for f in facts:
        p.merge_edge(f, c.ts, c.ts)
    _lineage_times(p, urn, aspect, [c.ts])


def _replayed(p: Planner, urn: str, aspect: LineageAspect, group: list[LineageChange | AspectDelete]) -> None:
    """The slow path: the aspect's edges cleared and its timeline written again, the batch's versions in it."""
    p.plan.tally["replayed"] += 1
    versions = stored_lineage_versions(p.stored(urn).version_times(aspect), p.history.lineage.get((urn, aspect), []))
    for i, c in enumerate(group):
        versions.append(LineageVersion(c.ts, tuple(p.facts(c)) if isinstance(c, LineageChange) else (), i))
    newest = max(versions, key=lambda v: (v.ts, v.order))
    if newest.order >= 0:
        p.plan.tally["lineage_deletes" if isinstance(group[newest.order], AspectDelete) else "lineages"] += 1
        _lineage_queries(p, urn, group[newest.order])
    p.plan.tally["superseded"] += len(group) - (newest.order >= 0)
    p.plan.clear_lineage.append({"datasetUrn": urn, "source": aspect})
    for span in replay_lineage(versions):
        if span.end is None:
            p.merge_edge(span.fact, span.start, span.last_seen)
        else:
            p.past_edge(span)
    _lineage_times(p, urn, aspect, [v.ts for v in versions])


def _lineage_queries(p: Planner, urn: str, present: LineageChange | AspectDelete) -> None:
    """The queries the present version of ``upstreamLineage`` names without field lineage replace the old;
    the edges derived from the queries it no longer names stop holding."""
    if present.aspect != UPSTREAM_LINEAGE:
        return
    queries = present.queries if isinstance(present, LineageChange) else ()
    p.plan.unlink_lineage_queries.append({"datasetUrn": urn})
    p.plan.link_lineage_queries.extend(
        {"datasetUrn": urn, "query": q, "upstreams": list(ups)} for q, ups in queries)
    p.end_query_lineage([{"datasetUrn": urn, "at": present.ts, "keep": [q for q, _ in queries], "only": None}])


def _lineage_times(p: Planner, urn: str, aspect: LineageAspect, times: list[int]) -> None:
    p.add_times(urn, aspect, times)
    row = p.dataset_row(urn)
    row[LINEAGE_TS_PROP[aspect]] = row[TIMES_PROP[aspect]][-1]
