"""The planner of DataHub queries (``queryProperties``): each query's statement, kept in the graph so the lineage of
the datasets whose ``upstreamLineage`` names it is derived from it (:mod:`fieldgraph.graph.sql`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from fieldgraph.changes import Change, QueryChange

from .planner import Planner
from .state import StoredQuery


def newest_queries(changes: Iterable[Change]) -> dict[str, QueryChange]:
    """The newest statement of each query a batch brings (the later one of equal stamps)."""
    out: dict[str, QueryChange] = {}
    for c in changes:
        if isinstance(c, QueryChange) and (c.query not in out or c.ts >= out[c.query].ts):
            out[c.query] = c
    return out


def plan_queries(p: Planner, changes: Sequence[QueryChange], stored: Mapping[str, StoredQuery]) -> None:
    """Each query's newest statement, unless the graph holds a newer one; a changed statement ends the edges
    derived from the old one (those that still hold are derived again, from the new one)."""
    for urn, q in newest_queries(changes).items():
        held = stored.get(urn)
        if held is not None and held.ts > q.ts:
            continue
        p.plan.upsert_queries.append({"urn": urn, "statement": q.statement, "language": q.language, "ts": q.ts})
        if held is not None and held.statement is not None and held.statement != q.statement:
            p.end_query_lineage([{"datasetUrn": d, "at": max(q.ts, ts), "keep": [], "only": urn}
                                 for d, _, ts in held.datasets])
