"""The lineage graph: write aspect changes, answer lineage questions, now or as of any instant. Backend-neutral.

Every question takes ``as_of`` (ms since the epoch; None: now). As of an instant, a walk follows the edges that
held then (present ``DataDerivedFrom`` and past ``PreviouslyDerivedFrom`` edges whose interval holds it) and
reports each field as it was then (listed, removed, or a reference no schema listed yet: a placeholder);
tags and terms are the schema's at that instant (hand-set tags have no history: as they are now).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from fieldgraph.bulk import gc_paused
from fieldgraph.changes import Change, carries_metadata
from fieldgraph.errors import InputError
from fieldgraph.normalizers import FieldUrn, UrnError
from fieldgraph.normalizers.urns import DatasetUrn

from . import cypher as cy
from .errors import AmbiguousReferenceError, NotFoundError, QueryTimeout
from .history import STATE_PROPS
from .plan import DatasetState, datasets_to_read, field_urn, resolve_reference, simple_ref
from .runs import RunLineage
from .sql import Derived, derive_each
from .steps import Plan
from .store import GraphStore, open_store
from .write import WriteMode, Writer, chunks

DEFAULT_DEPTH_CAP = 50
#: a walk's one-hop statements: (direction, as of an instant) -> statement
_STEPS = {("upstream", False): "upstream_step", ("upstream", True): "upstream_step_as_of",
          ("downstream", False): "downstream_step", ("downstream", True): "downstream_step_as_of",
          ("dataset", False): "dataset_downstream_step", ("dataset", True): "dataset_downstream_step_as_of"}
DEFAULT_TIME_BUDGET_S = 10.0


@dataclass
class Hop:
    """One lineage edge found by a walk: ``urn`` reached from ``from_urn`` at ``depth``."""

    from_urn: str
    urn: str
    depth: int
    datasetUrn: str | None
    fieldPath: str | None
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
    reason: str | None = None  # why partial: depth cap, time budget
    depth: int | None = None
    #: partial only because the walk stopped at the depth the caller asked for (more lies beyond)
    at_requested_depth: bool = False

    @property
    def cut_short(self) -> bool:
        """Whether the walk stopped before the end on a limit the caller did not choose (cap, time budget)."""
        return self.partial and not self.at_requested_depth

    def path_to(self, urn: str) -> list[str]:
        """The field URNs from the start to ``urn`` along the walk (first way found)."""
        parent: dict[str, str] = {}
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
    counts: Counter[str] = field(default_factory=Counter)
    ambiguous: list[tuple[str, str, list[str]]] = field(default_factory=list)
    #: events the graph refused, none of them written: (origin, reason)
    refused: list[tuple[str, str]] = field(default_factory=list)


def _events(changes: Iterable[Change]) -> Iterator[list[Change]]:
    """The changes grouped by event: consecutive changes of one ``origin`` (each change without one alone)."""
    for origin, group in groupby(changes, key=lambda c: c.origin):
        if origin:
            yield list(group)
        else:
            yield from ([c] for c in group)


class LineageGraph:
    """Field-level lineage on a :class:`GraphStore`."""

    def __init__(self, store: GraphStore, *, non_propagating: Iterable[str] = ()) -> None:
        """``non_propagating``: tags (``Deprecated``, ``urn:li:tag:Deprecated``) and glossary terms
        (``urn:li:glossaryTerm:X``) that stay on the fields that have them, never inherited downstream."""
        self.store = store
        self.non_propagating = frozenset(label_of(t) for t in non_propagating if t.strip())

    @classmethod
    def open(cls, uri: str | None = None, *, non_propagating: Iterable[str] = (), **kw: Any) -> LineageGraph:
        return cls(open_store(uri, **kw), non_propagating=non_propagating)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> LineageGraph:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- writes (the one write path: fieldgraph.graph.write) ----

    def writer(self, mode: WriteMode = WriteMode.SINGLE) -> Writer:
        return Writer(self.store, mode)

    def read_state(self, dataset_urns: Sequence[str]) -> dict[str, DatasetState]:
        return Writer(self.store).read_state(dataset_urns)

    def write(self, changes: Sequence[Change], *, mode: WriteMode = WriteMode.SINGLE) -> Plan:
        """Plan and apply one batch of changes."""
        return Writer(self.store, mode).write(changes)

    def ingest(self, changes: Iterable[Change], *, batch_events: int = 1000, mode: WriteMode = WriteMode.SINGLE,
               progress: Callable[[int], None] | None = None) -> IngestReport:
        """Plan and apply ``changes`` in batches of ``batch_events`` events. The changes of one event (one
        ``origin``) go together: an event the graph refuses is left out whole, with its reason in the report, and
        the rest is written."""
        report = IngestReport()
        writer = Writer(self.store, mode)
        with gc_paused():
            for batch in chunks(_events(changes), max(1, batch_events)):
                plan, refused = writer.write_each(batch)
                report.counts.update(plan.counts)
                report.ambiguous.extend(plan.ambiguous)
                report.refused.extend((batch[i][0].origin, str(exc)) for i, exc in refused)
                n = sum(map(len, batch))
                report.events += n
                if progress:
                    progress(n)
        return report

    def derive_sql(self, changes: Sequence[Change]) -> list[Change | Derived]:
        """What writing ``changes`` would make of their SQL changes (no writes): each as a :class:`Derived`
        (its job lineage and the names it could not place), against the schemas the graph holds."""
        return derive_each(changes, self.read_state(datasets_to_read(changes)))

    # ---- naming things ----

    def resolve_field(self, name: str) -> str:
        """The URN of the field a user names: a datasetField/schemaField URN whose path may be v2, v1 or slash."""
        try:
            f = FieldUrn.parse(name)
        except UrnError as exc:
            raise NotFoundError(f"{name!r} is not a field URN ({exc.reason}); expected "
                                "urn:li:datasetField:(<datasetUrn>,<fieldPath>) or urn:li:schemaField:(...)") from exc
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
                raise NotFoundError(str(exc)) from exc
            if not self.read_state([ds]):
                raise NotFoundError(f"dataset {ds} is not in the graph")
            return "dataset", ds
        return "field", self.resolve_field(name)

    # ---- walks ----

    def _walk(self, starts: list[str], direction: str, depth: int | None, time_budget_s: float,
              dataset_starts: Sequence[str] = (), keep: Callable[[Hop], bool] | None = None,
              as_of: int | None = None) -> LineageResult:
        """A level-by-level walk (depth cap, time budget); with ``keep``, only the edges it accepts; with
        ``as_of``, over the edges that held then."""
        res = self._walk_edges(starts, direction, depth, time_budget_s, dataset_starts, keep, as_of)
        if as_of is not None:
            states = self._states([h.urn for h in res.hops if h.datasetUrn is not None], as_of)
            for h in res.hops:
                if h.datasetUrn is not None:
                    st = states.get(h.urn)
                    h.placeholder, h.removed = st is None, bool(st and st["removed"])
        return res

    def _walk_edges(self, starts: list[str], direction: str, depth: int | None, time_budget_s: float,
                    dataset_starts: Sequence[str], keep: Callable[[Hop], bool] | None,
                    as_of: int | None, *, capped: bool = True, deadline: float | None = None) -> LineageResult:
        """The walk. ``capped`` False: no depth cap when ``depth`` is None (each field is expanded once, the time
        budget the only limit), and a walk stopped at ``depth`` is partial only when more edges ``keep`` accepts
        lead on to fields not reached yet. ``deadline`` (``time.monotonic()``): when the budget ends, for a walk
        that shares it with other work (default: ``time_budget_s`` from now)."""
        cap = depth or (DEFAULT_DEPTH_CAP if capped else None)
        then = as_of is not None
        step = cy.statement(_STEPS[direction, then])
        at = {"asOf": as_of} if then else {}
        res = LineageResult(starts[0] if starts else (dataset_starts[0] if dataset_starts else ""), direction,
                            depth=depth)
        seen = set(starts) | set(dataset_starts)
        frontier = list(starts)
        if deadline is None:
            deadline = time.monotonic() + time_budget_s

        def out_of_time(level: int) -> LineageResult:
            res.partial, res.reason = True, f"time budget of {time_budget_s:g}s reached at depth {level}"
            return res

        # one read transaction for every step where the store has them (Neo4j), timed out with the budget
        with self.store.reading(timeout_ms=max(1, int((deadline - time.monotonic()) * 1000))):
            level = 0
            extra = list(dataset_starts)
            while (frontier or extra) and (cap is None or level < cap):
                level += 1
                remaining_ms = int((deadline - time.monotonic()) * 1000)
                if remaining_ms <= 0:
                    return out_of_time(level - 1)
                try:
                    rows = self.store.run(step, {"frontier": frontier, **at}, timeout_ms=remaining_ms) \
                        if frontier else []
                    if extra:
                        rows += self.store.run(cy.statement(_STEPS["dataset", then]),
                                               {"frontier": extra, **at}, timeout_ms=remaining_ms)
                        extra = []
                except QueryTimeout:
                    return out_of_time(level)
                nxt: list[str] = []
                for r in sorted(rows, key=lambda r: (r["from"], r["urn"])):
                    h = _hop(r, level)
                    if keep is not None and not keep(h):
                        continue
                    res.hops.append(h)
                    if r["urn"] not in seen:
                        seen.add(r["urn"])
                        nxt.append(r["urn"])
                frontier = nxt
            if frontier and cap is not None and (keep is None or not capped):
                # is there anything beyond the cap? (a filtered walk at the cap would have to filter the answer
                # too; one at the depth asked for checks that the edges it would follow lead to fields not reached)
                try:
                    more = self._leads_on(step, at, frontier, seen, keep, deadline) if not capped else \
                        bool(self.store.run(step, {"frontier": frontier[:1000], **at}))
                except QueryTimeout:
                    return out_of_time(cap)
                if more:
                    res.partial, res.at_requested_depth = True, bool(depth)
                    res.reason = f"depth {'cap ' if not depth else ''}{cap} reached; more lineage lies beyond"
            return res

    def _leads_on(self, step: str, at: dict[str, Any], frontier: list[str], seen: set[str],
                  keep: Callable[[Hop], bool] | None, deadline: float) -> bool:
        """Whether one more ``step`` from ``frontier`` reaches a field not ``seen`` along an edge ``keep`` accepts
        (a dataset, reached by a dataset-level edge, leads no further); :class:`QueryTimeout` past ``deadline``."""
        for batch in chunks(frontier, 1000):
            remaining_ms = int((deadline - time.monotonic()) * 1000)
            if remaining_ms <= 0:
                raise QueryTimeout("out of time")
            for r in self.store.run(step, {"frontier": batch, **at}, timeout_ms=remaining_ms):
                if r["urn"] not in seen and r.get("datasetUrn") is not None and (keep is None or keep(_hop(r, 0))):
                    return True
        return False

    def upstream(self, field: str, depth: int | None = None, *, time_budget_s: float = DEFAULT_TIME_BUDGET_S,
                 as_of: int | None = None) -> LineageResult:
        """Fields (and datasets) ``field`` derives from, to ``depth`` hops (None: up to the depth cap)."""
        return self._walk([self._existed(self.resolve_field(field), as_of)], "upstream", depth, time_budget_s,
                          as_of=as_of)

    def downstream(self, field: str, depth: int | None = None, *, time_budget_s: float = DEFAULT_TIME_BUDGET_S,
                   as_of: int | None = None) -> LineageResult:
        return self._walk([self._existed(self.resolve_field(field), as_of)], "downstream", depth, time_budget_s,
                          as_of=as_of)

    def impact(self, name: str, depth: int | None = None, *, time_budget_s: float = DEFAULT_TIME_BUDGET_S,
               as_of: int | None = None) -> tuple[LineageResult, dict[str, list[str]]]:
        """Downstream fields of a field or of every field of a dataset, grouped by dataset."""
        kind, urn = self.resolve_node(name)
        if kind == "field":
            res = self._walk([self._existed(urn, as_of)], "downstream", depth, time_budget_s, as_of=as_of)
        else:
            fields = [r["urn"] for r in self.fields(urn, as_of=as_of)]
            res = self._walk(fields, "downstream", depth, time_budget_s, dataset_starts=[urn], as_of=as_of)
            res.start = urn
        by_ds: dict[str, list[str]] = {}
        for h in res.hops:
            paths = by_ds.setdefault(h.datasetUrn or "?", [])
            if (h.fieldPath or h.urn) not in paths:
                paths.append(h.fieldPath or h.urn)
        return res, by_ds

    def path(self, from_field: str, to_field: str, depth: int | None = None, *,
             time_budget_s: float = DEFAULT_TIME_BUDGET_S, as_of: int | None = None) -> tuple[list[str], LineageResult]:
        """A shortest lineage path between two fields (either direction); [] if none within the walk."""
        a, b = (self._existed(self.resolve_field(f), as_of) for f in (from_field, to_field))
        for direction in ("upstream", "downstream"):
            res = self._walk([a], direction, depth, time_budget_s, as_of=as_of)
            if any(h.urn == b for h in res.hops):
                return res.path_to(b), res
        return [], res

    # ---- time-ranged lineage (CDAP's field lineage API) ----

    def field_lineage(self, field: str, direction: str = "incoming", start: int | None = None,
                      end: int | None = None, depth: int = 1, *, time_budget_s: float = DEFAULT_TIME_BUDGET_S
                      ) -> dict[str, Any]:
        """A field's ``incoming`` or ``outgoing`` lineage within ``[start, end)`` (ms; None: open).

        Like CDAP's ``/lineage/fields/<field>?direction=...&start=...&end=...``: ``summary`` is the fields reached,
        grouped by dataset; ``operations``, per CDAP operation set run in the range, the programs that ran it (the
        latest run of each, newest first) and the operations that computed the field (incoming) or used it
        (outgoing), in topological order, and per other job or query (DataHub, OpenLineage) its run and
        transformation; ``dropped`` (outgoing) the transforms that drop the field.

        CDAP lineage is answered from the runs inside the range (:mod:`fieldgraph.graph.runs`); other edges count
        when they were seen in it: ``firstSeen < end`` and ``lastSeen >= start`` (edges without times always
        count). ``depth`` hops (default 1: the datasets next to the field).
        """
        if direction not in ("incoming", "outgoing"):
            raise InputError(f"direction must be incoming or outgoing, got {direction!r}")
        if start is not None and end is not None and start >= end:
            raise InputError(f"start {start} is not before end {end}")
        urn = self.resolve_field(field)
        runs = RunLineage(self.store, direction, start, end)

        def keep(h: Hop) -> bool:
            e = h.edge
            if e.get("operationSet"):  # a CDAP run's edge: kept when a run in the range ties the two fields
                return runs.connects(h.from_urn, h.urn, e.get("source"))
            first = e.get("firstSeen", e.get("createdAt"))
            last = e.get("lastSeen", first)
            return (end is None or first is None or first < end) and (start is None or last is None or last >= start)

        res = self._walk([urn], "upstream" if direction == "incoming" else "downstream", depth, time_budget_s,
                         keep=keep)
        summary: dict[str, list[str]] = {}
        others: dict[str, dict[str, Any]] = {}
        for h in res.hops:
            paths = summary.setdefault(h.datasetUrn or h.urn, [])
            if (h.fieldPath or h.urn) not in paths:
                paths.append(h.fieldPath or h.urn)
            e = h.edge
            if h.depth == 1 and not e.get("operationSet"):
                op = {"sourceFormat": e.get("sourceFormat"), "transformation": e.get("transformation"),
                      "programs": [{"program": e.get("program") or e.get("query") or e.get("source"),
                                    "run": e.get("run"), "runTime": e.get("runTime")}], "operations": []}
                others.setdefault(repr(op), op)
        mine = runs.of(urn)
        return {"field": urn, "direction": direction, "start": start, "end": end, "depth": depth,
                "partial": res.partial, "reason": res.reason,
                "summary": [{"dataset": d, "fields": sorted(f)} for d, f in sorted(summary.items())],
                "operations": mine.operations + list(others.values()), "dropped": mine.dropped,
                "edges": [h.to_json() for h in res.hops]}

    # ---- tags, glossary terms and their propagation (CDAP's propagateMetadata) ----

    def tag(self, field: str, add: Sequence[str] = (), remove: Sequence[str] = (), *,
            propagate: bool = True) -> HandSetLabels:
        """Add or remove tags (``PII``, ``urn:li:tag:PII``) or glossary terms (``urn:li:glossaryTerm:X``)
        set by hand on a field; returns its hand-set labels (those that propagate, then those that do not;
        ``.local``: the latter). ``propagate`` False: the labels added stay on this field (its own, never
        inherited downstream); adding a label moves it between the two kinds. Removing removes it from either."""
        urn = self.resolve_field(field)
        rows = self.store.run(cy.statement("set_field_tags"), {"rows": [
            {"urn": urn, "add": list(dict.fromkeys(label_of(t) for t in add)), "remove": [label_of(t) for t in remove],
             "local": not propagate}]}, write=True)
        if not rows:
            return HandSetLabels()
        return HandSetLabels(rows[0]["manualTags"] or [], local=rows[0]["localTags"] or [])

    def _own_labels(self, urns: Sequence[str], as_of: int | None = None) -> dict[str, dict[str, Any]]:
        """Each field's own tags and terms (``labels``: the schema's, those set in DataHub's UI or API
        (``editableSchemaMetadata``: as they are now, also as of an instant), then those set by hand) and, among them,
        those that do not propagate (``local``: set by hand with ``propagate=False``, or named by the graph's
        ``non_propagating`` setting), with its ``datasetUrn`` and ``fieldPath``. The one place a field's own
        labels are put together: ``tags``, ``tagged`` and ``field`` read them here."""
        out: dict[str, dict[str, Any]] = {}
        states = self._states(urns, as_of) if as_of is not None else {}
        editable: dict[str, dict[str, list[str]]] = {}  # per dataset, parsed once
        for i in range(0, len(urns), 1000):
            for r in self.store.run(cy.statement("field_labels"), {"frontier": list(urns[i:i + 1000])}):
                if as_of is not None:  # the schema's tags and terms then; hand-set ones as they are now
                    then = states.get(r["urn"]) or {}
                    r = {**r, "tags": then.get("tags"), "glossaryTerms": then.get("glossaryTerms")}
                if r["datasetUrn"] not in editable:
                    editable[r["datasetUrn"]] = editable_labels(r["editableLabels"])
                spreading = [*(r["tags"] or []), *(f"urn:li:glossaryTerm:{t}" for t in r["glossaryTerms"] or []),
                             *editable[r["datasetUrn"]].get(r["simplePath"] or "", ()), *(r["manualTags"] or [])]
                labels = list(dict.fromkeys([*spreading, *(r["localTags"] or [])]))
                propagating = {t for t in spreading if t not in self.non_propagating}
                out[r["urn"]] = {"datasetUrn": r["datasetUrn"], "fieldPath": r["fieldPath"], "labels": labels,
                                 "local": [t for t in labels if t not in propagating]}
        return out

    def _editable_labeled(self, label: str) -> list[str]:
        """The fields whose dataset's ``editableSchemaMetadata`` gives them ``label``."""
        out: list[str] = []
        parsed: dict[str, dict[str, list[str]]] = {}
        for r in self.store.run(cy.statement("editable_labeled_fields"), {"needle": json.dumps(label)}):
            if r["editableLabels"] not in parsed:  # one dataset's fields share it: parsed once
                parsed[r["editableLabels"]] = editable_labels(r["editableLabels"])
            if label in parsed[r["editableLabels"]].get(r["simplePath"] or "", ()):
                out.append(r["urn"])
        return out

    def tags(self, field: str, *, indirect: bool = False, depth: int | None = None,
             time_budget_s: float = DEFAULT_TIME_BUDGET_S, as_of: int | None = None) -> dict[str, Any]:
        """A field's own tags and terms (``own``; ``local``: those of them that do not propagate), and those it
        inherits (``inherited``) along the edges that carry metadata (identity and direct edges; not masking
        ones; indirect ones only with ``indirect``), each with the upstream field it comes from, how far up that
        is and the path. Computed from the edges that hold now (or held at ``as_of``).

        The walk goes as far up as lineage goes (each field once; a field never inherits from itself through a
        cycle), or ``depth`` hops. ``partial`` (with its ``reason``) when it stopped before the end: out of
        ``time_budget_s``, or at ``depth`` with more lineage beyond."""
        deadline = time.monotonic() + time_budget_s
        urn = self._existed(self.resolve_field(field), as_of)
        res = self._walk_edges([urn], "upstream", depth, time_budget_s, (),
                               lambda h: carries_metadata(h.edge, indirect=indirect), as_of,
                               capped=False, deadline=deadline)
        dist: dict[str, int] = {}
        for h in res.hops:
            if h.datasetUrn is not None and h.urn != urn:
                dist.setdefault(h.urn, h.depth)
        labels = self._own_labels([urn, *dist], as_of)
        mine = labels.get(urn, {})
        inherited = []
        for u, d in sorted(dist.items(), key=lambda kv: (kv[1], kv[0])):
            theirs = labels.get(u, {})
            for label in theirs.get("labels", []):
                if label not in theirs["local"]:
                    inherited.append({"label": label, "from": u, "distance": d, "path": res.path_to(u)})
        return {"field": urn, "own": mine.get("labels", []), "local": mine.get("local", []), "inherited": inherited,
                "partial": res.partial, "reason": res.reason}

    def tagged(self, label: str, *, indirect: bool = False, depth: int | None = None,
               time_budget_s: float = DEFAULT_TIME_BUDGET_S, as_of: int | None = None) -> dict[str, Any]:
        """Every field that carries a tag or term, its own or inherited (e.g. where PII flows):
        ``{"label", "fields", "partial", "reason"}``, ``fields`` a row per field with ``own``, ``from`` (the
        fields the label comes from: the field itself first when it is its own) and ``distance`` (hops from the
        nearest of them).

        One walk downstream from every field whose own label propagates (not a ``non_propagating`` one, not
        set by hand with ``propagate=False``), as far as lineage goes (each field once) or ``depth`` hops, within
        ``time_budget_s`` for the whole call. ``partial`` (with its ``reason``) when the walk stopped before
        the end."""
        deadline = time.monotonic() + time_budget_s
        norm = label_of(label)
        term = norm.removeprefix("urn:li:glossaryTerm:") if norm.startswith("urn:li:glossaryTerm:") else None
        rows = self.store.run(cy.statement("labeled_fields" if as_of is None else "labeled_fields_as_of"),
                              {"rows": [{"tag": None if term else norm, "term": term}],
                               **({} if as_of is None else {"asOf": as_of})})
        sources = sorted({*(r["urn"] for r in rows), *self._editable_labeled(norm)})
        info = self._own_labels(sources, as_of)
        spreading = [] if norm in self.non_propagating else \
            [u for u in sources if norm not in info.get(u, {}).get("local", ())]
        res = self._walk_edges(spreading, "downstream", depth, time_budget_s, (),
                               lambda h: carries_metadata(h.edge, indirect=indirect), as_of,
                               capped=False, deadline=deadline) if spreading else LineageResult("", "downstream")
        carriers: dict[str, dict[str, Any]] = {
            u: {"urn": u, "own": True, "from": [u], "distance": 0, "label": norm,
                "dataset": info.get(u, {}).get("datasetUrn"), "fieldPath": info.get(u, {}).get("fieldPath")}
            for u in sources}
        nexts: dict[str, list[str]] = {}
        for h in res.hops:  # level by level: the first hop to a field is from the nearest source
            if h.datasetUrn is None:
                continue
            nexts.setdefault(h.from_urn, []).append(h.urn)
            carriers.setdefault(h.urn, {"urn": h.urn, "own": False, "from": [], "distance": h.depth, "label": norm,
                                        "dataset": h.datasetUrn, "fieldPath": h.fieldPath})
        # where each field's label comes from: the sources that reach it (in memory, over the edges walked)
        for s in spreading:
            reached, todo = {s}, [s]
            while todo:
                for v in nexts.get(todo.pop(), ()):
                    if v not in reached:
                        reached.add(v)
                        todo.append(v)
                        carriers[v]["from"].append(s)
        fields = sorted(carriers.values(), key=lambda c: (c["distance"], c["urn"]))
        return {"label": norm, "fields": fields, "partial": res.partial, "reason": res.reason}

    # ---- listings ----

    def fields(self, dataset: str, *, as_of: int | None = None) -> list[dict[str, Any]]:
        """A dataset's fields, now or as they were at ``as_of``: listed, removed (listed by an earlier schema),
        or placeholders (references no schema listed, while an edge refers to them)."""
        urn = str(DatasetUrn.parse(dataset))
        if as_of is None:
            return self.store.run_named("dataset_fields", {"urn": urn})
        out: list[dict[str, Any]] = []
        unlisted: list[dict[str, Any]] = []
        for r in self.store.run_named("dataset_fields_as_of", {"urn": urn, "asOf": as_of}):
            then = _state_then(r, as_of)
            if then is None:
                unlisted.append(r)
                continue
            out.append({"urn": r["urn"], "fieldPath": r["fieldPath"], "simplePath": r["simplePath"],
                        **{k: then.get(k) for k in _FIELD_COLUMNS}, "removed": bool(then["removed"]),
                        "placeholder": False})
        presence = self._presence([r["urn"] for r in unlisted], as_of)
        for r in unlisted:
            p = presence.get(r["urn"], {})
            if p.get("referencedThen") or _at_or_before(p.get("firstJobReference"), as_of):  # a job declared it
                out.append({"urn": r["urn"], "fieldPath": r["fieldPath"], "simplePath": simple_ref(r["fieldPath"]),
                            **dict.fromkeys(_FIELD_COLUMNS), "removed": False, "placeholder": True})
        return sorted(out, key=lambda r: r["fieldPath"])

    def field(self, name: str, *, as_of: int | None = None) -> dict[str, Any]:
        """One field as it is now (or was at ``as_of``): its dataset, path, state and tags (own and inherited)."""
        urn = self._existed(self.resolve_field(name), as_of)
        dataset = str(FieldUrn.parse(urn).dataset)
        row = next((r for r in self.fields(dataset, as_of=as_of) if r["urn"] == urn),
                   {"urn": urn, "placeholder": True, "removed": False})
        tags = self.tags(urn, as_of=as_of)
        return {**row, "dataset": dataset, "fieldPath": row.get("fieldPath") or FieldUrn.parse(urn).field_path,
                "placeholder": bool(row.get("placeholder")), "removed": bool(row.get("removed")),
                "tags": {"own": tags["own"], "local": tags["local"], "inherited": tags["inherited"]}}

    def search(self, text: str, limit: int = 20) -> dict[str, list[dict[str, Any]]]:
        """Datasets whose name and fields whose path (v2 or simple) contain ``text``, case-insensitively."""
        q = text.strip().lower()
        if not q:
            raise InputError("a search needs some text")
        params = {"q": q, "limit": max(1, limit)}
        return {"datasets": self.store.run_named("search_datasets", params),
                "fields": self.store.run_named("search_fields", params)}

    def _states(self, urns: Sequence[str], as_of: int) -> dict[str, dict[str, Any] | None]:
        """Each field's state at ``as_of`` (``removed`` and :data:`STATE_PROPS`); None: no schema listed it yet."""
        out: dict[str, dict[str, Any] | None] = {}
        for batch in chunks(dict.fromkeys(urns), 1000):
            for r in self.store.run_named("field_states_as_of", {"urns": batch, "asOf": as_of}):
                out[r["urn"]] = _state_then(r, as_of)
        return out

    def _presence(self, urns: Sequence[str], as_of: int) -> dict[str, dict[str, Any]]:
        """When each field came into the graph (``listedFrom``, ``firstReference``, ``firstJobReference``) and
        whether an edge refers to it at ``as_of`` (``referencedThen``)."""
        out: dict[str, dict[str, Any]] = {}
        for batch in chunks(urns, 1000):
            for r in self.store.run_named("field_presence_as_of", {"urns": batch, "asOf": as_of}):
                out[r["urn"]] = r
        return out

    def _existed(self, urn: str, as_of: int | None) -> str:
        """``urn``, if the field was in the graph at ``as_of`` (listed by a schema, or referenced by lineage)."""
        if as_of is None:
            return urn
        p = self._presence([urn], as_of).get(urn, {})
        if _at_or_before(p.get("listedFrom"), as_of) or _at_or_before(p.get("firstReference"), as_of):
            return urn
        raise NotFoundError(f"field {urn} was not in the graph yet at {as_of} (ms since the epoch)")

    def diff_lineage(self, dataset: str, t1: int, t2: int) -> dict[str, Any]:
        """What changed in a dataset's fields and in the lineage edges into and out of them between two instants:
        fields added, removed (no longer listed) and changed (type, nullability, description, key, tags, terms);
        edges added and removed (an edge whose properties changed: removed and added)."""
        if t1 > t2:
            raise InputError(f"--from {t1} is after --to {t2}")
        urn = str(DatasetUrn.parse(dataset))
        if not self.read_state([urn]):
            raise NotFoundError(f"dataset {urn} is not in the graph")

        def listed(t: int) -> dict[str, dict[str, Any]]:
            return {r["fieldPath"]: r for r in self.fields(urn, as_of=t) if not r["placeholder"] and not r["removed"]}

        def edges(t: int) -> dict[tuple[Any, ...], dict[str, Any]]:
            rows = self.store.run_named("dataset_edges_as_of", {"urn": urn, "asOf": t})
            return {(r["direction"], r["down"], r["up"], r["source"], r["transformation"], r["kind"]): r for r in rows}

        f1, f2 = listed(t1), listed(t2)
        e1, e2 = edges(t1), edges(t2)
        changed = []
        for p in sorted(f1.keys() & f2.keys()):
            differ = [k for k in _FIELD_COLUMNS if f1[p].get(k) != f2[p].get(k)]
            if differ:
                changed.append({"fieldPath": p, "from": {k: f1[p].get(k) for k in differ},
                                "to": {k: f2[p].get(k) for k in differ}})
        return {"dataset": urn, "from": t1, "to": t2,
                "fields": {"added": sorted(f2.keys() - f1.keys()), "removed": sorted(f1.keys() - f2.keys()),
                           "changed": changed},
                "edges": {"added": [e2[k] for k in sorted(e2.keys() - e1.keys(), key=repr)],
                          "removed": [e1[k] for k in sorted(e1.keys() - e2.keys(), key=repr)]}}

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

    def ping(self) -> None:
        """Nothing, once the graph answers a trivial read (:class:`GraphUnavailable` if it cannot be reached)."""
        self.store.run("RETURN 1 AS ok", timeout_ms=5000)

    def query(self, cypher: str, params: dict[str, Any] | None = None, *, write: bool = False
              ) -> list[dict[str, Any]]:
        return self.store.run(cypher, params, write=write)


