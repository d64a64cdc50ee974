"""The lineage graph: write aspect changes, answer lineage questions. Backend-neutral."""

from __future__ import annotations

import gc
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

from fieldgraph.ingest.events import AspectChange
from fieldgraph.ingest.plan import (
    DatasetState, FieldState, Plan, datasets_to_read, field_urn, plan_changes, resolve_reference,
)
from fieldgraph.normalizers import FieldUrn, UrnError
from fieldgraph.normalizers.urns import DatasetUrn

from . import cypher as cy
from .errors import AmbiguousReferenceError, GraphError, NotFoundError
from .store import GraphStore, QueryTimeout, open_store

DEFAULT_DEPTH_CAP = 50
DEFAULT_TIME_BUDGET_S = 10.0


@dataclass
class Hop:
    """One lineage edge found by a walk: ``urn`` reached from ``from_urn`` at ``depth``."""

    from_urn: str
    urn: str
    depth: int
    datasetUrn: Optional[str]
    fieldPath: Optional[str]
    edge: dict[str, Any]
    placeholder: bool = False
    removed: bool = False
    ambiguous: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"from": self.from_urn, "urn": self.urn, "depth": self.depth, "dataset": self.datasetUrn,
                "fieldPath": self.fieldPath, "placeholder": self.placeholder, "removed": self.removed,
                "ambiguous": self.ambiguous, "edge": self.edge}


@dataclass
class LineageResult:
    start: str
    direction: str
    hops: list[Hop] = field(default_factory=list)
    partial: bool = False
    reason: Optional[str] = None  # why partial: depth cap, time budget
    depth: Optional[int] = None

    def path_to(self, urn: str) -> list[str]:
        """The field URNs from the start to ``urn`` along the walk (first way found)."""
        parent = {}
        for h in self.hops:
            parent.setdefault(h.urn, h.from_urn)
        path = [urn]
        while path[-1] != self.start and path[-1] in parent:
            path.append(parent[path[-1]])
        return list(reversed(path))

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "direction": self.direction, "depth": self.depth, "partial": self.partial,
                "reason": self.reason, "hops": [h.to_json() for h in self.hops]}


@dataclass
class IngestReport:
    events: int = 0
    counts: Counter = field(default_factory=Counter)
    ambiguous: list[tuple[str, str, list[str]]] = field(default_factory=list)


