"""The lineage graph: write aspect changes, answer lineage questions, now or as of any instant. Backend-neutral.

Every question takes ``as_of`` (ms since the epoch; None: now). As of an instant, a walk follows the edges that
held then (present ``DataDerivedFrom`` and past ``PreviouslyDerivedFrom`` edges whose interval holds it) and
reports each field as it was then (listed, removed, or a reference no schema listed yet: a placeholder);
tags and terms are the schema's at that instant (hand-set tags have no history: as they are now).

Answers are the frozen types of :mod:`fieldgraph.graph.answers`, each built from its statement's row there; the
walk is :mod:`fieldgraph.graph.walk`, a field's own labels and their propagation :mod:`fieldgraph.graph.labels`.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import groupby
from typing import Any

from fieldgraph.bulk import gc_paused
from fieldgraph.changes import Change, carries_metadata
from fieldgraph.errors import InputError
from fieldgraph.normalizers import FieldUrn, UrnError
from fieldgraph.normalizers.urns import DatasetUrn

from . import cypher as cy
from .answers import (
    AmbiguousReference,
    DatasetEdge,
    DatasetFields,
    DatasetHit,
    DrawnEdge,
    EdgeRow,
    FieldChange,
    FieldHit,
    FieldInfo,
    FieldLineage,
    FieldRow,
    FieldRowAsOf,
    FieldTags,
    GraphStats,
    Hop,
    Impact,
    LineageDiff,
    LineagePath,
    LineageResult,
    SearchResult,
    Tagged,
    Timeline,
    Unresolved,
    UnusedField,
    UnusedFields,
    WalkDiff,
)
from .errors import AmbiguousReferenceError, NotFoundError, QueryTimeout
from .history import STATE_PROPS
from .labels import (
    HandSetLabels,
    OwnLabels,
    carriers,
    editable_labeled,
    editable_labels,
    inherited,
    label_of,
    own_labels,
)
from .plan import DatasetState, columns_named, datasets_to_read, field_urn, resolve_reference, simple_ref
from .renames import RenameReader
from .runs import RunLineage
from .sql import Derived, derive_each
from .steps import Plan
from .store import GraphStore, open_store
from .timeline import EdgeKey, Interval, diff_walks, drawn_over_time, state_times, timeline_marks, union
from .walk import DEFAULT_DEPTH_CAP, DEFAULT_TIME_BUDGET_S, Walk
from .write import WriteMode, Writer, chunks


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

    def _visible(self, urns: Iterable[str]) -> list[str]:
        """The field URNs of ``urns`` this graph shows (a scoped view, :mod:`fieldgraph.graph.scoped`, leaves hidden
        ones out)."""
        return list(urns)

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
        ``as_of``, over the edges that held then, each field reached as it was then."""
        res = Walk(self.store, direction, as_of=as_of, keep=keep, time_budget_s=time_budget_s).run(
            starts, depth, dataset_starts=dataset_starts)
        return res if as_of is None else self._as_then(res, as_of)

    def _as_then(self, res: LineageResult, as_of: int) -> LineageResult:
        """``res`` with each field reached as it was at ``as_of``: a placeholder (no schema listed it yet) or
        removed."""
        states = self._states([h.urn for h in res.hops if h.dataset_urn is not None], as_of)

        def then(h: Hop) -> Hop:
            if h.dataset_urn is None:
                return h
            st = states.get(h.urn)
            return replace(h, placeholder=st is None, removed=bool(st and st["removed"]))

        return replace(res, hops=tuple(map(then, res.hops)))

    def upstream(self, field: str, depth: int | None = None, *, time_budget_s: float = DEFAULT_TIME_BUDGET_S,
                 as_of: int | None = None) -> LineageResult:
        """Fields (and datasets) ``field`` derives from, to ``depth`` hops (None: up to the depth cap)."""
        return self._walk([self._existed(self.resolve_field(field), as_of)], "upstream", depth, time_budget_s,
                          as_of=as_of)

    def downstream(self, field: str, depth: int | None = None, *, time_budget_s: float = DEFAULT_TIME_BUDGET_S,
                   as_of: int | None = None) -> LineageResult:
        """Fields (and datasets) derived from ``field``, to ``depth`` hops (None: up to the depth cap)."""
        return self._walk([self._existed(self.resolve_field(field), as_of)], "downstream", depth, time_budget_s,
                          as_of=as_of)

    def impact(self, name: str, depth: int | None = None, *, time_budget_s: float = DEFAULT_TIME_BUDGET_S,
               as_of: int | None = None) -> Impact:
        """Downstream fields of a field or of every field of a dataset, grouped by dataset."""
        kind, urn = self.resolve_node(name)
        if kind == "field":
            res = self._walk([self._existed(urn, as_of)], "downstream", depth, time_budget_s, as_of=as_of)
        else:
            fields = [r.urn for r in self.fields(urn, as_of=as_of)]
            res = self._walk(fields, "downstream", depth, time_budget_s, dataset_starts=[urn], as_of=as_of)
            res = replace(res, start=urn)
        return Impact.of(res)

    def path(self, from_field: str, to_field: str, depth: int | None = None, *,
             time_budget_s: float = DEFAULT_TIME_BUDGET_S, as_of: int | None = None) -> LineagePath:
        """A shortest lineage path between two fields (either direction); an empty one if none within the walk."""
        a, b = (self._existed(self.resolve_field(f), as_of) for f in (from_field, to_field))
        for direction in ("upstream", "downstream"):
            res = self._walk([a], direction, depth, time_budget_s, as_of=as_of)
            if any(h.urn == b for h in res.hops):
                return LineagePath(tuple(res.path_to(b)), res)
        return LineagePath((), res)

    def drawn_edge(self, downstream: str, upstream: str) -> DrawnEdge:
        """Whether an edge drawn by hand (:class:`~fieldgraph.changes.ManualEdgeChange`) holds now from ``upstream``
        into ``downstream``, and its properties. :class:`NotFoundError` if either field is not in the graph."""
        down, up = self.resolve_field(downstream), self.resolve_field(upstream)
        res = self.upstream(down, 1)
        return DrawnEdge(down, up, next((h for h in res.hops if h.manual and h.urn == up), None))

    # ---- time-ranged lineage (CDAP's field lineage API) ----

    def field_lineage(self, field: str, direction: str = "incoming", start: int | None = None,
                      end: int | None = None, depth: int = 1, *, time_budget_s: float = DEFAULT_TIME_BUDGET_S
                      ) -> FieldLineage:
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
        res = self._walk([urn], "upstream" if direction == "incoming" else "downstream", depth, time_budget_s,
                         keep=lambda h: _in_range(h, runs, start, end))
        summary: dict[str, list[str]] = {}
        others: dict[str, dict[str, Any]] = {}
        for h in res.hops:
            paths = summary.setdefault(h.dataset_urn or h.urn, [])
            if (h.field_path or h.urn) not in paths:
                paths.append(h.field_path or h.urn)
            for e in h.edges if h.depth == 1 else ():  # each job's edge of the pair
                if not e.get("operationSet"):
                    op = _job_operation(e)
                    others.setdefault(repr(op), op)
        mine = runs.of(urn)
        return FieldLineage(urn, direction, start, end, depth, res.partial, res.reason,
                            tuple(DatasetFields(d, tuple(sorted(f))) for d, f in sorted(summary.items())),
                            (*mine.operations, *others.values()), tuple(mine.dropped), res.hops)

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

    def _own_labels(self, urns: Sequence[str], as_of: int | None = None) -> dict[str, OwnLabels]:
        """Each field's own tags and terms, now (or the schema's at ``as_of``; hand-set ones as they are now):
        ``tags``, ``tagged`` and ``field`` read them here."""
        states = self._states(urns, as_of) if as_of is not None else None
        return own_labels(self.store, urns, self.non_propagating, states)

    def _metadata_walk(self, starts: list[str], direction: str, depth: int | None, time_budget_s: float,
                       indirect: bool, as_of: int | None, deadline: float) -> LineageResult:
        """The walk along the edges that carry metadata (:func:`carries_metadata`), as far as lineage goes (each
        field once) or ``depth`` hops, until ``deadline``."""
        return Walk(self.store, direction, as_of=as_of, keep=lambda h: carries_metadata(h.edge, indirect=indirect),
                    time_budget_s=time_budget_s, deadline=deadline).run(starts, depth, capped=False)

    def tags(self, field: str, *, indirect: bool = False, depth: int | None = None,
             time_budget_s: float = DEFAULT_TIME_BUDGET_S, as_of: int | None = None) -> FieldTags:
        """A field's own tags and terms (``own``; ``local``: those of them that do not propagate), and those it
        inherits (``inherited``) along the edges that carry metadata (identity and direct edges; not masking
        ones; indirect ones only with ``indirect``), each with the upstream field it comes from, how far up that
        is and the path. Computed from the edges that hold now (or held at ``as_of``).

        The walk goes as far up as lineage goes (each field once; a field never inherits from itself through a
        cycle), or ``depth`` hops. ``partial`` (with its ``reason``) when it stopped before the end: out of
        ``time_budget_s``, or at ``depth`` with more lineage beyond."""
        deadline = time.monotonic() + time_budget_s
        urn = self._existed(self.resolve_field(field), as_of)
        res = self._metadata_walk([urn], "upstream", depth, time_budget_s, indirect, as_of, deadline)
        reached = dict.fromkeys(h.urn for h in res.hops if h.dataset_urn is not None and h.urn != urn)
        labels = self._own_labels([urn, *reached], as_of)
        mine = labels.get(urn, OwnLabels(None, None))
        return FieldTags(urn, mine.labels, mine.local, inherited(urn, res, labels), res.partial, res.reason)

    def tagged(self, label: str, *, indirect: bool = False, depth: int | None = None,
               time_budget_s: float = DEFAULT_TIME_BUDGET_S, as_of: int | None = None) -> Tagged:
        """Every field that carries a tag or term, its own or inherited (e.g. where PII flows): ``fields`` a
        :class:`Carrier` per field with ``own``, ``sources`` (the fields the label comes from: the field itself
        first when it is its own) and ``distance`` (hops from the nearest of them).

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
        sources = self._visible(sorted({*(r["urn"] for r in rows), *editable_labeled(self.store, norm)}))
        info = self._own_labels(sources, as_of)
        spreading = [] if norm in self.non_propagating else \
            [u for u in sources if norm not in (info[u].local if u in info else ())]
        res = self._metadata_walk(spreading, "downstream", depth, time_budget_s, indirect, as_of, deadline) \
            if spreading else LineageResult("", "downstream")
        return Tagged(norm, carriers(norm, sources, spreading, info, res), res.partial, res.reason)

    # ---- listings ----

    def fields(self, dataset: str, *, as_of: int | None = None) -> list[FieldRow]:
        """A dataset's fields, now or as they were at ``as_of``: listed, removed (listed by an earlier schema),
        or placeholders (references no schema listed, while an edge refers to them)."""
        urn = str(DatasetUrn.parse(dataset))
        if as_of is None:
            return [FieldRow.from_row(r) for r in self.store.run_named("dataset_fields", {"urn": urn})]
        out: list[FieldRow] = []
        unlisted: list[dict[str, Any]] = []
        for r in self.store.run_named("dataset_fields_as_of", {"urn": urn, "asOf": as_of}):
            then = _state_then(r, as_of)
            if then is None:
                unlisted.append(r)
                continue
            out.append(FieldRowAsOf.from_row({**r, **{k: then.get(k) for k in FieldRow.STATE},
                                          "removed": bool(then["removed"]), "placeholder": False}))
        presence = self._presence([r["urn"] for r in unlisted], as_of)
        for r in unlisted:
            p = presence.get(r["urn"], {})
            if p.get("referencedThen") or _at_or_before(p.get("firstJobReference"), as_of):  # a job declared it
                out.append(FieldRowAsOf(r["urn"], r["fieldPath"], simple_ref(r["fieldPath"]), placeholder=True))
        return sorted(out, key=lambda r: r.field_path)

    def field(self, name: str, *, as_of: int | None = None) -> FieldInfo:
        """One field as it is now (or was at ``as_of``): its dataset, path, state and tags (own and inherited)."""
        urn = self._existed(self.resolve_field(name), as_of)
        f = FieldUrn.parse(urn)
        dataset = str(f.dataset)
        row = next((r for r in self.fields(dataset, as_of=as_of) if r.urn == urn), None) or \
            FieldRow(urn, f.field_path, None, placeholder=True)
        return FieldInfo(row, dataset, self.tags(urn, as_of=as_of))

    def search(self, text: str, limit: int = 20) -> SearchResult:
        """Datasets whose name and fields whose path (v2 or simple) contain ``text``, case-insensitively."""
        q = text.strip().lower()
        if not q:
            raise InputError("a search needs some text")
        params = {"q": q, "limit": max(1, limit)}
        return SearchResult(tuple(map(DatasetHit.from_row, self.store.run_named("search_datasets", params))),
                            tuple(map(FieldHit.from_row, self.store.run_named("search_fields", params))))

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

    def diff_lineage(self, dataset: str, t1: int, t2: int) -> LineageDiff:
        """What changed in a dataset's fields and in the lineage edges into and out of them between two instants:
        fields added, removed (no longer listed) and changed (type, nullability, description, key, tags, terms);
        edges added and removed (an edge whose properties changed: removed and added)."""
        if t1 > t2:
            raise InputError(f"--from {t1} is after --to {t2}")
        urn = str(DatasetUrn.parse(dataset))
        if not self.read_state([urn]):
            raise NotFoundError(f"dataset {urn} is not in the graph")

        def listed(t: int) -> dict[str, dict[str, Any]]:
            return {r.field_path: r.state() for r in self.fields(urn, as_of=t) if not r.placeholder and not r.removed}

        def edges(t: int) -> dict[tuple[Any, ...], EdgeRow]:
            rows = map(EdgeRow.from_row, self.store.run_named("dataset_edges_as_of", {"urn": urn, "asOf": t}))
            return {(e.direction, e.down, e.up, e.source, e.transformation, e.kind): e for e in rows}

        f1, f2 = listed(t1), listed(t2)
        e1, e2 = edges(t1), edges(t2)
        changed = []
        for p in sorted(f1.keys() & f2.keys()):
            differ = [k for k in FieldRow.STATE if f1[p][k] != f2[p][k]]
            if differ:
                changed.append(FieldChange(p, {k: f1[p][k] for k in differ}, {k: f2[p][k] for k in differ}))
        return LineageDiff(urn, t1, t2, tuple(sorted(f2.keys() - f1.keys())), tuple(sorted(f1.keys() - f2.keys())),
                           tuple(changed), tuple(e2[k] for k in sorted(e2.keys() - e1.keys(), key=repr)),
                           tuple(e1[k] for k in sorted(e1.keys() - e2.keys(), key=repr)))

    def dataset_lineage(self, dataset: str | None = None) -> list[DatasetEdge]:
        """Dataset-level lineage rolled up from the field edges (those touching ``dataset``, if given)."""
        urn = str(DatasetUrn.parse(dataset)) if dataset else None
        return [DatasetEdge.from_row(r) for r in self.store.run_named("dataset_lineage", {"urn": urn})]

    def unused(self, dataset: str | None = None, *, platform: str | None = None,
               as_of: int | None = None) -> UnusedFields:
        """The fields nobody reads, now or at ``as_of``, of ``dataset`` (a dataset URN), of the datasets of
        ``platform`` (``hive`` or ``urn:li:dataPlatform:hive``), or of every dataset: the fields listed then
        (neither placeholders nor removed) with no lineage edge into them, nor into their whole dataset, that held
        then; each with when it was last read (the latest end of such an edge then; None: never)."""
        urn = None
        if dataset is not None:
            urn = str(DatasetUrn.parse(dataset))
            if not self.read_state([urn]):
                raise NotFoundError(f"dataset {urn} is not in the graph")
        plat = _platform(platform)
        params: dict[str, Any] = {"dataset": urn, "platform": plat}
        if as_of is None:
            found = [UnusedField.from_row(r) for r in self.store.run_named("unused_fields", params)]
        else:
            found = []
            for r in self.store.run_named("unused_fields_as_of", {**params, "asOf": as_of}):
                then = _state_then({**r, "placeholder": False}, as_of)
                if then is not None and not then["removed"]:  # listed then (not yet, or removed by then: no column)
                    found.append(UnusedField.from_row({**r, **then}))
        read = self._read_under_other_names([f.urn for f in found], as_of)
        found = sorted((f for f in found if f.urn not in read), key=lambda f: (f.dataset, f.field_path, f.urn))
        return UnusedFields(urn, plat, as_of, tuple(found))

    def _read_under_other_names(self, urns: Sequence[str], as_of: int | None) -> set[str]:
        """The fields of ``urns`` a reader reads under another of their names: a renamed field is one field, so a
        reader whose edge into its old name still holds (or into its new name, as of an instant) reads it
        (:mod:`fieldgraph.graph.renames`: never across a reused name). Only the fields a rename touches are
        walked, each over its renames (to their readers, one hop further)."""
        renames = RenameReader(self.store)
        if not urns or not renames.any():
            return set()
        budget = int(DEFAULT_TIME_BUDGET_S * 1000)
        crossing = {row["from"] for row, _ in renames.cross("downstream", [(u, as_of) for u in urns], budget)}
        read = set()
        for u in sorted(crossing):
            names = self._walk([u], "downstream", None, DEFAULT_TIME_BUDGET_S, keep=lambda h: h.rename, as_of=as_of)
            others = sorted({h.urn for h in names.hops})
            readers = self._walk(others, "downstream", 1, DEFAULT_TIME_BUDGET_S, as_of=as_of).hops if others else ()
            if any(not h.rename for h in readers):
                read.add(u)
        return read

    def unresolved(self) -> list[Unresolved]:
        """Field references no schema resolved (placeholders that hold now); a column a SQL statement derived
        with the name the dataset's schema gives that column, if it has one."""
        rows = [Unresolved.from_row(r) for r in self.store.run_named("unresolved")]
        numbered = sorted({u.dataset for u in rows if u.column is not None})
        if not numbered:
            return rows
        named = {urn: columns_named(st.fields.values()) for urn, st in self.read_state(numbered).items()}
        return [replace(u, schema_column=_nth(named.get(u.dataset, []), u.column)) if u.column is not None else u
                for u in rows]

    def ambiguous(self) -> list[AmbiguousReference]:
        """The ambiguous ones among :meth:`unresolved`, with their candidates."""
        return [AmbiguousReference.from_row(r) for r in self.store.run_named("ambiguous")]

    def stats(self) -> GraphStats:
        """The graph's counts (datasets, fields, edges, placeholders, ambiguous references)."""
        row: dict[str, int] = {}
        for stmt in cy.statements("stats"):
            for r in self.store.run(stmt):
                row.update(r)
        return GraphStats.from_row(row)

    def ping(self) -> None:
        """Nothing, once the graph answers a trivial read (:class:`GraphUnavailable` if it cannot be reached)."""
        self.store.run_named("ping", timeout_ms=5000)

    def query(self, cypher: str, params: dict[str, Any] | None = None, *, write: bool = False
              ) -> list[dict[str, Any]]:
        return self.store.run(cypher, params, write=write)

    # ---- lineage through time around one field (the explorer's time control and compare mode) ----

    def timeline(self, field: str, direction: str = "upstream", depth: int = 3, *,
                 time_budget_s: float = DEFAULT_TIME_BUDGET_S) -> Timeline:
        """The instants the walk from ``field`` (``upstream``, ``downstream`` or ``both``, ``depth`` hops) changed
        at, over all time: edges and fields that came into it or left it, fields drawn whose state changed
        (:func:`fieldgraph.graph.timeline.timeline_marks`). Hops across renames are not followed; a scoped view's walk
        stops at the fields it hides (whatever its ``through_hidden``: their times are theirs). ``partial``
        (with its ``reason``) when ``time_budget_s`` ran out first: the instants of the levels walked."""
        deadline = time.monotonic() + time_budget_s
        if direction not in ("upstream", "downstream", "both"):
            raise InputError(f"direction {direction!r}: upstream, downstream or both")
        urn = self.resolve_field(field)
        came = self._presence([urn], 0).get(urn, {})
        since = min((t for t in (came.get("listedFrom"), came.get("firstReference")) if t is not None), default=0)
        reach: dict[str, list[Interval]] = {}
        edges: dict[EdgeKey, tuple[Hop, list[Interval]]] = {}
        reason = None
        for d in ("upstream", "downstream") if direction == "both" else (direction,):
            def step(frontier: list[str], d: str = d) -> list[Hop] | None:
                out: list[Hop] = []
                for batch in chunks(frontier, 1000):
                    left_ms = int((deadline - time.monotonic()) * 1000)
                    try:
                        if left_ms <= 0:
                            return None
                        hops = [Hop.from_row(r, 0) for r in self.store.run_named(
                            _STEP_EVER[d], {"frontier": batch}, timeout_ms=left_ms)]
                        shown = set(self._visible(h.urn for h in hops))  # a scoped view: it stops at hidden fields
                        out += (h for h in hops if h.urn in shown)
                    except QueryTimeout:
                        return None
                return out
            r, e, stopped = drawn_over_time(urn, depth, step, since)
            if stopped is not None and reason is None:
                reason = f"time budget of {time_budget_s:g}s reached at depth {stopped - 1} ({d})"
            for u, iv in r.items():
                reach[u] = union([*reach.get(u, []), *iv])
            edges.update(e)
        reached = {h.urn for h, _ in edges.values() if h.dataset_urn is not None}
        fields = [u for u in reach if u == urn or u in reached]
        states: dict[str, list[int]] = {}
        for batch in chunks(fields, 1000):
            for row in self.store.run_named("field_listings", {"urns": batch}):
                states[row["urn"]] = state_times(row.get("since"), row.get("past") or ())
        return Timeline(urn, direction, depth, timeline_marks(reach, edges, states), reason is not None, reason)

    def diff_walk(self, field: str, direction: str, depth: int | None, t1: int, t2: int, *,
                  time_budget_s: float = DEFAULT_TIME_BUDGET_S) -> WalkDiff:
        """The walk from ``field`` (``upstream`` or ``downstream``, ``depth`` hops) as of ``t1`` and as of ``t2``,
        told apart (:func:`fieldgraph.graph.timeline.diff_walks`): fields and edges added, removed and changed.
        At an instant the field was not in the graph yet, nothing is drawn."""
        if t1 > t2:
            raise InputError(f"from {t1} is after to {t2}")
        if direction not in ("upstream", "downstream"):
            raise InputError(f"direction {direction!r}: upstream or downstream")
        urn = self.resolve_field(field)

        def walk(t: int) -> LineageResult | None:
            try:
                return self._walk([self._existed(urn, t)], direction, depth, time_budget_s, as_of=t)
            except NotFoundError:
                return None

        def states(res: LineageResult | None, t: int) -> dict[str, dict[str, Any]]:
            if res is None:
                return {}
            urns = [urn, *(h.urn for h in res.hops if h.dataset_urn is not None)]
            out = {}
            for u, st in self._states(urns, t).items():
                out[u] = {"placeholder": st is None, "removed": bool(st and st["removed"]),
                          **{k: (st or {}).get(k) for k in STATE_PROPS}}
            return out

        before, after = walk(t1), walk(t2)
        return diff_walks(urn, direction, depth, t1, t2, before, after, states(before, t1), states(after, t2))


