"""A graph store in plain Python: the property graph held in memory, behind the same store protocol.

It runs fieldgraph's named statements only (``cypher/``): :meth:`MemoryStore.run` recognises a statement by its
text and runs a Python handler that does what the statement does on FalkorDB and Neo4j (the same matches,
``MERGE``/``SET`` semantics, null-removal of properties, returned columns and value shapes). Nodes are found by
their key (``urn``; ``(job, run)`` for a job run; ``checksum`` for field operations), edges by each node's
adjacency per type, so lookups do not scan. For tests without a server, and for building a graph to bulk-load.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import count
from typing import Any

from fieldgraph.bulk import gc_paused

from . import cypher as cy
from .errors import GraphRefused
from .snapshot import EdgeRow, NodeRow, Snapshot
from .store import STORE_SCHEMES, GraphStore

Row = dict[str, Any]

#: the key property of each keyed label (a job run's key is ``(job, run)``)
_KEYED = {"Dataset": "urn", "DatasetField": "urn", "Query": "urn", "DataJob": "urn", "FieldOperations": "checksum"}
_LINEAGE = ("DataDerivedFrom", "PreviouslyDerivedFrom")
#: what keeps a placeholder field: lineage, present or past, and renames
_FIELD_LINKS = (*_LINEAGE, "RenamedFrom")
_JOB_FORMATS = ("cdap", "openlineage", "sql")
_QUERY = "urn:li:query:"
_MANUAL = "manual"
#: the columns of read_state.cypher's compact rows
_STATE_OF_DATASET = ("urn", "placeholder", "schemaVersion", "schemaTs", "upstreamLineageTs", "datasetUpstreamLineageTs")
_STATE_OF_FIELD = ("urn", "fieldPath", "placeholder", "removed", "schemaVersion", "schemaTs", "refPath", "position",
                   "fieldId", "aliases", "column")
_TIMES_OF_DATASET = ("schemaTimes", "upstreamLineageTimes", "datasetUpstreamLineageTimes", "jobLineageDeletes")
#: the value types a store keeps as they are (no null to remove, no list to copy): a mapping of only these is
#: copied or merged whole
_SCALARS = frozenset({str, int, bool, float})


class _Node:
    """A node: its label, properties and edges by type and id, out and in (ids keep insertion order)."""

    __slots__ = ("id", "inn", "label", "out", "props")

    def __init__(self, id: int, label: str, props: dict[str, Any]) -> None:
        self.id = id
        self.label = label
        self.props = props
        self.out: dict[str, dict[int, _Edge]] = {}
        self.inn: dict[str, dict[int, _Edge]] = {}

    def outs(self, *types: str) -> list[_Edge]:
        """Its outgoing edges of ``types`` (a copy: the caller may delete them)."""
        if len(types) == 1:
            edges = self.out.get(types[0])
            return list(edges.values()) if edges else []
        return [e for t in types for e in self.out.get(t, {}).values()]

    def ins(self, *types: str) -> list[_Edge]:
        if len(types) == 1:
            edges = self.inn.get(types[0])
            return list(edges.values()) if edges else []
        return [e for t in types for e in self.inn.get(t, {}).values()]

    def get(self, key: str, default: Any = None) -> Any:
        return self.props.get(key, default)


class _Edge:
    """A directed edge with its properties."""

    __slots__ = ("end", "id", "props", "start", "type")

    def __init__(self, id: int, type: str, start: _Node, end: _Node, props: dict[str, Any]) -> None:
        self.id = id
        self.type = type
        self.start = start
        self.end = end
        self.props = props


def _value(v: Any) -> Any:
    """A property value as a store keeps it: lists copied (tuples become lists)."""
    return list(v) if isinstance(v, (list, tuple)) else v


def _update(props: dict[str, Any], new: Mapping[str, Any] | None) -> None:
    """``SET x += new``: null values remove their key."""
    if not new:
        return
    if _SCALARS.issuperset(map(type, new.values())):  # the common case: nothing to remove or copy
        props.update(new)
        return
    for k, v in new.items():
        if v is None:
            props.pop(k, None)
        else:
            props[k] = list(v) if isinstance(v, (list, tuple)) else v


def _put(props: dict[str, Any], key: str, v: Any) -> None:
    """``SET x.key = v``: null removes the key."""
    if v is None:
        props.pop(key, None)
    else:
        props[key] = _value(v)


def _props(props: dict[str, Any]) -> dict[str, Any]:
    """``properties(x)``: a copy (lists copied too)."""
    if _SCALARS.issuperset(map(type, props.values())):
        return props.copy()
    return {k: _value(v) for k, v in props.items()}


def _eq(a: Any, b: Any) -> bool:
    """Cypher ``a = b`` taken as a filter (null on either side: no match)."""
    return a is not None and b is not None and a == b


def _lt(a: Any, b: Any) -> bool:
    return a is not None and b is not None and a < b


def _le(a: Any, b: Any) -> bool:
    return a is not None and b is not None and a <= b


def _held(e: _Edge, as_of: Any) -> bool:
    """``coalesce(e.validFrom, 0) <= $asOf AND (e.validTo IS NULL OR e.validTo > $asOf)``."""
    to = e.props.get("validTo")
    return _le(e.props.get("validFrom", 0), as_of) and (to is None or _lt(as_of, to))


def _job_edge(e: _Edge) -> bool:
    """``e.sourceFormat IN ['cdap', 'openlineage', 'sql'] AND NOT e.source STARTS WITH 'urn:li:query:'``."""
    src = e.props.get("source")
    return e.props.get("sourceFormat") in _JOB_FORMATS and isinstance(src, str) and not src.startswith(_QUERY)


def _query_edge(e: _Edge, row: Mapping[str, Any]) -> bool:
    """The query-derived edge ``close_query_lineage`` / ``drop_query_lineage`` end (without the time test)."""
    src, only = e.props.get("source"), row.get("only")
    return (e.props.get("sourceFormat") == "sql" and isinstance(src, str) and src.startswith(_QUERY)
            and src not in (row.get("keep") or []) and (only is None or src == only))


def _grouped(rows: Iterable[tuple[Any, Row, list[Any]]], into: str) -> list[Row]:
    """Rows aggregated as Cypher's ``collect`` does: one per grouping key (first seen first), ``into`` the
    collected values (nulls dropped)."""
    out: dict[Any, Row] = {}
    for key, row, values in rows:
        have = out.setdefault(key, {**row, into: []})
        have[into].extend(v for v in values if v is not None)
    return list(out.values())


def _order(v: Any) -> tuple[bool, Any]:
    """A sort key for one ``ORDER BY`` value (nulls last)."""
    return (v is None, "" if v is None else v)


def _by_path(rows: list[Row]) -> list[Row]:
    """``ORDER BY fieldPath``."""
    return sorted(rows, key=lambda r: _order(r["fieldPath"]))


class MemoryStore(GraphStore):
    """A property graph in plain Python that runs fieldgraph's named statements (nothing else)."""

    backend = "memory"

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._writer = threading.Lock()
        self._handlers: dict[str, Callable[[Mapping[str, Any]], list[Row]]] = {}
        self._unknown: dict[str, str] = {}
        for name in cy.names():
            texts = cy.statements(name)
            for i, text in enumerate(texts):
                handler = getattr(self, f"_{name}" if len(texts) == 1 else f"_{name}_{i}", None)
                if handler is not None:
                    self._handlers[text] = handler
                else:
                    self._unknown[text] = name
        self.clear()

    def describe(self) -> str:
        return "the in-memory graph"

    def _ping(self, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [{"ok": 1}]

    def run(self, cypher: str, params: Mapping[str, Any] | None = None, *, write: bool = False,
            timeout_ms: int | None = None) -> list[dict[str, Any]]:
        text = cypher.strip()
        handler = self._handlers.get(text)
        if handler is None:
            if text in self._unknown:
                raise GraphRefused(f"the in-memory store does not run the statement {self._unknown[text]!r} (yet)")
            first = text.splitlines()[0][:120] if text else ""
            raise GraphRefused(f"the in-memory store runs fieldgraph's named statements only; {first!r} is not one")
        with self._lock:
            return handler(params or {})

    def run_step(self, name: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """A plan's step, applied by its handler (no statement text to look up)."""
        handler = getattr(self, f"_{name}", None)
        if handler is None:
            raise GraphRefused(f"the in-memory store does not run the statement {name!r} (yet)")
        with self._lock:
            handler({"rows": rows})

    def read_state(self, urns: Sequence[str]) -> list[list[Any]]:
        with self._lock:
            return [r["state"] for r in self._read_state({"urns": urns})]

    def _lock_writer(self, keys: list[str]) -> None:
        """One writer's read -> plan -> write at a time among this process's threads, whatever its keys (the graph is
        theirs only, and its statements are quick)."""
        self._writer.acquire()

    def _unlock_writer(self) -> None:
        self._writer.release()

    def locks_unbroken(self) -> bool:
        """A thread lock does not end under its holder."""
        return self.held_keys() is not None

    def ensure_schema(self) -> None:
        return None

    def clear(self) -> None:
        with self._lock:
            self._ids = count()
            self._nodes: dict[int, _Node] = {}
            self._keys: dict[str, dict[Any, _Node]] = {label: {} for label in (*_KEYED, "JobRun")}
            #: every node marked a placeholder (and maybe some no longer marked): what the cleanups look at
            self._flagged: dict[int, _Node] = {}

    def snapshot(self) -> Snapshot:
        with self._lock, gc_paused():  # many rows, no cycles among them
            return Snapshot([NodeRow(n.id, n.label, _props(n.props)) for n in self._nodes.values()],
                            [EdgeRow(e.start.id, e.type, e.end.id, _props(e.props)) for e in self._edges()])

    def take_snapshot(self) -> Snapshot:
        """The snapshot, its rows holding the store's own property maps (not copies), and the store emptied: for
        a graph built only to be exported (a bulk load), where copying them costs more than the rest."""
        with self._lock, gc_paused():
            out = Snapshot([NodeRow(n.id, n.label, n.props) for n in self._nodes.values()],
                           [EdgeRow(e.start.id, e.type, e.end.id, e.props) for e in self._edges()])
            self.clear()
            return out

    # ---- the graph ----

    def _edges(self) -> Iterator[_Edge]:
        for n in self._nodes.values():
            for edges in n.out.values():
                yield from edges.values()

    def _node(self, label: str, key: Any) -> _Node | None:
        return None if key is None else self._keys[label].get(key)

    def _field(self, urn: Any) -> _Node | None:
        return self._node("DatasetField", urn)

    def _dataset(self, urn: Any) -> _Node | None:
        return self._node("Dataset", urn)

    def _create(self, label: str, props: Mapping[str, Any] | None = None) -> _Node:
        n = _Node(next(self._ids), label, {})
        self._nodes[n.id] = n
        self._set(n, props)
        key = _key(label, n.props)
        if key is not None:
            self._keys[label][key] = n
        return n

    def _merge(self, label: str, key: Any) -> tuple[_Node, bool]:
        """``MERGE (n:Label {key})``: the node, and whether it was created."""
        n = self._node(label, key)
        if n is not None:
            return n, False
        if key is None:
            raise GraphRefused(f"cannot MERGE a {label} node with a null key")
        props = {"job": key[0], "run": key[1]} if label == "JobRun" else {_KEYED[label]: key}
        return self._create(label, props), True

    def _delete(self, n: _Node) -> None:
        """``DETACH DELETE n``."""
        for e in [*n.outs(*n.out), *n.ins(*n.inn)]:
            self._unlink(e)
        self._nodes.pop(n.id, None)
        self._flagged.pop(n.id, None)
        key = _key(n.label, n.props)
        if key is not None and self._keys[n.label].get(key) is n:
            del self._keys[n.label][key]

    def _link(self, a: _Node, type: str, b: _Node, props: Mapping[str, Any] | None = None) -> _Edge:
        e = _Edge(next(self._ids), type, a, b, {})
        _update(e.props, props)
        a.out.setdefault(type, {})[e.id] = e
        b.inn.setdefault(type, {})[e.id] = e
        return e

    def _unlink(self, e: _Edge) -> None:
        e.start.out.get(e.type, {}).pop(e.id, None)
        e.end.inn.get(e.type, {}).pop(e.id, None)

    def _between(self, a: _Node, type: str, b: _Node, **match: Any) -> list[_Edge]:
        """The ``type`` edges from ``a`` to ``b`` whose properties equal ``match`` (read from the smaller side)."""
        outs, ins = a.out.get(type), b.inn.get(type)
        if not outs or not ins:
            return []
        edges = [e for e in outs.values() if e.end is b] if len(outs) <= len(ins) else \
            [e for e in ins.values() if e.start is a]
        if not match:
            return edges
        return [e for e in edges if all(_eq(e.props.get(k), v) for k, v in match.items())]

    def _merge_edge(self, a: _Node, type: str, b: _Node, **match: Any) -> tuple[list[_Edge], bool]:
        """``MERGE (a)-[e:TYPE {match}]->(b)``: the edges matched (or the one created), and whether created."""
        found = self._between(a, type, b, **match)
        if found:
            return found, False
        if any(v is None for v in match.values()):
            raise GraphRefused(f"cannot MERGE a {type} edge with a null property")
        return [self._link(a, type, b, match)], True

    def _fields_of(self, urn: Any) -> list[_Node]:
        """``(:Dataset {urn})-[:HasField]->(f:DatasetField)``."""
        d = self._dataset(urn)
        return [] if d is None else [e.end for e in d.outs("HasField") if e.end.label == "DatasetField"]

    def _set(self, n: _Node, new: Mapping[str, Any] | None) -> None:
        """``SET n += new`` on a node, noting a placeholder."""
        _update(n.props, new)
        if n.props.get("placeholder") is True:
            self._flagged[n.id] = n

    def _placeholders_of(self, label: str) -> list[_Node]:
        """The ``label`` nodes marked ``placeholder: true`` (without scanning the others)."""
        out = []
        for n in list(self._flagged.values()):
            if n.props.get("placeholder") is not True:
                del self._flagged[n.id]
            elif n.label == label:
                out.append(n)
        return out

    def _all(self, label: str) -> list[_Node]:
        if label in self._keys:
            return list(self._keys[label].values())
        return [n for n in self._nodes.values() if n.label == label]

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
            if not (row.get("unstamped") is True or _le(stored, ts)):
                continue
            _put(d.props, "editableLabels", row.get("labels"))
            _put(d.props, "editableTs", d.get("editableTs") if _lt(ts, stored) else ts)
        return []

    def _archive_field_states(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            f = self._field(row["urn"])
            if f is None or f.get("stateKey") is None or not _lt(f.get("since", 0), row.get("at")):
                continue
            removed, key = f.get("removed", False), row.get("stateKey")
            if not (removed != row.get("removed") or (key is not None and f.get("stateKey") != key)):
                continue
            state = {"validFrom": f.get("since", 0), "validTo": row["at"], "removed": removed,
                     **{k: f.get(k) for k in ("stateKey", "type", "nativeDataType", "nullable", "description",
                                              "isPartOfKey", "tags", "glossaryTerms")}}
            self._link(f, "HadState", self._create("FieldState", state))
            _put(f.props, "since", row["at"])
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
            f, _ = self._merge("DatasetField", row["urn"])
            self._set(f, row.get("props"))
            at = row.get("at")
            _put(f.props, "since", f.props.get("since", at))
            for h in self._merge_edge(d, "HasField", f)[0]:
                if h.props.get("validFrom") is None or _lt(at, h.props["validFrom"]):
                    _put(h.props, "validFrom", at)
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
                    _put(h.props, "validFrom", row.get("listedFrom"))
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
                        _update(n.props, _props(e.props))
                else:
                    self._link(a, type, b, _props(e.props))
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

    def _close(self, e: _Edge, at: Any) -> _Edge:
        """``CREATE (d)-[p:PreviouslyDerivedFrom]->(u) SET p = properties(e), p.validTo = at DELETE e``: ``p``."""
        past = self._link(e.start, "PreviouslyDerivedFrom", e.end, _props(e.props))
        _put(past.props, "validTo", at)
        self._unlink(e)
        return past

    def _close_lineage(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            keep = {tuple(k) for k in row.get("keep") or []}
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs("DataDerivedFrom"):
                    if _eq(e.props.get("source"), row.get("source")) and \
                            (f.get("urn"), e.end.get("urn"), e.props.get("fact", "")) not in keep:
                        self._close(e, row.get("at"))
        return []

    def _clear_lineage(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs(*_LINEAGE):
                    if _eq(e.props.get("source"), row.get("source")):
                        self._unlink(e)
        return []

    def _clear_job_lineage(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs(*_LINEAGE):
                    if _job_edge(e):
                        self._unlink(e)
        return []

    def _close_query_lineage(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs("DataDerivedFrom"):
                    if _query_edge(e, row) and _lt(e.props.get("validFrom", 0), row.get("at")):
                        self._close(e, row.get("at"))
        return []

    def _drop_query_lineage(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs("DataDerivedFrom"):
                    if _query_edge(e, row):
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
            edges, created = self._merge_edge(d, "DataDerivedFrom", u, source=row.get("source"), fact=row.get("fact"))
            for e in edges:
                if created:
                    _put(e.props, "validFrom", row.get("validFrom"))
                    _put(e.props, "firstSeen", row.get("validFrom"))
                _update(e.props, row.get("props"))
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
                    _update(e.props, row.get("props"))
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
                newer = had_last is None or _le(had_last, last)
                _put(e.props, "firstSeen", first if had_first is None or _lt(first, had_first) else had_first)
                _put(e.props, "lastSeen", last if newer else had_last)
                if newer:
                    _update(e.props, row.get("props"))
                _put(e.props, "validFrom", e.props.get("firstSeen"))
        return []

    def _merge_manual_edges(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            d, u = self._field(row["down"]), self._field(row["up"])
            if d is None or u is None:
                continue
            at = row.get("at")
            if any(_eq(e.props.get("source"), _MANUAL) and _lt(at, e.props.get("validTo"))
                   for e in self._between(d, "PreviouslyDerivedFrom", u)):
                continue  # removed after `at`: a late drawing, ended already
            edges, created = self._merge_edge(d, "DataDerivedFrom", u, source=_MANUAL)
            if created:
                for e in edges:
                    _update(e.props, row.get("props"))
                    for k in ("validFrom", "firstSeen", "lastSeen"):
                        _put(e.props, k, at)
        return []

    def _close_manual_edges(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            d, u = self._field(row["down"]), self._field(row["up"])
            if d is None or u is None:
                continue
            for e in self._between(d, "DataDerivedFrom", u, source=_MANUAL):
                if _le(e.props.get("validFrom", 0), row.get("at")):
                    _put(self._close(e, row.get("at")).props, "removedBy", row.get("by"))
        return []

    def _upsert_queries(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            q, _ = self._merge("Query", row["urn"])
            if q.get("ts") is None or _le(q.get("ts"), row.get("ts")):
                for k in ("statement", "language", "ts"):
                    _put(q.props, k, row.get(k))
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
                _put(r.props, "upstreams", row.get("upstreams"))
        return []

    def _upsert_data_jobs(self, p: Mapping[str, Any]) -> list[Row]:
        for row in p["rows"]:
            j, _ = self._merge("DataJob", row["urn"])
            _put(j.props, "ts", row.get("ts"))
            _put(j.props, "outputs", row.get("outputs"))
        return []

    def _run(self, row: Mapping[str, Any]) -> _Node | None:
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
                _put(o.props, "operations", row.get("operations"))
            job, run = row.get("job"), row.get("run")
            r, _ = self._merge("JobRun", None if job is None or run is None else (job, run))
            _put(r.props, "time", row.get("time"))
            _put(r.props, "checksum", row.get("checksum"))
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
            _put(f.props, "droppedBy", have + (list(entry) if isinstance(entry, list) else [entry]))
        return []

    def _cleanup_placeholder_fields(self, p: Mapping[str, Any]) -> list[Row]:
        for f in self._placeholders_of("DatasetField"):
            if f.get("declared", False) is False and \
                    not f.outs(*_FIELD_LINKS) and not f.ins(*_FIELD_LINKS):
                self._delete(f)
        return []

    def _cleanup_placeholder_datasets(self, p: Mapping[str, Any]) -> list[Row]:
        for d in self._placeholders_of("Dataset"):
            if not d.outs("HasField") and not d.ins(*_LINEAGE) \
                    and not d.ins("Read", "Wrote") and all(d.get(k) is None for k in (
                        "upstreamLineageTs", "datasetUpstreamLineageTs", "jobLineageDeletes", "editableTs")):
                self._delete(d)
        return []

    def _cleanup_placeholder_fields_in(self, p: Mapping[str, Any]) -> list[Row]:
        for urn in p["datasets"]:
            for f in self._fields_of(urn):
                if f.get("placeholder") is True and f.get("declared", False) is False \
                        and not f.outs(*_FIELD_LINKS) and not f.ins(*_FIELD_LINKS):
                    self._delete(f)
        return []

    def _cleanup_placeholder_datasets_in(self, p: Mapping[str, Any]) -> list[Row]:
        for urn in p["datasets"]:
            d = self._dataset(urn)
            if d is not None and d.get("placeholder") is True and not d.outs("HasField") and not d.ins(*_LINEAGE) \
                    and not d.ins("Read", "Wrote") and all(d.get(k) is None for k in (
                        "upstreamLineageTs", "datasetUpstreamLineageTs", "jobLineageDeletes", "editableTs")):
                self._delete(d)
        return []

    def _read_upstream_datasets(self, p: Mapping[str, Any]) -> list[Row]:
        found: dict[Any, None] = {}
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs(*_LINEAGE):
                    source = e.props.get("source")
                    if row.get("source") is not None and not _eq(source, row["source"]):
                        continue
                    if row.get("queries") and not (isinstance(source, str) and source.startswith(_QUERY)):
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
                if _eq(e.end.get("urn"), row.get("up")) and _eq(e.props.get("source"), row.get("source")):
                    found.add((row["down"], row["up"], row["source"]))
        return [{"n": len(found)}]

    # ---- reads the writer makes ----

    def _read_state(self, p: Mapping[str, Any]) -> list[Row]:
        groups: list[tuple[Any, Row, list[Any]]] = []
        for urn in p["urns"]:
            d = self._dataset(urn)
            if d is None:
                continue
            fields = [list(map(f.props.get, _STATE_OF_FIELD)) for f in (e.end for e in d.outs("HasField"))
                      if f.label == "DatasetField"]
            groups.append((d.id, {"d": d}, fields or [[None] * len(_STATE_OF_FIELD)]))  # OPTIONAL MATCH: nulls
        return [{"state": [*(r["d"].get(k) for k in _STATE_OF_DATASET), r["fields"],
                           *(_value(r["d"].get(k)) for k in _TIMES_OF_DATASET)]}
                for r in _grouped(groups, "fields")]

    def _read_schema_history(self, p: Mapping[str, Any]) -> list[Row]:
        groups: list[tuple[Any, Row, list[Any]]] = []
        for urn in p["urns"]:
            for f in self._fields_of(urn):
                if f.get("placeholder", False) is not False:
                    continue
                row = {"dataset": urn, "urn": f.get("urn"), "since": f.get("since", f.get("schemaTs", 0)),
                       "removed": f.get("removed", False),
                       **{k: _value(f.get(k)) for k in ("type", "nativeDataType", "nullable", "description",
                                                        "isPartOfKey", "tags", "glossaryTerms")}}
                past = [_props(e.end.props) for e in f.outs("HadState") if e.end.label == "FieldState"]
                groups.append(((urn, f.id), row, past))
        return _grouped(groups, "past")

    def _read_lineage_history(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for row in p["rows"]:
            for f in self._fields_of(row["datasetUrn"]):
                for e in f.outs(*_LINEAGE):
                    if _eq(e.props.get("source"), row.get("source")):
                        out.append({"dataset": row["datasetUrn"], "source": row["source"], "down": f.get("urn"),
                                    "up": e.end.get("urn"), "toDataset": e.end.get("datasetUrn") is None,
                                    "props": _props(e.props)})
        return out

    def _read_job_history(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"dataset": urn, "down": f.get("urn"), "up": e.end.get("urn"), "props": _props(e.props)}
                for urn in p["urns"] for f in self._fields_of(urn) for e in f.outs(*_LINEAGE)
                if e.end.label == "DatasetField" and _job_edge(e)]

    def _read_queries(self, p: Mapping[str, Any]) -> list[Row]:
        groups: list[tuple[Any, Row, list[Any]]] = []
        for urn in p["urns"]:
            q = self._node("Query", urn)
            if q is None:
                continue
            row = {k: _value(q.get(k)) for k in ("urn", "statement", "language", "ts")}
            made = [[e.start.get("urn"), _value(e.props.get("upstreams")), e.start.get("upstreamLineageTs")]
                    for e in q.ins("MadeByQuery") if e.start.label == "Dataset"]
            groups.append((q.id, row, made))
        return _grouped(groups, "datasets")

    def _read_data_jobs(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"urn": j.get("urn"), "ts": j.get("ts"), "outputs": _value(j.get("outputs"))}
                for j in (self._node("DataJob", urn) for urn in p["urns"]) if j is not None]

    def _read_dataset_queries(self, p: Mapping[str, Any]) -> list[Row]:
        groups: list[tuple[Any, Row, list[Any]]] = []
        for urn in p["urns"]:
            d = self._dataset(urn)
            if d is None:
                continue
            queries = [[e.end.get("urn"), e.end.get("statement"), e.end.get("ts"), _value(e.props.get("upstreams"))]
                       for e in d.outs("MadeByQuery") if e.end.label == "Query"]
            groups.append((d.id, {"dataset": d.get("urn"), "ts": d.get("upstreamLineageTs")}, queries))
        return _grouped(groups, "queries")

    # ---- walks ----

    @staticmethod
    def _hop(urn: str, f: _Node, e: _Edge) -> Row:
        return {"from": urn, "urn": f.get("urn"), "datasetUrn": f.get("datasetUrn"), "fieldPath": f.get("fieldPath"),
                "placeholder": f.get("placeholder"), "removed": f.get("removed"), "ambiguous": f.get("ambiguous"),
                "edge": _props(e.props)}

    def _step(self, p: Mapping[str, Any], start_label: str, upstream: bool, as_of: bool, ever: bool = False
              ) -> list[Row]:
        """One hop from ``p["frontier"]``: along the edges that hold now, held ``as_of`` ``p["asOf"]``, or ``ever``
        held (now or once)."""
        out: list[Row] = []
        types = _LINEAGE if as_of or ever else ("DataDerivedFrom",)
        for urn in p["frontier"]:
            n = self._node(start_label, urn)
            if n is None:
                continue
            if upstream:
                out.extend(self._hop(urn, e.end, e) for e in n.outs(*types) if not as_of or _held(e, p["asOf"]))
            else:
                out.extend(self._hop(urn, e.start, e) for e in n.ins(*types)
                           if e.start.label == "DatasetField" and (not as_of or _held(e, p["asOf"])))
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
    def _pasts(f: _Node, as_of: Any) -> list[dict[str, Any] | None]:
        """``OPTIONAL MATCH (f)-[:HadState]->(h:FieldState) WHERE h.validFrom <= $asOf AND h.validTo > $asOf``,
        as ``properties(h)`` (None: no match)."""
        found = [_props(e.end.props) for e in f.outs("HadState") if e.end.label == "FieldState"
                 and _le(e.end.get("validFrom"), as_of) and _lt(as_of, e.end.get("validTo"))]
        return list(found) or [None]

    def _field_states_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for urn in p["urns"]:
            f = self._field(urn)
            if f is None:
                continue
            row = {"urn": f.get("urn"), "placeholder": f.get("placeholder", False), "since": f.get("since", 0),
                   "removed": f.get("removed", False),
                   **{k: _value(f.get(k)) for k in ("type", "nativeDataType", "nullable", "description",
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
            refs = [*f.outs(*_LINEAGE), *f.ins(*_LINEAGE)]
            first = min((e.props.get("validFrom", 0) for e in refs), default=None)
            then = max((1 if _held(e, as_of) else 0 for e in refs), default=0)
            jobs = [e.props.get("validFrom", 0) for e in f.outs(*_LINEAGE)
                    if e.props.get("sourceFormat") in _JOB_FORMATS]
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
                out.append({k: _value(f.get(k)) for k in ("urn", "fieldPath", "simplePath", "type", "nativeDataType",
                                                          "nullable", "isPartOfKey", "removed", "placeholder",
                                                          "description")})
        return _by_path(out)

    def _dataset_fields_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for f in self._fields_of(p["urn"]):
            row = {**{k: _value(f.get(k)) for k in ("urn", "fieldPath", "simplePath", "refPath")},
                   "placeholder": f.get("placeholder", False), "since": f.get("since", 0),
                   "removed": f.get("removed", False),
                   **{k: _value(f.get(k)) for k in ("type", "nativeDataType", "nullable", "isPartOfKey", "description",
                                                    "declared")}}
            out.extend({**row, "past": past} for past in self._pasts(f, p["asOf"]))
        return _by_path(out)

    def _dataset_edges_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        fields, as_of = self._fields_of(p["urn"]), p["asOf"]

        def edge(direction: str, down: _Node, up: _Node, e: _Edge) -> Row:
            return {"direction": direction, "down": down.get("urn"), "up": up.get("urn"),
                    **{k: e.props.get(k) for k in ("source", "transformation", "kind")}}

        ins = [edge("in", f, e.end, e) for f in fields for e in f.outs(*_LINEAGE) if _held(e, as_of)]
        outs = [edge("out", e.start, f, e) for f in fields for e in f.ins(*_LINEAGE)
                if e.start.label == "DatasetField" and _held(e, as_of)]
        return ins + outs

    # ---- tags and terms ----

    def _field_labels(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for urn in p["frontier"]:
            f = self._field(urn)
            if f is None:
                continue
            d = self._dataset(f.get("datasetUrn"))
            out.append({**{k: _value(f.get(k)) for k in ("urn", "datasetUrn", "fieldPath", "simplePath", "tags",
                                                         "glossaryTerms", "manualTags", "localTags")},
                        "editableLabels": d.get("editableLabels") if d is not None else None,
                        "droppedBy": _value(f.get("droppedBy"))})
        return out

    @staticmethod
    def _labeled(row: Mapping[str, Any], state: Mapping[str, Any] | None, f: _Node) -> bool:
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
            elif _le(f.get("since", 0), as_of):
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
            _put(f.props, "manualTags", manual)
            _put(f.props, "localTags", kept)
            out.append({"urn": f.get("urn"), "manualTags": _value(f.get("manualTags")),
                        "localTags": _value(f.get("localTags"))})
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
            if (start is not None and not _le(start, t)) or (end is not None and not _lt(t, end)):
                continue
            row = {k: r.get(k) for k in ("job", "run", "time", "checksum")}
            written = [[w.get("urn"), _value(w.get("jobLineageDeletes", []))]
                       for w in (e.end for e in r.outs("Wrote")) if w.label == "Dataset"]
            if written:
                groups.append((tuple(row.values()), row, written))
        return _grouped(groups, "wrote")

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

    def _holding(self, ambiguous: bool = False) -> list[_Node]:
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
            row["candidates"] = _value(f.get("candidates"))
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
                    if urn is not None and not (_eq(down, urn) or _eq(up, urn)):
                        continue
                    row = rolled.setdefault((down, up), {"downstream": down, "upstream": up, "fieldEdges": 0,
                                                         "transformations": []})
                    row["fieldEdges"] += 1
                    t = e.props.get("transformation")
                    if t is not None and t not in row["transformations"]:
                        row["transformations"].append(t)
        return sorted(rolled.values(), key=lambda r: (_order(r["downstream"]), _order(r["upstream"])))

    def _search_fields(self, p: Mapping[str, Any]) -> list[Row]:
        q = p["q"]
        out = [{"urn": f.get("urn"), "dataset": f.get("datasetUrn"), "fieldPath": f.get("fieldPath"),
                "simplePath": f.get("simplePath", f.get("fieldPath")), "placeholder": f.get("placeholder", False)}
               for f in self._all("DatasetField") if not f.get("removed", False)
               and any(isinstance(v, str) and q in v.lower() for v in (f.get("simplePath"), f.get("fieldPath")))]
        out.sort(key=lambda r: (_order(None if r["simplePath"] is None else len(r["simplePath"])),
                                _order(r["simplePath"]), _order(r["urn"])))
        return out[:p["limit"]]

    def _search_datasets(self, p: Mapping[str, Any]) -> list[Row]:
        q = p["q"]
        found = sorted((d for d in self._all("Dataset")
                        if any(isinstance(v, str) and q in v.lower() for v in (d.get("name"), d.get("urn")))),
                       key=lambda d: (_order(d.get("name")), _order(d.get("urn"))))[:p["limit"]]
        out = [{"urn": d.get("urn"), "name": d.get("name"), "platform": d.get("platform"),
                "placeholder": d.get("placeholder", False),
                "fields": sum(1 for f in (e.end for e in d.outs("HasField")) if f.label == "DatasetField"
                              and f.get("placeholder", False) is False and f.get("removed", False) is False)}
               for d in found]
        return sorted(out, key=lambda r: (_order(r["name"]), _order(r["urn"])))

    # ---- unused fields ----

    def _unused_candidates(self, p: Mapping[str, Any]) -> Iterator[tuple[_Node, _Node]]:
        """``MATCH (d:Dataset)-[:HasField]->(f:DatasetField)`` with ``unused_fields``' tests on ``$dataset``,
        ``$platform`` and placeholders."""
        want, platform = p.get("dataset"), p.get("platform")
        datasets = self._all("Dataset") if want is None else [d for d in [self._dataset(want)] if d is not None]
        for d in datasets:
            if platform is not None and not _eq(d.get("platform"), platform):
                continue
            for e in d.outs("HasField"):
                if e.end.label == "DatasetField" and e.end.get("placeholder") is not True:
                    yield d, e.end

    @staticmethod
    def _last_read(edges: Iterable[_Edge], as_of: Any = None) -> Any:
        """``max(e.validTo)`` of ``edges`` (those ended at or before ``as_of``, if given)."""
        ends = [e.props.get("validTo") for e in edges]
        return max((t for t in ends if t is not None and (as_of is None or _le(t, as_of))), default=None)

    def _unused_row(self, d: _Node, f: _Node, field_read: Any, dataset_read: Any) -> Row:
        return {"dataset": d.get("urn"), **{k: _value(f.get(k)) for k in ("urn", "fieldPath", "simplePath", "type",
                                                                          "nativeDataType")},
                "fieldRead": field_read, "datasetRead": dataset_read}

    def _unused_fields(self, p: Mapping[str, Any]) -> list[Row]:
        out: list[Row] = []
        for d, f in self._unused_candidates(p):
            if f.get("removed", False) is True or f.ins("DataDerivedFrom") or d.ins("DataDerivedFrom"):
                continue
            out.append(self._unused_row(d, f, self._last_read(f.ins("PreviouslyDerivedFrom")),
                                        self._last_read(d.ins("PreviouslyDerivedFrom"))))
        return sorted(out, key=lambda r: (_order(r["dataset"]), _order(r["fieldPath"])))

    def _unused_fields_as_of(self, p: Mapping[str, Any]) -> list[Row]:
        as_of = p["asOf"]
        out: list[Row] = []
        for d, f in self._unused_candidates(p):
            reads, whole = f.ins(*_LINEAGE), d.ins(*_LINEAGE)
            if any(_held(e, as_of) for e in (*reads, *whole)):
                continue
            row = {**self._unused_row(d, f, self._last_read(reads, as_of), self._last_read(whole, as_of)),
                   "since": f.get("since", 0), "removed": f.get("removed", False)}
            out.extend({**row, "past": past} for past in self._pasts(f, as_of))
        return sorted(out, key=lambda r: (_order(r["dataset"]), _order(r["fieldPath"])))

    # ---- whole graph ----

    def _snapshot_nodes(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"id": n.id, "labels": [n.label], "props": _props(n.props)} for n in self._nodes.values()]

    def _snapshot_edges(self, p: Mapping[str, Any]) -> list[Row]:
        return [{"a": e.start.id, "type": e.type, "b": e.end.id, "props": _props(e.props)} for e in self._edges()]

    # ---- lineage over all time (the explorer's timeline) ----

    def _upstream_step_ever(self, p: Mapping[str, Any]) -> list[Row]:
        return self._step(p, "DatasetField", True, False, ever=True)

    def _downstream_step_ever(self, p: Mapping[str, Any]) -> list[Row]:
        return self._step(p, "DatasetField", False, False, ever=True)


def _key(label: str, props: Mapping[str, Any]) -> Any:
    """The key a node of ``label`` is found by (None: a keyless node, or one without its key)."""
    if label == "JobRun":
        job, run = props.get("job"), props.get("run")
        return None if job is None or run is None else (job, run)
    prop = _KEYED.get(label)
    return None if prop is None else props.get(prop)


STORE_SCHEMES["memory"] = MemoryStore