class LineageGraph:
    """Field-level lineage on a :class:`GraphStore`."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    @classmethod
    def open(cls, uri: str | None = None, **kw: Any) -> "LineageGraph":
        return cls(open_store(uri, **kw))

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "LineageGraph":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- writes ----

    def read_state(self, dataset_urns: Sequence[str]) -> dict[str, DatasetState]:
        out: dict[str, DatasetState] = {}
        for i in range(0, len(dataset_urns), 500):
            for row in self.store.read_state(dataset_urns[i:i + 500]):
                st = DatasetState.from_compact(row)
                out[st.urn] = st
        return out

    def plan(self, changes: Sequence[AspectChange]) -> Plan:
        """Read the state the batch needs and plan it (no writes)."""
        return plan_changes(changes, self.read_state(datasets_to_read(changes)))

    def apply(self, plan: Plan) -> None:
        for name, rows in plan.steps():
            stmt = cy.statement(name)
            if "$rows" in stmt:
                self.store.run_rows(stmt, rows)
            else:
                self.store.run(stmt, write=True)

    def write(self, changes: Sequence[AspectChange]) -> Plan:
        """Plan and apply one batch of changes."""
        plan = self.plan(changes)
        self.apply(plan)
        return plan

    def ingest(self, changes: Iterable[AspectChange], *, batch_events: int = 1000,
               progress: Callable[[int], None] | None = None) -> IngestReport:
        """Plan and apply ``changes`` in batches of ``batch_events``."""
        report = IngestReport()
        with gc_paused():
            for batch in _chunks(changes, batch_events):
                plan = self.write(batch)
                report.counts.update(plan.counts)
                report.ambiguous.extend(plan.ambiguous)
                report.events += len(batch)
                if progress:
                    progress(len(batch))
        return report

    # ---- naming things ----

    def resolve_field(self, name: str) -> str:
        """The URN of the field a user names: a datasetField/schemaField URN whose path may be v2, v1 or slash."""
        try:
            f = FieldUrn.parse(name)
        except UrnError as exc:
            raise NotFoundError(f"{name!r} is not a field URN ({exc.reason}); expected "
                                "urn:li:datasetField:(<datasetUrn>,<fieldPath>) or urn:li:schemaField:(...)") from None
        ds = str(f.dataset)
        state = self.read_state([ds]).get(ds)
        exact = field_urn(ds, f.field_path)
        if state is None:
            raise NotFoundError(f"dataset {ds} is not in the graph")
        if exact in state.fields:
            return exact
        kind, paths = resolve_reference(f.field_path, list(state.fields.values()))
        if kind == "ambiguous":
            raise AmbiguousReferenceError(name, paths)
        if kind == "unknown":
            raise NotFoundError(f"dataset {ds} has no field {f.field_path!r} "
                                f"({sum(not x.placeholder for x in state.fields.values())} fields known)")
        return field_urn(ds, paths[0])

    def resolve_node(self, name: str) -> tuple[str, str]:
        """(``field`` or ``dataset``, urn) for a field or dataset URN."""
        if name.startswith("urn:li:dataset:"):
            try:
                ds = str(DatasetUrn.parse(name))
            except UrnError as exc:
                raise NotFoundError(str(exc)) from None
            if not self.read_state([ds]):
                raise NotFoundError(f"dataset {ds} is not in the graph")
            return "dataset", ds
        return "field", self.resolve_field(name)

    # ---- walks ----

    def _walk(self, starts: list[str], direction: str, depth: int | None, time_budget_s: float,
              dataset_starts: Sequence[str] = ()) -> LineageResult:
        cap = depth or DEFAULT_DEPTH_CAP
        step = cy.statement("upstream_step" if direction == "upstream" else "downstream_step")
        res = LineageResult(starts[0] if starts else (dataset_starts[0] if dataset_starts else ""), direction,
                            depth=depth)
        seen = set(starts) | set(dataset_starts)
        frontier = list(starts)
        deadline = time.monotonic() + time_budget_s
        level = 0
        extra = list(dataset_starts)
        while (frontier or extra) and level < cap:
            level += 1
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms <= 0:
                res.partial, res.reason = True, f"time budget of {time_budget_s:g}s reached at depth {level - 1}"
                return res
            try:
                rows = self.store.run(step, {"frontier": frontier}, timeout_ms=remaining_ms) if frontier else []
                if extra:
                    rows += self.store.run(cy.statement("dataset_downstream_step"), {"frontier": extra},
                                           timeout_ms=remaining_ms)
                    extra = []
            except QueryTimeout:
                res.partial, res.reason = True, f"time budget of {time_budget_s:g}s reached at depth {level}"
                return res
            nxt: list[str] = []
            for r in sorted(rows, key=lambda r: (r["from"], r["urn"])):
                res.hops.append(Hop(r["from"], r["urn"], level, r.get("datasetUrn"), r.get("fieldPath"),
                                    r.get("edge") or {}, bool(r.get("placeholder")), bool(r.get("removed")),
                                    bool(r.get("ambiguous"))))
                if r["urn"] not in seen:
                    seen.add(r["urn"])
                    nxt.append(r["urn"])
            frontier = nxt
        if frontier:
            # is there anything beyond the cap?
            more = self.store.run(step, {"frontier": frontier[:1000]})
            if more:
                res.partial = True
                res.reason = f"depth {'cap ' if not depth else ''}{cap} reached; more lineage lies beyond"
        return res

    def upstream(self, field: str, depth: int | None = None, *, time_budget_s: float = DEFAULT_TIME_BUDGET_S
                 ) -> LineageResult:
        """Fields (and datasets) ``field`` derives from, to ``depth`` hops (None: up to the depth cap)."""
        return self._walk([self.resolve_field(field)], "upstream", depth, time_budget_s)

    def downstream(self, field: str, depth: int | None = None, *, time_budget_s: float = DEFAULT_TIME_BUDGET_S
                   ) -> LineageResult:
        return self._walk([self.resolve_field(field)], "downstream", depth, time_budget_s)

    def impact(self, name: str, depth: int | None = None, *, time_budget_s: float = DEFAULT_TIME_BUDGET_S
               ) -> tuple[LineageResult, dict[str, list[str]]]:
        """Downstream fields of a field or of every field of a dataset, grouped by dataset."""
        kind, urn = self.resolve_node(name)
        if kind == "field":
            res = self._walk([urn], "downstream", depth, time_budget_s)
        else:
            fields = [r["urn"] for r in self.store.run_named("dataset_fields", {"urn": urn})]
            res = self._walk(fields, "downstream", depth, time_budget_s, dataset_starts=[urn])
            res.start = urn
        by_ds: dict[str, list[str]] = {}
        for h in res.hops:
            paths = by_ds.setdefault(h.datasetUrn or "?", [])
            if h.fieldPath not in paths:
                paths.append(h.fieldPath or h.urn)
        return res, by_ds

    def path(self, from_field: str, to_field: str, depth: int | None = None, *,
             time_budget_s: float = DEFAULT_TIME_BUDGET_S) -> tuple[list[str], LineageResult]:
        """A shortest lineage path between two fields (either direction); [] if none within the walk."""
        a, b = self.resolve_field(from_field), self.resolve_field(to_field)
        for direction in ("upstream", "downstream"):
            res = self._walk([a], direction, depth, time_budget_s)
            if any(h.urn == b for h in res.hops):
                return res.path_to(b), res
        return [], res

    # ---- listings ----

    def fields(self, dataset: str) -> list[dict[str, Any]]:
        return self.store.run_named("dataset_fields", {"urn": str(DatasetUrn.parse(dataset))})

    def dataset_lineage(self, dataset: str | None = None) -> list[dict[str, Any]]:
        return self.store.run_named("dataset_lineage", {"urn": str(DatasetUrn.parse(dataset)) if dataset else None})

    def unresolved(self) -> list[dict[str, Any]]:
        return self.store.run_named("unresolved")

    def ambiguous(self) -> list[dict[str, Any]]:
        return self.store.run_named("ambiguous")

    def stats(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for stmt in cy.statements("stats"):
            for row in self.store.run(stmt):
                out.update(row)
        return out

    def query(self, cypher: str, params: dict[str, Any] | None = None, *, write: bool = False
              ) -> list[dict[str, Any]]:
        return self.store.run(cypher, params, write=write)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Bulk writes allocate many short-lived, acyclic objects; with millions of decoded events in
    memory, the cyclic GC's full passes cost more than the work itself. Pause it, then collect once."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _chunks(items: Iterable[Any], n: int) -> Iterable[list[Any]]:
    buf: list[Any] = []
    for x in items:
        buf.append(x)
        if len(buf) >= n:
            yield buf
            buf = []
    if buf:
        yield buf


__all__ = ["GraphError", "Hop", "IngestReport", "LineageGraph", "LineageResult", "FieldState"]
