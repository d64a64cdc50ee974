"""The lineage walk: level by level over a store's one-hop statements, within a depth cap and a time budget.

Now or as of an instant: the one-hop statements (``*_step.cypher``, ``*_step_as_of.cypher``) follow the edges
that hold (held) then. One read transaction for the whole walk where the store has them (Neo4j), timed out with
the budget.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from . import cypher as cy
from .answers import Hop, LineageResult
from .errors import QueryTimeout
from .store import GraphStore
from .write import chunks

DEFAULT_DEPTH_CAP = 50
DEFAULT_TIME_BUDGET_S = 10.0
#: a walk's one-hop statements: (direction, as of an instant) -> statement
_STEPS = {("upstream", False): "upstream_step", ("upstream", True): "upstream_step_as_of",
          ("downstream", False): "downstream_step", ("downstream", True): "downstream_step_as_of",
          ("dataset", False): "dataset_downstream_step", ("dataset", True): "dataset_downstream_step_as_of"}


class Walk:
    """One walk in ``direction`` (``upstream``, ``downstream``), now or ``as_of``; with ``keep``, only the edges it
    accepts. ``deadline`` (``time.monotonic()``): when the budget of ``time_budget_s`` ends (default: that long
    from now; a walk that shares its budget with other work passes the deadline of the whole)."""

    def __init__(self, store: GraphStore, direction: str, *, as_of: int | None = None,
                 keep: Callable[[Hop], bool] | None = None, time_budget_s: float = DEFAULT_TIME_BUDGET_S,
                 deadline: float | None = None) -> None:
        self.store, self.direction, self.as_of, self.keep = store, direction, as_of, keep
        self.time_budget_s = time_budget_s
        self.deadline = time.monotonic() + time_budget_s if deadline is None else deadline
        then = as_of is not None
        self.step = cy.statement(_STEPS[direction, then])
        self.dataset_step = cy.statement(_STEPS["dataset", then])
        self.at: dict[str, Any] = {"asOf": as_of} if then else {}

    def run(self, starts: Sequence[str], depth: int | None, *, dataset_starts: Sequence[str] = (),
            capped: bool = True) -> LineageResult:
        """The walk from the fields ``starts`` (and, one level, from the datasets ``dataset_starts``), to ``depth``
        hops (None: the depth cap). ``capped`` False: no depth cap when ``depth`` is None (each field is expanded
        once, the time budget the only limit), and a walk stopped at ``depth`` is partial only when more edges
        ``keep`` accepts lead on to fields not reached yet."""
        cap = depth or (DEFAULT_DEPTH_CAP if capped else None)
        start = starts[0] if starts else (dataset_starts[0] if dataset_starts else "")
        hops: list[Hop] = []
        seen = {*starts, *dataset_starts}

        def result(reason: str | None = None, *, at_requested_depth: bool = False) -> LineageResult:
            return LineageResult(start, self.direction, tuple(hops), reason is not None, reason, depth,
                                 at_requested_depth, self.as_of)

        with self.store.reading(timeout_ms=max(1, self._remaining_ms())):
            frontier, stopped = self._levels(list(starts), list(dataset_starts), cap, hops, seen)
            if stopped:
                return result(stopped)
            if frontier and cap is not None and (self.keep is None or not capped):
                # is there anything beyond the cap? (a filtered walk at the cap would have to filter the answer
                # too; one at the depth asked for checks that the edges it would follow lead to fields not reached)
                try:
                    more = self._leads_on(frontier, seen) if not capped else \
                        bool(self.store.run(self.step, {"frontier": frontier[:1000], **self.at}))
                except QueryTimeout:
                    return result(self._out_of_time(cap))
                if more:
                    return result(f"depth {'cap ' if not depth else ''}{cap} reached; more lineage lies beyond",
                                  at_requested_depth=bool(depth))
            return result()

    def _levels(self, frontier: list[str], datasets: list[str], cap: int | None, hops: list[Hop],
                seen: set[str]) -> tuple[list[str], str | None]:
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

    def _one_hop(self, frontier: list[str], datasets: list[str], timeout_ms: int) -> list[dict[str, Any]]:
        """The rows of one step from the fields ``frontier`` and the datasets ``datasets``."""
        rows = self.store.run(self.step, {"frontier": frontier, **self.at}, timeout_ms=timeout_ms) if frontier else []
        if datasets:
            rows += self.store.run(self.dataset_step, {"frontier": datasets, **self.at}, timeout_ms=timeout_ms)
        return rows

    def _take(self, rows: list[dict[str, Any]], level: int, hops: list[Hop], seen: set[str]) -> list[str]:
        """Adds the hops of one level's ``rows`` that ``keep`` accepts to ``hops`` (in a stable order); returns the
        next frontier: the fields they reach first."""
        nxt: list[str] = []
        for r in sorted(rows, key=lambda r: (r["from"], r["urn"])):
            h = Hop.from_row(r, level)
            if self.keep is not None and not self.keep(h):
                continue
            hops.append(h)
            if h.urn not in seen:
                seen.add(h.urn)
                nxt.append(h.urn)
        return nxt

    def _leads_on(self, frontier: list[str], seen: set[str]) -> bool:
        """Whether one more step from ``frontier`` reaches a field not ``seen`` along an edge ``keep`` accepts
        (a dataset, reached by a dataset-level edge, leads no further); :class:`QueryTimeout` past the deadline."""
        for batch in chunks(frontier, 1000):
            remaining_ms = self._remaining_ms()
            if remaining_ms <= 0:
                raise QueryTimeout("out of time")
            for r in self.store.run(self.step, {"frontier": batch, **self.at}, timeout_ms=remaining_ms):
                if r["urn"] not in seen and r.get("datasetUrn") is not None and \
                        (self.keep is None or self.keep(Hop.from_row(r, 0))):
                    return True
        return False


__all__ = ["DEFAULT_DEPTH_CAP", "DEFAULT_TIME_BUDGET_S", "Walk"]
