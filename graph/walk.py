"""The lineage walk: level by level over a store's one-hop statements, within a depth cap and a time budget.

Now or as of an instant: the one-hop statements (``*_step.cypher``, ``*_step_as_of.cypher``) follow the edges
that hold (held) then. Renames are crossed both ways by the identity rules of :mod:`fieldgraph.graph.renames`
(upstream, a walk goes on from the old name as of just before the rename: each field of a frontier carries the
instant it is walked at; a rename crossed there and back is shown once). One read transaction for the whole walk
where the store has them (Neo4j), timed out with the budget.

The answer has one hop per pair of fields (:func:`~fieldgraph.graph.answers.by_pair`): several edges between the
same two fields (two jobs writing the pair, one drawn by hand beside them) are one hop listing them all; the graph
keeps each edge, and a walk follows (and ``keep`` judges) each on its own.

Under a read scope (:class:`~fieldgraph.graph.scope.Scope`) a walk never shows a field the scope hides: it stops
there (counted in the answer's ``hidden``), or, with ``through_hidden``, goes on through it and shows a visible field
reached so as one hop from the last visible field before it, its edge only ``{"hidden": <hidden fields between>}``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from . import cypher as cy
from .answers import RENAMED_FROM, Hop, LineageResult, by_pair
from .errors import QueryTimeout
from .renames import RenameReader
from .scope import Scope
from .store import GraphStore
from .write import chunks

DEFAULT_DEPTH_CAP = 50
DEFAULT_TIME_BUDGET_S = 10.0
#: a field a walk reaches and the instant it walks on from it (None: now)
Reached = tuple[str, int | None]
#: a walk's one-hop statements: (direction, as of an instant) -> statement
_STEPS = {("upstream", False): "upstream_step", ("upstream", True): "upstream_step_as_of",
          ("downstream", False): "downstream_step", ("downstream", True): "downstream_step_as_of",
          ("dataset", False): "dataset_downstream_step", ("dataset", True): "dataset_downstream_step_as_of"}


class Walk:
    """One walk in ``direction`` (``upstream``, ``downstream``), now or ``as_of``; with ``keep``, only the edges it
    accepts. ``deadline`` (``time.monotonic()``): when the budget of ``time_budget_s`` ends (default: that long
    from now; a walk that shares its budget with other work passes the deadline of the whole). ``scope``: only the
    fields it sees are shown (see the module)."""

    def __init__(self, store: GraphStore, direction: str, *, as_of: int | None = None,
                 keep: Callable[[Hop], bool] | None = None, time_budget_s: float = DEFAULT_TIME_BUDGET_S,
                 deadline: float | None = None, scope: Scope | None = None) -> None:
        self.store, self.direction, self.as_of, self.keep = store, direction, as_of, keep
        self.time_budget_s = time_budget_s
        self.deadline = time.monotonic() + time_budget_s if deadline is None else deadline
        self.steps = {then: cy.statement(_STEPS[direction, then]) for then in (False, True)}
        self.dataset_step = cy.statement(_STEPS["dataset", as_of is not None])
        self.at: dict[str, Any] = {"asOf": as_of} if as_of is not None else {}
        self.renames: RenameReader | None = None
        self.shown: set[tuple[Any, ...]] = set()
        self.scope = scope
        #: the hidden fields reached, each with the last visible field before it and the hidden ones from there
        self.hidden: dict[str, tuple[str, int]] = {}

    def run(self, starts: Sequence[str], depth: int | None, *, dataset_starts: Sequence[str] = (),
            capped: bool = True) -> LineageResult:
        """The walk from the fields ``starts`` (and, one level, from the datasets ``dataset_starts``), to ``depth``
        hops (None: the depth cap). ``capped`` False: no depth cap when ``depth`` is None (each field is expanded
        once, the time budget the only limit), and a walk stopped at ``depth`` is partial only when more edges
        ``keep`` accepts lead on to fields not reached yet."""
        cap = depth or (DEFAULT_DEPTH_CAP if capped else None)
        start = starts[0] if starts else (dataset_starts[0] if dataset_starts else "")
        hops: list[Hop] = []
        seen: set[Reached] = {(u, self.as_of) for u in (*starts, *dataset_starts)}

        def result(reason: str | None = None, *, at_requested_depth: bool = False) -> LineageResult:
            return LineageResult(start, self.direction, by_pair(hops), reason is not None, reason, depth,
                                 at_requested_depth, self.as_of, None if self.scope is None else len(self.hidden))

        with self.store.reading(timeout_ms=max(1, self._remaining_ms())):
            reader = RenameReader(self.store)
            if self.direction in ("upstream", "downstream") and reader.any():
                self.renames = reader
            frontier, stopped = self._levels([(u, self.as_of) for u in starts], list(dataset_starts), cap, hops, seen)
            if stopped:
                return result(stopped)
            if frontier and cap is not None and (self.keep is None or not capped):
                # is there anything beyond the cap? (a filtered walk at the cap would have to filter the answer
                # too; one at the depth asked for checks that the edges it would follow lead to fields not reached)
                try:
                    more = self._leads_on(frontier, seen) if not capped else \
                        any(self._goes_to(r) for r, _ in self._one_hop(frontier[:1000], [], self._remaining_ms()))
                except QueryTimeout:
                    return result(self._out_of_time(cap))
                if more:
                    return result(f"depth {'cap ' if not depth else ''}{cap} reached; more lineage lies beyond",
                                  at_requested_depth=bool(depth))
            return result()

    def _levels(self, frontier: list[Reached], datasets: list[str], cap: int | None, hops: list[Hop],
                seen: set[Reached]) -> tuple[list[Reached], str | None]:
        """Walks level by level from ``frontier`` (and ``datasets``, one level) to ``cap`` levels (None: as far as
        lineage goes), adding to ``hops`` and ``seen``; returns the last frontier and, when out of time, why the
        walk stopped there."""
        level = 0
        while (frontier or datasets) and (cap is None or level < cap):
            level += 1
            remaining_ms = self._remaining_ms()
            if remaining_ms <= 0:
                return frontier, self._out_of_time(level - 1)
            try:
                rows = self._one_hop(frontier, datasets, remaining_ms)
            except QueryTimeout:
                return frontier, self._out_of_time(level)
            datasets = []
            frontier = self._take(rows, level, hops, seen)
        return frontier, None

    def _remaining_ms(self) -> int:
        return int((self.deadline - time.monotonic()) * 1000)

    def _out_of_time(self, level: int) -> str:
        return f"time budget of {self.time_budget_s:g}s reached at depth {level}"

    def _one_hop(self, frontier: list[Reached], datasets: list[str],
                 timeout_ms: int) -> list[tuple[dict[str, Any], int | None]]:
        """The rows of one step from the fields ``frontier`` and the datasets ``datasets``, each with the instant
        the walk goes on at from the field it reaches."""
        at: dict[int | None, list[str]] = {}
        for urn, then in frontier:
            at.setdefault(then, []).append(urn)
        rows: list[tuple[dict[str, Any], int | None]] = []
        for then, urns in at.items():
            params = {"frontier": urns} if then is None else {"frontier": urns, "asOf": then}
            rows += ((r, then) for r in self.store.run(self.steps[then is not None], params, timeout_ms=timeout_ms))
        if self.renames is not None and frontier:
            rows += self.renames.cross(self.direction, frontier, timeout_ms)
        if datasets:
            rows += ((r, self.as_of) for r in self.store.run(self.dataset_step, {"frontier": datasets, **self.at},
                                                             timeout_ms=timeout_ms))
        return rows

    def _take(self, rows: list[tuple[dict[str, Any], int | None]], level: int, hops: list[Hop],
              seen: set[Reached]) -> list[Reached]:
        """Adds the hops of one level's ``rows`` that ``keep`` accepts to ``hops`` (in a stable order); returns the
        next frontier: the fields they reach first (at the instant the walk goes on from them)."""
        nxt: list[Reached] = []
        # a rename crossed against the walk's direction (a new name's readers of the old one, downstream) after
        # those crossed along it, so that one found both ways in a level reads as it always did
        for r, then in sorted(rows, key=lambda rt: (self._against(rt[0]), rt[0]["from"], rt[0]["urn"])):
            h = Hop.from_row(r, level)
            if self.keep is not None and not self.keep(h):
                continue
            if self.scope is not None:
                shown = self._scoped(h)
                if shown is None:  # hidden: walked on from only through hidden fields
                    if self.scope.through_hidden and (h.urn, then) not in seen:
                        seen.add((h.urn, then))
                        nxt.append((h.urn, then))
                    continue
                h = shown
            if self.renames is None and (self.scope is None or not self.scope.through_hidden):
                # one instant: each edge is found once
                hops.append(h)
            else:  # the same edge, reached again at another instant (a rename: or crossed back), is shown once
                key = _edge_key(h)
                if key not in self.shown:
                    self.shown.add(key)
                    hops.append(h)
            if (h.urn, then) not in seen:
                seen.add((h.urn, then))
                nxt.append((h.urn, then))
        return nxt

    def _against(self, row: dict[str, Any]) -> bool:
        """Whether a step's row crosses a rename against the walk's direction: downstream from the new name to the
        old one, upstream from the old to the new."""
        edge = row.get("edge") or {}
        return edge.get("relation") == RENAMED_FROM and (row["from"] == edge.get("new")) == \
            (self.direction == "downstream")

    def _leads_on(self, frontier: list[Reached], seen: set[Reached]) -> bool:
        """Whether one more step from ``frontier`` reaches a field not ``seen`` along an edge ``keep`` accepts
        (a dataset, reached by a dataset-level edge, leads no further); :class:`QueryTimeout` past the deadline."""
        for batch in chunks(frontier, 1000):
            remaining_ms = self._remaining_ms()
            if remaining_ms <= 0:
                raise QueryTimeout("out of time")
            for r, then in self._one_hop(batch, [], remaining_ms):
                if (r["urn"], then) not in seen and r.get("datasetUrn") is not None and self._goes_to(r) and \
                        (self.keep is None or self.keep(Hop.from_row(r, 0))):
                    return True
        return False

    def _goes_to(self, row: dict[str, Any]) -> bool:
        """Whether the walk may go to the field a step's row reaches (a hidden one: only through hidden fields)."""
        return self.scope is None or self.scope.through_hidden or self.scope.sees(row["urn"])

    def _scoped(self, h: Hop) -> Hop | None:
        """``h`` as the scope shows it: None when it reaches a hidden field (kept in :attr:`hidden`); from a hidden
        field, a hop from the last visible field before it whose edge is only the count of hidden fields between."""
        assert self.scope is not None
        before = self.hidden.get(h.from_urn)
        if not self.scope.sees(h.urn):
            self.hidden.setdefault(h.urn, (before[0], before[1] + 1) if before else (h.from_urn, 1))
            return None
        return h if before is None else replace(h, from_urn=before[0], edge={"hidden": before[1]})


def _edge_key(h: Hop) -> tuple[Any, ...]:
    """The stored edge a hop goes along, whichever way it goes: a rename crossed from its old name and from its new
    one is one edge."""
    e = h.edge
    return (RENAMED_FROM, e.get("old"), e.get("new"), e.get("validFrom")) if h.rename else h.key


__all__ = ["DEFAULT_DEPTH_CAP", "DEFAULT_TIME_BUDGET_S", "Walk"]
