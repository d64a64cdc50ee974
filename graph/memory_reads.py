"""The read statements on the in-memory graph: what the writer reads before planning, the walks, tags and terms,
job runs, listings, unused fields and the whole graph; each handler returns the rows its statement in ``cypher/``
returns on FalkorDB and Neo4j."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .memgraph import (
    JOB_FORMATS,
    LINEAGE,
    STATE_OF_DATASET,
    STATE_OF_FIELD,
    TIMES_OF_DATASET,
    Edge,
    MemoryGraph,
    Node,
    Row,
    by_path,
    eq,
    grouped,
    held,
    job_edge,
    le,
    lt,
    nulls_last,
    props_of,
    put,
    value,
)


class Reads(MemoryGraph):
    """The handlers of the read statements (``_<name>``, found by :class:`~.memory.MemoryStore`)."""

    # ---- reads the writer makes ----

    def _read_state(self, p: Mapping[str, Any]) -> list[Row]:
        groups: list[tuple[Any, Row, list[Any]]] = []
        for urn in p["urns"]:
            d = self._dataset(urn)
            if d is None:
                continue
            fields = [list(map(f.props.get, STATE_OF_FIELD)) for f in (e.end for e in d.outs("HasField"))
                      if f.label == "DatasetField"]
            groups.append((d.id, {"d": d}, fields or [[None] * len(STATE_OF_FIELD)]))  # OPTIONAL MATCH: nulls
        return [{"state": [*(r["d"].get(k) for k in STATE_OF_DATASET), r["fields"],
                           *(value(r["d"].get(k)) for k in TIMES_OF_DATASET)]}
                for r in grouped(groups, "fields")]

    def _read_schema_history(self, p: Mapping[str, Any]) -> list[Row]:
        groups: list[tuple[Any, Row, list[Any]]] = []
        for urn in p["urns"]:
            for f in self._fields_of(urn):
                if f.get("placeholder", False) is not False:
                    continue
                row = {"dataset": urn, "urn": f.get("urn"), "since": f.get("since", f.get("schemaTs", 0)),
                       "removed": f.get("removed", False),
                       **{k: value(f.get(k)) for k in ("type", "nativeDataType", "nullable", "description",
                                                        "isPartOfKey", "tags", "glossaryTerms")}}
                past = [props_of(e.end.props) for e in f.outs("HadState") if e.end.label == "FieldState"]
                groups.append(((urn, f.id), row, past))
        return grouped(groups, "past")

    def _read_lineage_history(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs(*LINEAGE):
                    if eq(e.props.get("source"), row.get("source")):
                        out.append({"dataset": row["datasetUrn"], "source": row["source"], "down": f.get("urn"),
                                    "up": e.end.get("urn"), "toDataset": e.end.get("datasetUrn") is None,
                                    "props": props_of(e.props)})
        return out

    def _read_job_history(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"dataset": urn, "down": f.get("urn"), "up": e.end.get("urn"), "props": props_of(e.props)}
                for urn in p["urns"] for f in self._fields_of(urn) for e in f.outs(*LINEAGE)
                if e.end.label == "DatasetField" and job_edge(e)]

    def _read_queries(self, p: Mapping[str, Any]) -> list[Row]:
        groups: list[tuple[Any, Row, list[Any]]] = []
        for urn in p["urns"]:
            q = self._node("Query", urn)
            if q is None:
                continue
            row = {k: value(q.get(k)) for k in ("urn", "statement", "language", "ts")}
            made = [[e.start.get("urn"), value(e.props.get("upstreams")), e.start.get("upstreamLineageTs")]
                    for e in q.ins("MadeByQuery") if e.start.label == "Dataset"]
            groups.append((q.id, row, made))
        return grouped(groups, "datasets")

    def _read_data_jobs(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"urn": j.get("urn"), "ts": j.get("ts"), "outputs": value(j.get("outputs"))}
                for j in (self._node("DataJob", urn) for urn in p["urns"]) if j is not None]

    def _read_dataset_queries(self, p: Mapping[str, Any]) -> list[Row]:
        groups: list[tuple[Any, Row, list[Any]]] = []
        for urn in p["urns"]:
            d = self._dataset(urn)
            if d is None:
                continue
            queries = [[e.end.get("urn"), e.end.get("statement"), e.end.get("ts"), value(e.props.get("upstreams"))]
                       for e in d.outs("MadeByQuery") if e.end.label == "Query"]
            groups.append((d.id, {"dataset": d.get("urn"), "ts": d.get("upstreamLineageTs")}, queries))
        return grouped(groups, "queries")

    # ---- walks ----

    @staticmethod
    def _hop(urn: str, f: Node, e: Edge) -> Row:
        return {"from": urn, "urn": f.get("urn"), "datasetUrn": f.get("datasetUrn"), "fieldPath": f.get("fieldPath"),
                "placeholder": f.get("placeholder"), "removed": f.get("removed"), "ambiguous": f.get("ambiguous"),
                "edge": props_of(e.props)}

    def _step(self, p: Mapping[str, Any], start_label: str, upstream: bool, as_of: bool, ever: bool = False
              ) -> list[Row]:
        """One hop from ``p["frontier"]``: along the edges that hold now, held ``as_of`` ``p["asOf"]``, or ``ever``
        held (now or once)."""
        out: list[Row] = []
        types = LINEAGE if as_of or ever else ("DataDerivedFrom",)
        for urn in p["frontier"]:
            n = self._node(start_label, urn)
            if n is None:
                continue
            if upstream:
                out.extend(self._hop(urn, e.end, e) for e in n.outs(*types) if not as_of or held(e, p["asOf"]))
            else:
                out.extend(self._hop(urn, e.start, e) for e in n.ins(*types)
                           if e.start.label == "DatasetField" and (not as_of or held(e, p["asOf"])))
        return out

    def _rename_step(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for into in (True, False):
            for urn in p["frontier"]:
                f = self._field(urn)
                if f is not None:
                    out.extend({**self._hop(urn, e.end if into else e.start, e), "into": into}
                               for e in (f.outs if into else f.ins)("RenamedFrom"))
        return out

    def _field_listings(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for urn in p["urns"]:
            f = self._field(urn)
            if f is not None:
                past = [[e.end.get(k) for k in ("validFrom", "validTo", "removed")] for e in f.outs("HadState")]
                out.append({"urn": urn, "since": f.get("since"), "removed": f.get("removed"),
                            "past": past or [[None, None, None]]})
        return out

    def _any_rename(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"renames": sum(1 for e in self._edges() if e.type == "RenamedFrom")}]

    def _upstream_step(self, p: Mapping[str, Any]) -> list[Row]:
        return self._step(p, "DatasetField", True, False)

    def _downstream_step(self, p: Mapping[str, Any]) -> list[Row]:
        return self._step(p, "DatasetField", False, False)

    def _dataset_downstream_step(self, p: Mapping[str, Any]) -> list[Row]:
        return self._step(p, "Dataset", False, False)

    def _upstream_step_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        return self._step(p, "DatasetField", True, True)

    def _downstream_step_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        return self._step(p, "DatasetField", False, True)

    def _dataset_downstream_step_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        return self._step(p, "Dataset", False, True)

    @staticmethod
    def _pasts(f: Node, as_of: Any) -> list[dict[str, Any] | None]:
        """``OPTIONAL MATCH (f)-[:HadState]->(h:FieldState) WHERE h.validFrom <= $asOf AND h.validTo > $asOf``,
        as ``properties(h)`` (None: no match)."""
        found = [props_of(e.end.props) for e in f.outs("HadState") if e.end.label == "FieldState"
                 and le(e.end.get("validFrom"), as_of) and lt(as_of, e.end.get("validTo"))]
        return list(found) or [None]

    def _field_states_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for urn in p["urns"]:
            f = self._field(urn)
            if f is None:
                continue
            row = {"urn": f.get("urn"), "placeholder": f.get("placeholder", False), "since": f.get("since", 0),
                   "removed": f.get("removed", False),
                   **{k: value(f.get(k)) for k in ("type", "nativeDataType", "nullable", "description",
                                                    "isPartOfKey", "tags", "glossaryTerms")}}
            out.extend({**row, "past": past} for past in self._pasts(f, p["asOf"]))
        return out

    def _field_presence_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        as_of = p["asOf"]
        out: dict[tuple[Any, ...], Row] = {}
        for urn in p["urns"]:
            f = self._field(urn)
            if f is None:
                continue
            refs = [*f.outs(*LINEAGE), *f.ins(*LINEAGE)]
            first = min((e.props.get("validFrom", 0) for e in refs), default=None)
            then = max((1 if held(e, as_of) else 0 for e in refs), default=0)
            jobs = [e.props.get("validFrom", 0) for e in f.outs(*LINEAGE)
                    if e.props.get("sourceFormat") in JOB_FORMATS]
            for h in f.ins("HasField"):
                if h.start.label != "Dataset":
                    continue
                listed = None if f.get("placeholder", False) else h.props.get("validFrom", 0)
                row = out.setdefault((urn, listed, first, then), {
                    "urn": urn, "listedFrom": listed, "firstReference": first, "firstJobReference": None,
                    "referencedThen": then})
                if jobs:
                    have = row["firstJobReference"]
                    row["firstJobReference"] = min(jobs) if have is None else min(have, *jobs)
        return list(out.values())

    def _dataset_fields(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for f in self._fields_of(p["urn"]):
            if f.get("placeholder", False) is False or f.outs("DataDerivedFrom") or f.ins("DataDerivedFrom") \
                    or f.get("declared") is True:
                out.append({k: value(f.get(k)) for k in ("urn", "fieldPath", "simplePath", "type", "nativeDataType",
                                                          "nullable", "isPartOfKey", "removed", "placeholder",
                                                          "description")})
        return by_path(out)

    def _dataset_fields_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for f in self._fields_of(p["urn"]):
            row = {**{k: value(f.get(k)) for k in ("urn", "fieldPath", "simplePath", "refPath")},
                   "placeholder": f.get("placeholder", False), "since": f.get("since", 0),
                   "removed": f.get("removed", False),
                   **{k: value(f.get(k)) for k in ("type", "nativeDataType", "nullable", "isPartOfKey", "description",
                                                    "declared")}}
            out.extend({**row, "past": past} for past in self._pasts(f, p["asOf"]))
        return by_path(out)

    def _dataset_edges_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        fields, as_of = self._fields_of(p["urn"]), p["asOf"]

        def edge(direction: str, down: Node, up: Node, e: Edge) -> Row:
            return {"direction": direction, "down": down.get("urn"), "up": up.get("urn"),
                    **{k: e.props.get(k) for k in ("source", "transformation", "kind")}}

        ins = [edge("in", f, e.end, e) for f in fields for e in f.outs(*LINEAGE) if held(e, as_of)]
        outs = [edge("out", e.start, f, e) for f in fields for e in f.ins(*LINEAGE)
                if e.start.label == "DatasetField" and held(e, as_of)]
        return ins + outs

    # ---- tags and terms ----

    def _field_labels(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for urn in p["frontier"]:
            f = self._field(urn)
            if f is None:
                continue
            d = self._dataset(f.get("datasetUrn"))
            out.append({**{k: value(f.get(k)) for k in ("urn", "datasetUrn", "fieldPath", "simplePath", "tags",
                                                         "glossaryTerms", "manualTags", "localTags")},
                        "editableLabels": d.get("editableLabels") if d is not None else None,
                        "droppedBy": value(f.get("droppedBy"))})
        return out

    @staticmethod
    def _labeled(row: Mapping[str, Any], state: Mapping[str, Any] | None, f: Node) -> bool:
        """Whether ``f`` carries ``row``'s tag or term: ``state``'s (the schema's) or set by hand."""
        tag, term = row.get("tag"), row.get("term")
        hand = [*(f.get("manualTags") or []), *(f.get("localTags") or [])]
        tags = (state or {}).get("tags") or []
        terms = (state or {}).get("glossaryTerms") or []
        return (tag is not None and (tag in tags or tag in hand)) or \
            (term is not None and (term in terms or f"urn:li:glossaryTerm:{term}" in hand))

    def _labeled_fields(self, p: Mapping[str, Any]) -> list[Row]:
        fields = self._all("DatasetField")
        found = {f.get("urn") for row in p["rows"] for f in fields if self._labeled(row, f.props, f)}
        return [{"urn": u} for u in sorted(found, key=lambda u: (u is None, u or ""))]

    def _labeled_fields_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        as_of = p["asOf"]
        found = set()
        for f in self._all("DatasetField"):
            if f.get("placeholder", False):
                states: list[Mapping[str, Any] | None] = [None]
            elif le(f.get("since", 0), as_of):
                states = [f.props]
            else:
                states = list(self._pasts(f, as_of))
            if any(self._labeled(row, s, f) for row in p["rows"] for s in states):
                found.add(f.get("urn"))
        return [{"urn": u} for u in sorted(found, key=lambda u: (u is None, u or ""))]

    def _editable_labeled_fields(self, p: Mapping[str, Any]) -> list[Row]:
        needle = p["needle"]
        return [{"urn": f.get("urn"), "simplePath": f.get("simplePath"), "editableLabels": d.get("editableLabels")}
                for d in self._all("Dataset")
                if isinstance(d.get("editableLabels"), str) and needle in d.get("editableLabels")
                for f in (e.end for e in d.outs("HasField")) if f.label == "DatasetField"]

    def _set_field_tags(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for row in p["rows"]:
            f = self._field(row["urn"])
            if f is None:
                continue
            add, remove = list(row.get("add") or []), list(row.get("remove") or [])
            spreading = [t for t in f.get("manualTags") or [] if t not in remove]
            local = [t for t in f.get("localTags") or [] if t not in remove]
            if row.get("local") is True:
                manual, kept = [t for t in spreading if t not in add], local + [t for t in add if t not in local]
            else:
                manual, kept = spreading + [t for t in add if t not in spreading], [t for t in local if t not in add]
            put(f.props, "manualTags", manual)
            put(f.props, "localTags", kept)
            out.append({"urn": f.get("urn"), "manualTags": value(f.get("manualTags")),
                        "localTags": value(f.get("localTags"))})
        return out

    # ---- job runs ----

    def _job_runs(self, p: Mapping[str, Any]) -> list[Row]:
        d = self._dataset(p["dataset"])
        if d is None:
            return []
        start, end, wrote = p.get("start"), p.get("end"), p.get("wrote")
        groups: list[tuple[Any, Row, list[Any]]] = []
        for rel in d.ins("Wrote", "Read"):
            r = rel.start
            if r.label != "JobRun" or (rel.type == "Wrote") != wrote:
                continue
            t = r.get("time")
            if (start is not None and not le(start, t)) or (end is not None and not lt(t, end)):
                continue
            row = {k: r.get(k) for k in ("job", "run", "time", "checksum")}
            written = [[w.get("urn"), value(w.get("jobLineageDeletes", []))]
                       for w in (e.end for e in r.outs("Wrote")) if w.label == "Dataset"]
            if written:
                groups.append((tuple(row.values()), row, written))
        return grouped(groups, "wrote")

    def _field_operations(self, p: Mapping[str, Any]) -> list[Row]:
        checksums = p.get("checksums") or []
        return [{"checksum": o.get("checksum"), "operations": o.get("operations")}
                for o in self._all("FieldOperations") if o.get("checksum") in checksums]

    # ---- listings ----

    def _stats_0(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"datasets": len(self._keys["Dataset"])}]

    def _stats_1(self, p: Mapping[str, Any]) -> list[Row]:
        n = 0
        for d in self._placeholders_of("Dataset"):
            fields = [e.end for e in d.outs("HasField") if e.end.label == "DatasetField"]
            n += bool(d.ins("DataDerivedFrom") or any(f.outs("DataDerivedFrom") or f.ins("DataDerivedFrom")
                                                      or f.get("declared") is True for f in fields))
        return [{"placeholderDatasets": n}]

    def _stats_2(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"fields": len(self._keys["DatasetField"])}]

    def _stats_3(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"removedFields": sum(f.get("removed") is True for f in self._all("DatasetField"))}]

    def _holding(self, ambiguous: bool = False) -> list[Node]:
        """Placeholder fields that hold now (a present edge refers to them, or a job declared them)."""
        return [f for f in self._placeholders_of("DatasetField")
                if (not ambiguous or f.get("ambiguous") is True)
                and (f.outs("DataDerivedFrom") or f.ins("DataDerivedFrom") or f.get("declared") is True)]

    def _stats_4(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"placeholderFields": len(self._holding())}]

    def _stats_5(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"ambiguousReferences": len(self._holding(ambiguous=True))}]

    def _stats_6(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"hasFieldEdges": sum(1 for d in self._all("Dataset") for e in d.outs("HasField")
                                      if e.end.label == "DatasetField")}]

    def _stats_7(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"dataDerivedFromEdges": sum(1 for e in self._edges() if e.type == "DataDerivedFrom")}]

    def _stats_8(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"pastDataDerivedFromEdges": sum(1 for e in self._edges() if e.type == "PreviouslyDerivedFrom")}]

    def _stats_9(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"pastFieldStates": sum(1 for n in self._nodes.values() if n.label == "FieldState")}]

    def _stats_10(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"renames": sum(1 for e in self._edges() if e.type == "RenamedFrom")}]

    def _placeholders(self, ambiguous: bool) -> list[Row]:
        out = []
        for f in self._holding(ambiguous):
            row = {"dataset": f.get("datasetUrn"), "reference": f.get("refPath"), "urn": f.get("urn")}
            if not ambiguous:
                row["ambiguous"] = f.get("ambiguous", False)
            row["candidates"] = value(f.get("candidates"))
            row["edges"] = len(f.outs("DataDerivedFrom")) + len(f.ins("DataDerivedFrom"))
            if not ambiguous:
                row["column"] = f.get("column")
            out.append(row)
        return sorted(out, key=lambda r: (r["dataset"] is None, r["dataset"] or "",
                                          r["reference"] is None, r["reference"] or ""))

    def _unresolved(self, p: Mapping[str, Any]) -> list[Row]:
        return self._placeholders(False)

    def _ambiguous(self, p: Mapping[str, Any]) -> list[Row]:
        return self._placeholders(True)

    def _dataset_lineage(self, p: Mapping[str, Any]) -> list[Row]:
        urn = p.get("urn")
        rolled: dict[tuple[Any, Any], Row] = {}
        for d in self._all("Dataset"):
            for f in (e.end for e in d.outs("HasField")):
                if f.label != "DatasetField":
                    continue
                for e in f.outs("DataDerivedFrom"):
                    down, up = d.get("urn"), e.end.get("datasetUrn", e.end.get("urn"))
                    if urn is not None and not (eq(down, urn) or eq(up, urn)):
                        continue
                    row = rolled.setdefault((down, up), {"downstream": down, "upstream": up, "fieldEdges": 0,
                                                         "transformations": []})
                    row["fieldEdges"] += 1
                    t = e.props.get("transformation")
                    if t is not None and t not in row["transformations"]:
                        row["transformations"].append(t)
        return sorted(rolled.values(), key=lambda r: (nulls_last(r["downstream"]), nulls_last(r["upstream"])))

    def _search_fields(self, p: Mapping[str, Any]) -> list[Row]:
        q = p["q"]
        out = [{"urn": f.get("urn"), "dataset": f.get("datasetUrn"), "fieldPath": f.get("fieldPath"),
                "simplePath": f.get("simplePath", f.get("fieldPath")), "placeholder": f.get("placeholder", False)}
               for f in self._all("DatasetField") if not f.get("removed", False)
               and any(isinstance(v, str) and q in v.lower() for v in (f.get("simplePath"), f.get("fieldPath")))]
        out.sort(key=lambda r: (nulls_last(None if r["simplePath"] is None else len(r["simplePath"])),
                                nulls_last(r["simplePath"]), nulls_last(r["urn"])))
        return out[:p["limit"]]

    def _search_datasets(self, p: Mapping[str, Any]) -> list[Row]:
        q = p["q"]
        found = sorted((d for d in self._all("Dataset")
                        if any(isinstance(v, str) and q in v.lower() for v in (d.get("name"), d.get("urn")))),
                       key=lambda d: (nulls_last(d.get("name")), nulls_last(d.get("urn"))))[:p["limit"]]
        out = [{"urn": d.get("urn"), "name": d.get("name"), "platform": d.get("platform"),
                "placeholder": d.get("placeholder", False),
                "fields": sum(1 for f in (e.end for e in d.outs("HasField")) if f.label == "DatasetField"
                              and f.get("placeholder", False) is False and f.get("removed", False) is False)}
               for d in found]
        return sorted(out, key=lambda r: (nulls_last(r["name"]), nulls_last(r["urn"])))

    # ---- unused fields ----

    def _unused_candidates(self, p: Mapping[str, Any]) -> Iterator[tuple[Node, Node]]:
        """``MATCH (d:Dataset)-[:HasField]->(f:DatasetField)`` with ``unused_fields``' tests on ``$dataset``,
        ``$platform`` and placeholders."""
        want, platform = p.get("dataset"), p.get("platform")
        datasets = self._all("Dataset") if want is None else [d for d in [self._dataset(want)] if d is not None]
        for d in datasets:
            if platform is not None and not eq(d.get("platform"), platform):
                continue
            for e in d.outs("HasField"):
                if e.end.label == "DatasetField" and e.end.get("placeholder") is not True:
                    yield d, e.end

    @staticmethod
    def _last_read(edges: Iterable[Edge], as_of: Any = None) -> Any:
        """``max(e.validTo)`` of ``edges`` (those ended at or before ``as_of``, if given)."""
        ends = [e.props.get("validTo") for e in edges]
        return max((t for t in ends if t is not None and (as_of is None or le(t, as_of))), default=None)

    def _unused_row(self, d: Node, f: Node, field_read: Any, dataset_read: Any) -> Row:
        return {"dataset": d.get("urn"), **{k: value(f.get(k)) for k in ("urn", "fieldPath", "simplePath", "type",
                                                                          "nativeDataType")},
                "fieldRead": field_read, "datasetRead": dataset_read}

    def _unused_fields(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for d, f in self._unused_candidates(p):
            if f.get("removed", False) is True or f.ins("DataDerivedFrom") or d.ins("DataDerivedFrom"):
                continue
            out.append(self._unused_row(d, f, self._last_read(f.ins("PreviouslyDerivedFrom")),
                                        self._last_read(d.ins("PreviouslyDerivedFrom"))))
        return sorted(out, key=lambda r: (nulls_last(r["dataset"]), nulls_last(r["fieldPath"])))

    def _unused_fields_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        as_of = p["asOf"]
        out: list[Row] = []
        for d, f in self._unused_candidates(p):
            reads, whole = f.ins(*LINEAGE), d.ins(*LINEAGE)
            if any(held(e, as_of) for e in (*reads, *whole)):
                continue
            row = {**self._unused_row(d, f, self._last_read(reads, as_of), self._last_read(whole, as_of)),
                   "since": f.get("since", 0), "removed": f.get("removed", False)}
            out.extend({**row, "past": past} for past in self._pasts(f, as_of))
        return sorted(out, key=lambda r: (nulls_last(r["dataset"]), nulls_last(r["fieldPath"])))

    # ---- whole graph ----

    def _snapshot_nodes(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"id": n.id, "labels": [n.label], "props": props_of(n.props)} for n in self._nodes.values()]

    def _snapshot_edges(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"a": e.start.id, "type": e.type, "b": e.end.id, "props": props_of(e.props)} for e in self._edges()]

    # ---- lineage over all time (the explorer's timeline) ----

    def _upstream_step_ever(self, p: Mapping[str, Any]) -> list[Row]:
        return self._step(p, "DatasetField", True, False, ever=True)

    def _downstream_step_ever(self, p: Mapping[str, Any]) -> list[Row]:
        return self._step(p, "DatasetField", False, False, ever=True)

