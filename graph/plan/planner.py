"""The planner's state for one batch: the plan under construction, the fields the batch leaves (what lineage
references resolve against), placeholders, the dataset rows and edges every aspect's planner writes. The planners
of the aspects (:mod:`.schemas`, :mod:`.lineage`, :mod:`.queries`, :mod:`.editable`, :mod:`.data_jobs`,
:mod:`.job_lineage`) build on it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fieldgraph.changes import AspectName, DataJobChange, LineageChange, RunOperations
from fieldgraph.normalizers import SchemaField
from fieldgraph.normalizers.urns import DatasetUrn, canonical_dataset_urn

from ..history import Fact, Span
from ..steps import REMOVING, FieldRow, JobEdgeRow, JobRunRow, MoveRow, Plan, QueryEndRow
from .resolve import Resolver, field_urn, parse_field_ref, simple_ref
from .state import TIMES_PROP, DatasetState, FieldState, History


def dataset_props(urn: str) -> dict[str, Any]:
    """The properties of a dataset node its URN gives."""
    d = DatasetUrn.parse(urn)
    return {"platform": d.platform, "name": d.name, "env": d.env}


def field_props(dataset_urn: str, f: SchemaField) -> dict[str, Any]:
    """The properties of a field node a schema field gives."""
    t = f.type
    return {
        "datasetUrn": dataset_urn, "fieldPath": f.fieldPath, "simplePath": f.simple_path, "type": t.name,
        "nativeDataType": f.nativeDataType, "nullable": f.nullable, "description": f.description,
        "isPartOfKey": f.isPartOfKey, "recursive": f.recursive, "jsonProps": f.jsonProps,
        "tags": list(f.tags) or None, "nestedType": list(t.nested_type) if t.nested_type else None,
        "keyType": t.key_type, "valueType": t.value_type, "fieldId": f.fieldId, "aliases": list(f.aliases) or None,
    }


class Planner:
    """One batch's plan, built step by step against the state read before it (never mutated)."""

    def __init__(self, state: Mapping[str, DatasetState], history: History | None = None) -> None:
        self.state = state
        self.history = history or History()
        self.plan = Plan()
        self.dataset_rows: dict[str, dict[str, Any]] = {}
        #: fields after this batch, per dataset (the resolution target of lineage references)
        self.known: dict[str, dict[str, FieldState]] = {u: dict(s.fields) for u, s in state.items()}
        self.ensured: set[str] = set()
        #: references resolved in this batch (schemas are applied before any reference is resolved)
        self.resolved: dict[str, str] = {}
        #: the placeholder fields planned in this batch, by URN
        self.placeholder_rows: dict[str, FieldRow] = {}
        self.resolvers: dict[str, Resolver] = {}
        #: job lineage edges per (down, up, job), merged over the batch
        self.job_edges: dict[tuple[str, str, str], JobEdgeRow] = {}
        #: job runs (row, operations) per (job, run)
        self.job_runs: dict[tuple[str, str], tuple[JobRunRow, RunOperations]] = {}
        self.dropped: dict[tuple[str, str], None] = {}

    def stored(self, urn: str) -> DatasetState:
        """A dataset's state as read before the batch (an empty one if the graph does not hold it)."""
        return self.state.get(urn) or DatasetState(urn)

    def dataset_row(self, urn: str) -> dict[str, Any]:
        """The properties the plan sets on a dataset (``upsert_datasets``), added on first use."""
        if urn not in self.dataset_rows:
            props = dataset_props(urn)
            if urn not in self.state:
                props["placeholder"] = True
            self.dataset_rows[urn] = props
        return self.dataset_rows[urn]

    def add_times(self, urn: str, aspect: AspectName, times: Iterable[int]) -> None:
        """The times of an aspect's versions, the stored ones and ``times``."""
        merged = sorted({*self.stored(urn).version_times(aspect), *times})
        self.dataset_row(urn)[TIMES_PROP[aspect]] = merged

    # ---- references ----

    def ensure_dataset(self, ds: str) -> None:
        """A placeholder dataset for ``ds`` unless the graph or the batch has it."""
        if ds not in self.state and ds not in self.dataset_rows and ds not in self.ensured:
            self.plan.ensure_datasets.append({"urn": ds, "props": {**dataset_props(ds), "placeholder": True}})
            self.ensured.add(ds)

    def resolve(self, ref: str, declared: bool = False) -> str:
        """The URN of the field ``ref`` names, after this batch's schemas; a placeholder when none or several."""
        hit = self.resolved.get(ref)
        if hit is not None:
            if declared and hit in self.placeholder_rows:
                self.placeholder_rows[hit]["props"]["declared"] = True
            return hit
        self.resolved[ref] = urn = self._resolve(ref, declared)
        return urn

    def _resolve(self, ref: str, declared: bool) -> str:
        ds, path = parse_field_ref(ref)
        fields_now = self.known.setdefault(ds, {})
        exact = fields_now.get(field_urn(ds, path))
        if exact is not None and not exact.placeholder:  # the common case, without building a Resolver
            return exact.urn
        if ds not in self.resolvers:  # schemas are all applied by now; placeholders do not count
            self.resolvers[ds] = Resolver(fields_now.values())
        kind, paths = self.resolvers[ds].resolve(path)
        if kind in ("exact", "unique"):
            return field_urn(ds, paths[0])
        return self._placeholder(ds, path, kind, paths, declared)

    def _placeholder(self, ds: str, path: str, kind: str, paths: list[str], declared: bool) -> str:
        purn = field_urn(ds, path)
        row = self.placeholder_rows.get(purn)
        if row is not None:  # planned already in this batch
            if declared:
                row["props"]["declared"] = True
            return purn
        fields_now = self.known[ds]
        self.ensure_dataset(ds)
        if purn not in fields_now or fields_now[purn].placeholder:
            props = {"datasetUrn": ds, "fieldPath": path, "simplePath": simple_ref(path),
                     "placeholder": True, "removed": False, "refPath": path,
                     "ambiguous": kind == "ambiguous", "candidates": paths or None}
            if declared:
                props["declared"] = True
            self.placeholder_rows[purn] = {"datasetUrn": ds, "urn": purn, "props": props}
            self.plan.ensure_fields.append(self.placeholder_rows[purn])
            if purn not in fields_now:
                self.plan.tally["placeholders"] += 1
            if kind == "ambiguous":
                self.plan.ambiguous.append((ds, path, paths))
            fields_now[purn] = FieldState(purn, path, True, refPath=path)
        return purn

    def dataset_target(self, ref: str) -> str:
        """The dataset a dataset edge comes from (a placeholder if the graph does not have it)."""
        ds = canonical_dataset_urn(ref)
        self.ensure_dataset(ds)
        return ds

    # ---- placeholders a schema resolves ----

    def resolve_stored_placeholders(self, urns: set[str]) -> None:
        """Placeholders already in the graph, of datasets whose schema changed: resolve them now."""
        for urn in urns:
            fields_now = self.known.get(urn, {})
            resolver = Resolver(fields_now.values())
            stored = self.stored(urn).fields
            for furn, fs in list(fields_now.items()):
                if fs.placeholder and furn in stored:
                    self._resolve_placeholder(urn, furn, fs, resolver)

    def _resolve_placeholder(self, urn: str, furn: str, fs: FieldState, resolver: Resolver) -> None:
        ref = fs.refPath or fs.fieldPath
        kind, paths = resolver.resolve(ref)
        if kind in ("unique", "exact") and field_urn(urn, paths[0]) != furn:
            self.plan_move(furn, field_urn(urn, paths[0]))
            del self.known[urn][furn]
        elif kind == "ambiguous":
            self.plan.set_field_props.append({"urn": furn, "props": {"ambiguous": True, "candidates": paths}})
            self.plan.ambiguous.append((urn, ref, paths))
        elif kind == "unknown":
            self.plan.set_field_props.append({"urn": furn, "props": {"ambiguous": False, "candidates": None}})

    def plan_move(self, placeholder: str, target: str) -> None:
        """Move a placeholder's edges, present and past, to the field it resolved to, and delete it."""
        move: MoveRow = {"from": placeholder, "to": target}
        for rows in (self.plan.move_out_edges, self.plan.move_in_edges, self.plan.move_past_out_edges,
                     self.plan.move_past_in_edges, self.plan.move_out_renames, self.plan.move_in_renames):
            rows.append(move)
        self.plan.delete_fields.append({"urn": placeholder})

    # ---- edges ----

    def facts(self, change: LineageChange | DataJobChange, source: str | None = None) -> list[Fact]:
        """The edges of a lineage version, references resolved (downstream fields it names get placeholders);
        ``source`` (default: the aspect) keys them among the edges of their downstream dataset."""
        for ref in change.fields:
            self.resolve(ref)
        facts: dict[tuple[str, str, bool], Fact] = {}
        first: dict[int, Fact] = {}  # edges of one version often share their properties: one dict, one fact key
        for edges, target, to_dataset in ((change.edges, self.resolve, False),
                                          (change.dataset_edges, self.dataset_target, True)):
            for e in edges:
                down = self.resolve(e.downstream)
                up = target(e.upstream)
                like = first.get(id(e.props))
                if like is None:
                    f = first[id(e.props)] = Fact(down, up, {**e.props.to_props(), "source": source or change.aspect},
                                                  to_dataset)
                else:
                    f = Fact(down, up, like.props, to_dataset, fact=like.fact)
                facts[(down, up, to_dataset)] = f
        return list(facts.values())

    def merge_edge(self, f: Fact, valid_from: int, last_seen: int) -> None:
        """An edge that holds now (kept if it already does: its ``validFrom`` stays)."""
        (self.plan.merge_dataset_edges if f.dataset else self.plan.merge_field_edges).append(
            {"down": f.down, "up": f.up, "source": f.props["source"], "fact": f.fact, "validFrom": valid_from,
             "props": {**f.props, "fact": f.fact, "lastSeen": last_seen}})

    def past_edge(self, span: Span) -> None:
        """An edge that held over a span of the past and no longer does."""
        f = span.fact
        props = {**f.props, "validFrom": span.start, "validTo": span.end, "firstSeen": span.first_seen,
                 "lastSeen": span.last_seen}
        if not f.additive:
            props["fact"] = f.fact
        (self.plan.create_past_dataset_edges if f.dataset else self.plan.create_past_field_edges).append(
            {"down": f.down, "up": f.up, "props": props})

    def end_query_lineage(self, rows: list[QueryEndRow]) -> None:
        """Query-derived edges stop holding (see ``close_query_lineage.cypher``)."""
        self.plan.close_query_lineage.extend(rows)
        self.plan.drop_query_lineage.extend(rows)

    def finish(self) -> Plan:
        """The plan, with the rows merged over the batch (job edges and runs, dropped fields, datasets) and the
        placeholder cleanups if a step removes nodes or edges."""
        plan = self.plan
        plan.merge_job_edges.extend(self.job_edges.values())
        for row, ops in self.job_runs.values():
            plan.clear_job_runs.append({"job": row["job"], "run": row["run"]})
            plan.merge_job_runs.append(row)
            plan.link_run_sources.extend({"job": row["job"], "run": row["run"], "urn": u} for u in ops.sources)
            plan.link_run_destinations.extend({"job": row["job"], "run": row["run"], "urn": u}
                                              for u in ops.destinations)
        plan.mark_dropped.extend({"urn": u, "entry": entry} for u, entry in self.dropped)
        plan.upsert_datasets = [{"urn": u, "props": p} for u, p in self.dataset_rows.items()]
        if any(plan.rows(s) for s in REMOVING):
            plan.cleanup_placeholder_fields = [{}]
            plan.cleanup_placeholder_datasets = [{}]
        return plan
