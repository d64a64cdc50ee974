"""The planner of lineage drawn by hand (:class:`~fieldgraph.changes.ManualEdgeChange`): an edge with ``source``
``manual`` that holds from when it was drawn until it is removed. No other planner touches it: lineage aspects
close and replay the edges of their own ``source``, job lineage those of its formats, data jobs those of their job.

Drawing an edge that holds changes nothing; drawing it after its removal holds it again, from then; removing it
makes it a past edge (``PreviouslyDerivedFrom`` with ``validTo`` and ``removedBy``). Writers cut their batches so that
a plan changes each edge once (:func:`fieldgraph.graph.write.one_version_each`); of several changes of one edge in a
plan, the newest is planned (the later of equal stamps). A drawing older than a removal already stored is not
drawn again; a removal older than the drawing it meets leaves it (each arrived late); a removal that meets no drawn
edge changes nothing (the end of an interval stored is not moved)."""

from __future__ import annotations

from collections.abc import Sequence

from fieldgraph.changes import ManualEdgeChange, where
from fieldgraph.errors import InputError

from .planner import Planner


def plan_manual_edges(p: Planner, changes: Sequence[ManualEdgeChange]) -> None:
    """The batch's drawn and removed edges (after its schemas: references resolve against them, an unknown field
    is a placeholder as in any lineage)."""
    newest: dict[tuple[str, str], ManualEdgeChange] = {}
    for c in changes:
        key = (p.resolve(c.edge.downstream), p.resolve(c.edge.upstream))
        if key[0] == key[1]:
            raise InputError(f"{where(c)}: a field does not derive from itself ({key[0]})")
        if key not in newest or c.ts >= newest[key].ts:
            newest[key] = c
    p.plan.tally["superseded"] += len(changes) - len(newest)
    for (down, up), c in newest.items():
        if c.remove:
            p.plan.tally["manual_removals"] += 1
            p.plan.close_manual_edges.append({"down": down, "up": up, "at": c.ts, "by": c.by})
            continue
        p.plan.tally["manual_edges"] += 1
        props = {**c.edge.props.to_props(), "by": c.by, "note": c.note}
        p.plan.merge_manual_edges.append({"down": down, "up": up, "at": c.ts,
                                          "props": {k: v for k, v in props.items() if v is not None}})
