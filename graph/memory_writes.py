"""The write steps of :mod:`fieldgraph.graph.steps` on the in-memory graph: each handler does what its statement in
``cypher/`` does on FalkorDB and Neo4j."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .memgraph import (
    FIELD_LINKS,
    LINEAGE,
    MANUAL,
    QUERY,
    Edge,
    MemoryGraph,
    Node,
    Row,
    eq,
    job_edge,
    le,
    lt,
    props_of,
    put,
    query_edge,
    update,
)


class WriteSteps(MemoryGraph):
    """The handlers of the write statements (``_<name>``, found by :class:`~.memory.MemoryStore`)."""

    # ---- writes: the steps of graph/steps.py, in their order ----

    def _upsert_datasets(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            d, _ = self._merge("Dataset", row["urn"])
            self._set(d, row.get("props"))
        return []

    def _set_editable_labels(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            d = self._dataset(row["urn"])
            if d is None:
                continue
            stored, ts = d.get("editableTs", -1), row.get("ts")
            if not (row.get("unstamped") is True or le(stored, ts)):
                continue
            put(d.props, "editableLabels", row.get("labels"))
            put(d.props, "editableTs", d.get("editableTs") if lt(ts, stored) else ts)
        return []

    def _archive_field_states(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            f = self._field(row["urn"])
            if f is None or f.get("stateKey") is None or not lt(f.get("since", 0), row.get("at")):
                continue
            removed, key = f.get("removed", False), row.get("stateKey")
            if not (removed != row.get("removed") or (key is not None and f.get("stateKey") != key)):
                continue
            state = {"validFrom": f.get("since", 0), "validTo": row["at"], "removed": removed,
                     **{k: f.get(k) for k in ("stateKey", "type", "nativeDataType", "nullable", "description",
                                              "isPartOfKey", "tags", "glossaryTerms")}}
            self._link(f, "HadState", self._create("FieldState", state))
            put(f.props, "since", row["at"])
        return []

    def _clear_field_states(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs("HadState"):
                    if e.end.label == "FieldState":
                        self._delete(e.end)
        return []

    def _upsert_fields(self, p: Mapping[str, Any]) -> list[Row]:
        datasets = self._keys["Dataset"]
        for row in p["rows"]:
            d = datasets.get(row["datasetUrn"])
            if d is None:
                continue
            at = row.get("at")
            f, created = self._merge("DatasetField", row["urn"], {"since": at, **(row.get("props") or {})})
            if created:  # with its properties at once, and linked
                self._link(d, "HasField", f, {"validFrom": at})
                continue
            self._set(f, row.get("props"))
            put(f.props, "since", f.props.get("since", at))
            for h in self._merge_edge(d, "HasField", f)[0]:
                if h.props.get("validFrom") is None or lt(at, h.props["validFrom"]):
                    put(h.props, "validFrom", at)
        return []

    def _set_field_props(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            f = self._field(row["urn"])
            if f is not None:
                self._set(f, row.get("props"))
        return []

    def _set_listed_from(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            f = self._field(row["urn"])
            for h in f.ins("HasField") if f is not None else ():
                if h.start.label == "Dataset":
                    put(h.props, "validFrom", row.get("listedFrom"))
        return []

    def _create_field_states(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            f = self._field(row["urn"])
            if f is not None:
                self._link(f, "HadState", self._create("FieldState", row.get("props")))
        return []

    def _move_edges(self, p: Mapping[str, Any], type: str, outgoing: bool) -> list[Row]:
        """``move_(past_)(out|in)_edges``: a placeholder's lineage edges moved to the real field (a present edge
        merged by ``source`` with what the real field has, a past one created)."""
        for row in p["rows"]:
            src, to = self._field(row["from"]), self._field(row["to"])
            if src is None or to is None:
                continue
            edges = src.outs(type) if outgoing else [e for e in src.ins(type) if e.start.label == "DatasetField"]
            for e in edges:
                a, b = (to, e.end) if outgoing else (e.start, to)
                if type in ("DataDerivedFrom", "RenamedFrom"):
                    key = {"source": e.props.get("source")} if type == "DataDerivedFrom" else \
                        {"validFrom": e.props.get("validFrom")}
                    for n in self._merge_edge(a, type, b, **key)[0]:
                        update(n.props, props_of(e.props))
                else:
                    self._link(a, type, b, props_of(e.props))
                self._unlink(e)
        return []

    def _move_out_edges(self, p: Mapping[str, Any]) -> list[Row]:
        return self._move_edges(p, "DataDerivedFrom", True)

    def _move_in_edges(self, p: Mapping[str, Any]) -> list[Row]:
        return self._move_edges(p, "DataDerivedFrom", False)

    def _move_past_out_edges(self, p: Mapping[str, Any]) -> list[Row]:
        return self._move_edges(p, "PreviouslyDerivedFrom", True)

    def _move_past_in_edges(self, p: Mapping[str, Any]) -> list[Row]:
        return self._move_edges(p, "PreviouslyDerivedFrom", False)

    def _move_out_renames(self, p: Mapping[str, Any]) -> list[Row]:
        return self._move_edges(p, "RenamedFrom", True)

    def _move_in_renames(self, p: Mapping[str, Any]) -> list[Row]:
        return self._move_edges(p, "RenamedFrom", False)

    def _delete_fields(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            f = self._field(row["urn"])
            if f is not None:
                self._delete(f)
        return []

    def _close(self, e: Edge, at: Any) -> Edge:
        """``CREATE (d)-[p:PreviouslyDerivedFrom]->(u) SET p = properties(e), p.validTo = at DELETE e``: ``p``."""
        past = self._link(e.start, "PreviouslyDerivedFrom", e.end, props_of(e.props))
        put(past.props, "validTo", at)
        self._unlink(e)
        return past

    def _close_lineage(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            keep = {tuple(k) for k in row.get("keep") or []}
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs("DataDerivedFrom"):
                    if eq(e.props.get("source"), row.get("source")) and \
                            (f.get("urn"), e.end.get("urn"), e.props.get("fact", "")) not in keep:
                        self._close(e, row.get("at"))
        return []

    def _clear_lineage(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs(*LINEAGE):
                    if eq(e.props.get("source"), row.get("source")):
                        self._unlink(e)
        return []

    def _clear_job_lineage(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs(*LINEAGE):
                    if job_edge(e):
                        self._unlink(e)
        return []

    def _close_query_lineage(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs("DataDerivedFrom"):
                    if query_edge(e, row) and lt(e.props.get("validFrom", 0), row.get("at")):
                        self._close(e, row.get("at"))
        return []

    def _drop_query_lineage(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs("DataDerivedFrom"):
                    if query_edge(e, row):
                        self._unlink(e)
        return []

    def _ensure_datasets(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            d, created = self._merge("Dataset", row["urn"])
            if created:
                self._set(d, row.get("props"))
        return []

    def _ensure_fields(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            d = self._dataset(row["datasetUrn"])
            if d is None:
                continue
            f, _ = self._merge("DatasetField", row["urn"])
            self._set(f, row.get("props"))
            self._merge_edge(d, "HasField", f)
        return []

    def _ensure_placeholder_fields(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            d = self._dataset(row["datasetUrn"])
            if d is None:
                continue
            f, created = self._merge("DatasetField", row["urn"])
            if created:
                self._set(f, {"placeholder": True})
            self._merge_edge(d, "HasField", f)
            if f.get("placeholder") is True:
                self._set(f, row.get("props"))
        return []

    def _merge_lineage(self, p: Mapping[str, Any], up_label: str) -> list[Row]:
        """``merge_field_edges`` / ``merge_dataset_edges``."""
        downs, ups = self._keys["DatasetField"], self._keys[up_label]
        for row in p["rows"]:
            d, u = downs.get(row["down"]), ups.get(row["up"])
            if d is None or u is None:
                continue
            since = row.get("validFrom")
            edges, created = self._merge_edge(d, "DataDerivedFrom", u, {"validFrom": since, "firstSeen": since,
                                                                       **(row.get("props") or {})},
                                              source=row.get("source"), fact=row.get("fact"))
            if not created:
                for e in edges:
                    update(e.props, row.get("props"))
        return []

    def _clear_schema_renames(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs("RenamedFrom"):
                    if e.props.get("source") == "schema":
                        self._unlink(e)
        return []

    def _merge_renames(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            n, o = self._field(row["new"]), self._field(row["old"])
            if n is not None and o is not None:
                for e in self._merge_edge(n, "RenamedFrom", o, validFrom=row["validFrom"])[0]:
                    update(e.props, row.get("props"))
        return []

    def _merge_field_edges(self, p: Mapping[str, Any]) -> list[Row]:
        return self._merge_lineage(p, "DatasetField")

    def _merge_dataset_edges(self, p: Mapping[str, Any]) -> list[Row]:
        return self._merge_lineage(p, "Dataset")

    def _merge_job_edges(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            d, u = self._field(row["down"]), self._field(row["up"])
            if d is None or u is None:
                continue
            first, last = row.get("firstSeen"), row.get("lastSeen")
            for e in self._merge_edge(d, "DataDerivedFrom", u, source=row.get("source"))[0]:
                had_first, had_last = e.props.get("firstSeen"), e.props.get("lastSeen")
                newer = had_last is None or le(had_last, last)
                put(e.props, "firstSeen", first if had_first is None or lt(first, had_first) else had_first)
                put(e.props, "lastSeen", last if newer else had_last)
                if newer:
                    update(e.props, row.get("props"))
                put(e.props, "validFrom", e.props.get("firstSeen"))
        return []

    def _merge_manual_edges(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            d, u = self._field(row["down"]), self._field(row["up"])
            if d is None or u is None:
                continue
            at = row.get("at")
            if any(eq(e.props.get("source"), MANUAL) and lt(at, e.props.get("validTo"))
                   for e in self._between(d, "PreviouslyDerivedFrom", u)):
                continue  # removed after `at`: a late drawing, ended already
            edges, created = self._merge_edge(d, "DataDerivedFrom", u, source=MANUAL)
            if created:
                for e in edges:
                    update(e.props, row.get("props"))
                    for k in ("validFrom", "firstSeen", "lastSeen"):
                        put(e.props, k, at)
        return []

    def _close_manual_edges(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            d, u = self._field(row["down"]), self._field(row["up"])
            if d is None or u is None:
                continue
            for e in self._between(d, "DataDerivedFrom", u, source=MANUAL):
                if le(e.props.get("validFrom", 0), row.get("at")):
                    put(self._close(e, row.get("at")).props, "removedBy", row.get("by"))
        return []

    def _upsert_queries(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            q, _ = self._merge("Query", row["urn"])
            if q.get("ts") is None or le(q.get("ts"), row.get("ts")):
                for k in ("statement", "language", "ts"):
                    put(q.props, k, row.get(k))
        return []

    def _unlink_lineage_queries(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            d = self._dataset(row["datasetUrn"])
            for e in d.outs("MadeByQuery") if d is not None else ():
                if e.end.label == "Query":
                    self._unlink(e)
        return []

    def _link_lineage_queries(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            d = self._dataset(row["datasetUrn"])
            if d is None:
                continue
            q, _ = self._merge("Query", row["query"])
            for r in self._merge_edge(d, "MadeByQuery", q)[0]:
                put(r.props, "upstreams", row.get("upstreams"))
        return []

    def _upsert_data_jobs(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            j, _ = self._merge("DataJob", row["urn"])
            put(j.props, "ts", row.get("ts"))
            put(j.props, "outputs", row.get("outputs"))
        return []

    def _run(self, row: Mapping[str, Any]) -> Node | None:
        return self._keys["JobRun"].get((row.get("job"), row.get("run")))

    def _clear_job_runs(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            r = self._run(row)
            for e in r.outs("RanOperations", "Read", "Wrote") if r is not None else ():
                self._unlink(e)
        return []

    def _merge_job_runs(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            o, created = self._merge("FieldOperations", row.get("checksum"))
            if created:
                put(o.props, "operations", row.get("operations"))
            job, run = row.get("job"), row.get("run")
            r, _ = self._merge("JobRun", None if job is None or run is None else (job, run))
            put(r.props, "time", row.get("time"))
            put(r.props, "checksum", row.get("checksum"))
            self._merge_edge(r, "RanOperations", o)
        return []

    def _link_runs(self, p: Mapping[str, Any], type: str) -> list[Row]:
        for row in p["rows"]:
            r, d = self._run(row), self._dataset(row.get("urn"))
            if r is not None and d is not None:
                self._merge_edge(r, type, d)
        return []

    def _link_run_sources(self, p: Mapping[str, Any]) -> list[Row]:
        return self._link_runs(p, "Read")

    def _link_run_destinations(self, p: Mapping[str, Any]) -> list[Row]:
        return self._link_runs(p, "Wrote")

    def _create_past_edges(self, p: Mapping[str, Any], up_label: str) -> list[Row]:
        for row in p["rows"]:
            d, u = self._field(row["down"]), self._node(up_label, row["up"])
            if d is not None and u is not None:
                self._link(d, "PreviouslyDerivedFrom", u, row.get("props"))
        return []

    def _create_past_field_edges(self, p: Mapping[str, Any]) -> list[Row]:
        return self._create_past_edges(p, "DatasetField")

    def _create_past_dataset_edges(self, p: Mapping[str, Any]) -> list[Row]:
        return self._create_past_edges(p, "Dataset")

    def _mark_dropped(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            f = self._field(row["urn"])
            if f is None:
                continue
            have, entry = list(f.get("droppedBy") or []), row.get("entry")
            if entry in have:
                continue
            put(f.props, "droppedBy", have + (list(entry) if isinstance(entry, list) else [entry]))
        return []

    def _cleanup_placeholder_fields(self, p: Mapping[str, Any]) -> list[Row]:
        for f in self._placeholders_of("DatasetField"):
            if f.get("declared", False) is False and \
                    not f.outs(*FIELD_LINKS) and not f.ins(*FIELD_LINKS):
                self._delete(f)
        return []

    def _cleanup_placeholder_datasets(self, p: Mapping[str, Any]) -> list[Row]:
        for d in self._placeholders_of("Dataset"):
            if not d.outs("HasField") and not d.ins(*LINEAGE) \
                    and not d.ins("Read", "Wrote") and all(d.get(k) is None for k in (
                        "upstreamLineageTs", "datasetUpstreamLineageTs", "jobLineageDeletes", "editableTs")):
                self._delete(d)
        return []

    def _cleanup_placeholder_fields_in(self, p: Mapping[str, Any]) -> list[Row]:
        for urn in p["datasets"]:
            for f in self._fields_of(urn):
                if f.get("placeholder") is True and f.get("declared", False) is False \
                        and not f.outs(*FIELD_LINKS) and not f.ins(*FIELD_LINKS):
                    self._delete(f)
        return []

    def _cleanup_placeholder_datasets_in(self, p: Mapping[str, Any]) -> list[Row]:
        for urn in p["datasets"]:
            d = self._dataset(urn)
            if d is not None and d.get("placeholder") is True and not d.outs("HasField") and not d.ins(*LINEAGE) \
                    and not d.ins("Read", "Wrote") and all(d.get(k) is None for k in (
                        "upstreamLineageTs", "datasetUpstreamLineageTs", "jobLineageDeletes", "editableTs")):
                self._delete(d)
        return []

    def _read_upstream_datasets(self, p: Mapping[str, Any]) -> list[Row]:
        found: dict[Any, None] = {}
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs(*LINEAGE):
                    source = e.props.get("source")
                    if row.get("source") is not None and not eq(source, row["source"]):
                        continue
                    if row.get("queries") and not (isinstance(source, str) and source.startswith(QUERY)):
                        continue
                    owners = [h.start for h in e.end.ins("HasField") if h.start.label == "Dataset"]
                    for urn in [o.get("urn") for o in owners] or [e.end.get("urn")]:
                        found[urn] = None
        return [{"urn": u} for u in found]

    def _count_lineage_edges(self, p: Mapping[str, Any]) -> list[Row]:
        found = set()
        for row in p["rows"]:
            d = self._field(row["down"])
            for e in d.outs("DataDerivedFrom") if d is not None else ():
                if eq(e.end.get("urn"), row.get("up")) and eq(e.props.get("source"), row.get("source")):
                    found.add((row["down"], row["up"], row["source"]))
        return [{"n": len(found)}]