#: the state columns of a field listing (``fields``), as they were at an instant
_FIELD_COLUMNS = ("type", "nativeDataType", "nullable", "isPartOfKey", "description")


def _hop(r: dict[str, Any], depth: int) -> Hop:
    """The hop a walk step's row describes, ``depth`` hops from the start."""
    return Hop(r["from"], r["urn"], depth, r.get("datasetUrn"), r.get("fieldPath"), r.get("edge") or {},
               bool(r.get("placeholder")), bool(r.get("removed")), bool(r.get("ambiguous")))


def _at_or_before(t: Any, as_of: int) -> bool:
    return t is not None and t <= as_of


def _state_then(row: dict[str, Any], as_of: int) -> dict[str, Any] | None:
    """A field's state at ``as_of`` from a row with its present state (``since``) and the past one that held then
    (``past``); None when no schema had listed it by then."""
    if row["placeholder"]:
        return None
    if row["since"] <= as_of:
        return {k: row.get(k) for k in (*STATE_PROPS, "removed")}
    past = row.get("past")
    if past:
        return {k: past.get(k) for k in (*STATE_PROPS, "removed")}
    return None


def editable_labels(stored: str | None) -> dict[str, list[str]]:
    """A dataset's tags and terms set in DataHub's UI or API (``editableLabels``, JSON ``[[fieldPath, [label]]]``)
    by the v1 form of their field path: DataHub matches them to a schema's fields by that form (its field paths
    are often v1 there), so a field gets those of its own v1 path (``DatasetField.simplePath``)."""
    out: dict[str, list[str]] = {}
    for path, labels in json.loads(stored) if stored else ():
        have = out.setdefault(simple_ref(path), [])
        have += (x for x in labels if x not in have)
    return out


def label_of(text: str) -> str:
    """The stored form of a tag or term a user names: a tag by its name (``urn:li:tag:PII`` -> ``PII``),
    a glossary term by its URN (``urn:li:glossaryTerm:Classification.Sensitive``)."""
    text = text.strip()
    if not text:
        raise InputError("a tag or term name is empty")
    return text.removeprefix("urn:li:tag:")


class HandSetLabels(list[str]):
    """The tags and terms set by hand on a field (:meth:`LineageGraph.tag`): those that propagate, then those
    that stay on the field (``local``)."""

    def __init__(self, spreading: Iterable[str] = (), local: Iterable[str] = ()) -> None:
        self.local = list(local)
        super().__init__([*spreading, *self.local])


__all__ = ["HandSetLabels", "Hop", "IngestReport", "LineageGraph", "LineageResult", "gc_paused"]