#: the one-hop statements over all time (the timeline's walk)
_STEP_EVER = {"upstream": "upstream_step_ever", "downstream": "downstream_step_ever"}


def _in_range(h: Hop, runs: RunLineage, start: int | None, end: int | None) -> bool:
    """Whether a hop's edge counts in ``[start, end)``: a CDAP run's edge when a run in the range ties the two
    fields; another when it was seen in the range (``firstSeen < end``, ``lastSeen >= start``; no times: always)."""
    e = h.edge
    if e.get("operationSet"):
        return runs.connects(h.from_urn, h.urn, e.get("source"))
    first = e.get("firstSeen", e.get("createdAt"))
    last = e.get("lastSeen", first)
    return (end is None or first is None or first < end) and (start is None or last is None or last >= start)


def _job_operation(e: Mapping[str, Any]) -> dict[str, Any]:
    """The operation a job's or query's edge (DataHub, OpenLineage) stands for, in CDAP's JSON form."""
    return {"sourceFormat": e.get("sourceFormat"), "transformation": e.get("transformation"),
            "programs": [{"program": e.get("program") or e.get("query") or e.get("source"), "run": e.get("run"),
                          "runTime": e.get("runTime")}], "operations": []}


_PLATFORM_URN = "urn:li:dataPlatform:"


def _platform(platform: str | None) -> str | None:
    """A platform's name (``hive``) from its name or URN (``urn:li:dataPlatform:hive``); :class:`InputError` when
    it is neither."""
    if platform is None:
        return None
    name = platform.strip().removeprefix(_PLATFORM_URN)
    if not name or any(c in name for c in ",()") or name.startswith("urn:"):
        raise InputError(f"platform {platform!r}: not a platform name (hive) or URN ({_PLATFORM_URN}hive)")
    return name


def _nth(columns: Sequence[str], number: int) -> str | None:
    """Column ``number`` (from 1) of ``columns``, if there is one."""
    return columns[number - 1] if 0 < number <= len(columns) else None


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


__all__ = ["DEFAULT_DEPTH_CAP", "DEFAULT_TIME_BUDGET_S", "HandSetLabels", "Hop", "IngestReport", "LineageGraph",
           "LineageResult", "editable_labels", "gc_paused", "label_of"]
