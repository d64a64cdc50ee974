"""Lineage through time around one field, pure (no I/O): when the walk changed, and what changed between two.

:func:`drawn_over_time` walks over all time: each field is reached over a set of intervals (when it lay within
the walk's depth), each edge is drawn over its own interval cut to the intervals its near end was reached in, so
an edge that held while its near end lay outside the walk draws nothing. :func:`timeline_marks` turns the
intervals into the instants the drawn lineage changed at. :func:`diff_walks` compares two walks (as of two
instants): fields and edges added, removed and changed.

An interval is ``(start, end)``: ``start`` inclusive (:data:`BEGIN`: since always), ``end`` exclusive (None: it
holds now), in ms since the epoch, as the graph keeps them (``validFrom``, ``validTo``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from fieldgraph.normalizers import FieldUrn

from .answers import EdgeDelta, FieldDelta, Hop, LineageResult, TimeMark, WalkDiff
from .history import TIME_PROPS

#: an interval [start, end); end None: open (holds now)
Interval = tuple[int, int | None]
#: the start of an interval that holds from always (an edge written before validity was kept)
BEGIN = 0
#: an edge's identity in a walk: its two ends and what tells edges between them apart
EdgeKey = tuple[Any, ...]
#: edge properties that change run by run without the edge changing (not told as a change)
VOLATILE_PROPS = frozenset({*TIME_PROPS, "run", "runTime"})


def union(intervals: Iterable[Interval]) -> list[Interval]:
    """The intervals merged: sorted, disjoint, none touching another."""
    out: list[Interval] = []
    for s, e in sorted(intervals, key=lambda iv: iv[0]):
        if out:
            ps, pe = out[-1]
            if pe is None or s <= pe:
                out[-1] = (ps, None if pe is None or e is None else max(pe, e))
                continue
        out.append((s, e))
    return out


def intersect(intervals: Sequence[Interval], span: Interval) -> list[Interval]:
    """``intervals`` cut to ``span`` (empty parts dropped)."""
    s2, e2 = span
    out: list[Interval] = []
    for s1, e1 in intervals:
        s = max(s1, s2)
        e = e2 if e1 is None else e1 if e2 is None else min(e1, e2)
        if e is None or s < e:
            out.append((s, e))
    return out


def covers(intervals: Sequence[Interval], t: int) -> Interval | None:
    """The interval of ``intervals`` that holds at ``t`` (None: none)."""
    return next(((s, e) for s, e in intervals if s <= t and (e is None or t < e)), None)


def span_of(edge: Mapping[str, Any]) -> Interval:
    """When an edge held: ``[validFrom, validTo)``."""
    return int(edge.get("validFrom") or BEGIN), edge.get("validTo")


def drawn_over_time(start: str, depth: int, step: Callable[[list[str]], Sequence[Hop] | None], since: int = BEGIN
                    ) -> tuple[dict[str, list[Interval]], dict[EdgeKey, tuple[Hop, list[Interval]]], int | None]:
    """When each node (field, or dataset reached by a dataset-level edge) and each edge is drawn in the walk from
    ``start`` (in the graph from ``since`` on) to ``depth`` hops, over all time. ``step(frontier)``: every edge
    one hop on from the fields ``frontier``, whenever it held (its interval in ``validFrom``/``validTo``); None:
    out of time (the walk stops there, and the level it stopped at is returned third; else None). Level ``n``
    expands the fields whose intervals grew at level ``n - 1``: as a walk as of any instant, fields within
    ``depth - 1`` hops."""
    reach: dict[str, list[Interval]] = {start: [(since, None)]}
    edges: dict[EdgeKey, tuple[Hop, list[Interval]]] = {}
    frontier = [start]
    for level in range(1, depth + 1):
        if not frontier:
            break
        grown: dict[str, list[Interval]] = {}
        fields: set[str] = set()
        hops = step(frontier)
        if hops is None:
            return reach, edges, level
        for h in hops:
            drawn = intersect(reach.get(h.from_urn, []), span_of(h.edge))
            if not drawn:
                continue
            k = h.key
            edges[k] = (h, union([*edges[k][1], *drawn]) if k in edges else union(drawn))
            grown.setdefault(h.urn, []).extend(drawn)
            if h.dataset_urn is not None:  # a dataset reached by a dataset-level edge leads no further
                fields.add(h.urn)
        frontier = []
        for urn, more in sorted(grown.items()):
            now = union([*reach.get(urn, []), *more])
            if now != reach.get(urn):
                reach[urn] = now
                if urn in fields:
                    frontier.append(urn)
    return reach, edges, None


def state_times(since: int | None, past: Iterable[Sequence[Any]]) -> list[int]:
    """The instants a field's state (listed or removed, type, description, tags...) changed at: the starts and
    ends of its past states (``[validFrom, validTo, removed]``) and the start of its present one (``since``)."""
    times = {since} if since else set()
    for p in past:
        times.update(t for t in p[:2] if t)
    return sorted(t for t in times if t is not None)


def timeline_marks(reach: Mapping[str, Sequence[Interval]],
                   edges: Mapping[EdgeKey, tuple[Hop, Sequence[Interval]]],
                   states: Mapping[str, Sequence[int]]) -> tuple[TimeMark, ...]:
    """The instants the drawn lineage changed at, each with its counts: edges and fields that came into the walk
    or left it, and fields drawn before and after whose state changed (``states``: :func:`state_times`)."""
    counts: dict[int, dict[str, int]] = {}

    def count(t: int | None, what: str) -> None:
        if t is not None and t > BEGIN:
            c = counts.setdefault(t, {})
            c[what] = c.get(what, 0) + 1

    for _, drawn in edges.values():
        for s, e in drawn:
            count(s, "edgesAdded")
            count(e, "edgesRemoved")
    for urn, drawn in reach.items():
        for s, e in drawn:  # the start, from the instant it came into the graph
            count(s, "fieldsAdded")
            count(e, "fieldsRemoved")
        for t in states.get(urn, ()):
            held = covers(drawn, t)
            if held is not None and held[0] != t:  # drawn before and after: the field changed in the view
                count(t, "fieldsChanged")
    return tuple(TimeMark(t, c.get("edgesAdded", 0), c.get("edgesRemoved", 0), c.get("fieldsAdded", 0),
                          c.get("fieldsRemoved", 0), c.get("fieldsChanged", 0)) for t, c in sorted(counts.items()))


def _nodes(res: LineageResult | None) -> dict[str, Hop | None]:
    """The nodes a walk draws: its start (None: no hop reached it) and each node a hop reaches (its first hop)."""
    if res is None:
        return {}
    out: dict[str, Hop | None] = {res.start: None}
    for h in res.hops:
        out.setdefault(h.urn, h)
    return out


def _edges(res: LineageResult | None) -> dict[EdgeKey, Hop]:
    """A walk's edges by their two ends and what tells edges between them apart (relation, source): each edge of a
    hop (several jobs may write one pair) on its own, as a hop of that edge alone."""
    if res is None:
        return {}
    return {(h.from_urn, h.urn, e.get("relation"), e.get("source")): replace(h, edge=e, more=())
            for h in res.hops for e in h.edges}


def _facts(edge: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in edge.items() if k not in VOLATILE_PROPS}


def _differ(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(sorted(k for k in {*a, *b} if a.get(k) != b.get(k)))


def diff_walks(start: str, direction: str, depth: int | None, t1: int, t2: int, before: LineageResult | None,
               after: LineageResult | None, states1: Mapping[str, Mapping[str, Any]],
               states2: Mapping[str, Mapping[str, Any]]) -> WalkDiff:
    """What changed in the walk around ``start`` from ``t1`` (``before``) to ``t2`` (``after``); a walk None: the
    field was not in the graph then (nothing drawn). Every node and edge drawn at either instant is listed, each
    ``added``, ``removed``, ``changed`` (a field's state in ``states1``/``states2``; an edge's properties, time
    and run ones aside) or ``same``, so the answer draws the union of the two views."""
    n1, n2 = _nodes(before), _nodes(after)
    fields: list[FieldDelta] = []
    for urn in sorted({*n1, *n2}):
        hop = n2.get(urn) or n1.get(urn)
        if hop is not None:
            dataset, path = hop.dataset_urn, hop.field_path
        else:  # the start
            f = FieldUrn.parse(urn)
            dataset, path = str(f.dataset), f.field_path
        s1 = dict(states1.get(urn) or {}) if urn in n1 else None
        s2 = dict(states2.get(urn) or {}) if urn in n2 else None
        differ: tuple[str, ...] = ()
        if s1 is None or s2 is None:
            change = "added" if s1 is None else "removed"
        else:
            differ = _differ(s1, s2)
            change = "changed" if differ else "same"
        fields.append(FieldDelta(urn, dataset, path, change, s1, s2, differ, urn == start))
    e1, e2 = _edges(before), _edges(after)
    edges: list[EdgeDelta] = []
    for k in sorted({*e1, *e2}, key=repr):
        h1, h2 = e1.get(k), e2.get(k)
        a = _facts(h1.edge) if h1 is not None else None
        b = _facts(h2.edge) if h2 is not None else None
        differ = ()
        if a is None or b is None:
            change = "added" if a is None else "removed"
        else:
            differ = _differ(a, b)
            change = "changed" if differ else "same"
        hop = h2 or h1
        assert hop is not None
        edges.append(EdgeDelta(hop.from_urn, hop.urn, change, None if h1 is None else dict(h1.edge),
                               None if h2 is None else dict(h2.edge), differ))
    partial = any(r is not None and r.partial for r in (before, after))
    reason = next((r.reason for r in (before, after) if r is not None and r.partial), None)
    return WalkDiff(start, direction, depth, t1, t2, tuple(fields), tuple(edges), partial, reason)


__all__ = ["BEGIN", "EdgeKey", "Interval", "diff_walks", "drawn_over_time", "intersect", "state_times",
           "timeline_marks", "union"]
