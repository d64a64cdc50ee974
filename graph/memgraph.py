"""The in-memory property graph under :class:`~fieldgraph.graph.memory.MemoryStore`: nodes and edges, found by key
and by each node's adjacency per type, and Cypher's ``MERGE``/``SET`` semantics on them (null-removal of properties,
lists copied); the helpers its statement handlers share (:mod:`.memory_writes`, :mod:`.memory_reads`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .errors import GraphRefused

Row = dict[str, Any]

#: the key property of each keyed label (a job run's key is ``(job, run)``)
KEYED = {"Dataset": "urn", "DatasetField": "urn", "Query": "urn", "DataJob": "urn", "FieldOperations": "checksum"}
LINEAGE = ("DataDerivedFrom", "PreviouslyDerivedFrom")
#: what keeps a placeholder field: lineage, present or past, and renames
FIELD_LINKS = (*LINEAGE, "RenamedFrom")
JOB_FORMATS = ("cdap", "openlineage", "sql")
QUERY = "urn:li:query:"
MANUAL = "manual"
#: the columns of read_state.cypher's compact rows
STATE_OF_DATASET = ("urn", "placeholder", "schemaVersion", "schemaTs", "upstreamLineageTs", "datasetUpstreamLineageTs")
STATE_OF_FIELD = ("urn", "fieldPath", "placeholder", "removed", "schemaVersion", "schemaTs", "refPath", "position",
                   "fieldId", "aliases", "column")
TIMES_OF_DATASET = ("schemaTimes", "upstreamLineageTimes", "datasetUpstreamLineageTimes", "jobLineageDeletes")
#: the value types a store keeps as they are (no null to remove, no list to copy): a mapping of only these is
#: copied or merged whole
SCALARS = frozenset({str, int, bool, float})


class Node:
    """A node: its label, properties and edges by type and id, out and in (ids keep insertion order)."""

    __slots__ = ("id", "inn", "label", "out", "props")

    def __init__(self, id: int, label: str, props: dict[str, Any]) -> None:
        self.id = id
        self.label = label
        self.props = props
        self.out: dict[str, dict[int, Edge]] = {}
        self.inn: dict[str, dict[int, Edge]] = {}

    def outs(self, *types: str) -> list[Edge]:
        """Its outgoing edges of ``types`` (a copy: the caller may delete them)."""
        if len(types) == 1:
            edges = self.out.get(types[0])
            return list(edges.values()) if edges else []
        return [e for t in types for e in self.out.get(t, {}).values()]

    def ins(self, *types: str) -> list[Edge]:
        if len(types) == 1:
            edges = self.inn.get(types[0])
            return list(edges.values()) if edges else []
        return [e for t in types for e in self.inn.get(t, {}).values()]

    def get(self, key: str, default: Any = None) -> Any:
        return self.props.get(key, default)


class Edge:
    """A directed edge with its properties."""

    __slots__ = ("end", "id", "props", "start", "type")

    def __init__(self, id: int, type: str, start: Node, end: Node, props: dict[str, Any]) -> None:
        self.id = id
        self.type = type
        self.start = start
        self.end = end
        self.props = props


def value(v: Any) -> Any:
    """A property value as a store keeps it: lists copied (tuples become lists)."""
    return list(v) if isinstance(v, (list, tuple)) else v


def update(props: dict[str, Any], new: Mapping[str, Any] | None) -> None:
    """``SET x += new``: null values remove their key, lists are copied (tuples become lists)."""
    if not new:
        return
    props.update(new)
    if SCALARS.issuperset(map(type, new.values())):  # the common case: nothing to remove or copy
        return
    for k in [k for k, v in new.items() if type(v) not in SCALARS]:
        v = props[k]
        if v is None:
            del props[k]
        elif isinstance(v, (list, tuple)):
            props[k] = list(v)


def put(props: dict[str, Any], key: str, v: Any) -> None:
    """``SET x.key = v``: null removes the key."""
    if v is None:
        props.pop(key, None)
    else:
        props[key] = value(v)


def props_of(props: dict[str, Any]) -> dict[str, Any]:
    """``properties(x)``: a copy (lists copied too)."""
    if SCALARS.issuperset(map(type, props.values())):
        return props.copy()
    return {k: value(v) for k, v in props.items()}


def eq(a: Any, b: Any) -> bool:
    """Cypher ``a = b`` taken as a filter (null on either side: no match)."""
    return a is not None and b is not None and a == b


def lt(a: Any, b: Any) -> bool:
    return a is not None and b is not None and a < b


def le(a: Any, b: Any) -> bool:
    return a is not None and b is not None and a <= b


def held(e: Edge, as_of: Any) -> bool:
    """``coalesce(e.validFrom, 0) <= $asOf AND (e.validTo IS NULL OR e.validTo > $asOf)``."""
    to = e.props.get("validTo")
    return le(e.props.get("validFrom", 0), as_of) and (to is None or lt(as_of, to))


def job_edge(e: Edge) -> bool:
    """``e.sourceFormat IN ['cdap', 'openlineage', 'sql'] AND NOT e.source STARTS WITH 'urn:li:query:'``."""
    src = e.props.get("source")
    return e.props.get("sourceFormat") in JOB_FORMATS and isinstance(src, str) and not src.startswith(QUERY)


def query_edge(e: Edge, row: Mapping[str, Any]) -> bool:
    """The query-derived edge ``close_query_lineage`` / ``drop_query_lineage`` end (without the time test)."""
    src, only = e.props.get("source"), row.get("only")
    return (e.props.get("sourceFormat") == "sql" and isinstance(src, str) and src.startswith(QUERY)
            and src not in (row.get("keep") or []) and (only is None or src == only))


def grouped(rows: Iterable[tuple[Any, Row, list[Any]]], into: str) -> list[Row]:
    """Rows aggregated as Cypher's ``collect`` does: one per grouping key (first seen first), ``into`` the
    collected values (nulls dropped)."""
    out: dict[Any, Row] = {}
    for key, row, values in rows:
        have = out.setdefault(key, {**row, into: []})
        have[into].extend(v for v in values if v is not None)
    return list(out.values())


def nulls_last(v: Any) -> tuple[bool, Any]:
    """A sort key for one ``ORDER BY`` value (nulls last)."""
    return (v is None, "" if v is None else v)


def by_path(rows: list[Row]) -> list[Row]:
    """``ORDER BY fieldPath``."""
    return sorted(rows, key=lambda r: nulls_last(r["fieldPath"]))


def key_of(label: str, props: Mapping[str, Any]) -> Any:
    """The key a node of ``label`` is found by (None: a keyless node, or one without its key)."""
    if label == "JobRun":
        job, run = props.get("job"), props.get("run")
        return None if job is None or run is None else (job, run)
    prop = KEYED.get(label)
    return None if prop is None else props.get(prop)


class MemoryGraph:
    """The nodes and edges, and the primitives the statement handlers are written with."""

    _ids: Iterator[int]
    _nodes: dict[int, Node]
    _keys: dict[str, dict[Any, Node]]
    #: every node marked a placeholder (and maybe some no longer marked): what the cleanups look at
    _flagged: dict[int, Node]

    # ---- the graph ----

    def _edges(self) -> Iterator[Edge]:
        for n in self._nodes.values():
            for edges in n.out.values():
                yield from edges.values()

    def _node(self, label: str, key: Any) -> Node | None:
        return None if key is None else self._keys[label].get(key)

    def _field(self, urn: Any) -> Node | None:
        return self._node("DatasetField", urn)

    def _dataset(self, urn: Any) -> Node | None:
        return self._node("Dataset", urn)

    def _create(self, label: str, props: Mapping[str, Any] | None = None) -> Node:
        n = Node(next(self._ids), label, {})
        self._nodes[n.id] = n
        self._set(n, props)
        key = key_of(label, n.props)
        if key is not None:
            self._keys[label][key] = n
        return n

    def _merge(self, label: str, key: Any, on_create: Mapping[str, Any] | None = None) -> tuple[Node, bool]:
        """``MERGE (n:Label {key}) ON CREATE SET n += on_create``: the node, and whether it was created."""
        n = self._node(label, key)
        if n is not None:
            return n, False
        if key is None:
            raise GraphRefused(f"cannot MERGE a {label} node with a null key")
        props = {"job": key[0], "run": key[1]} if label == "JobRun" else {KEYED[label]: key}
        return self._create(label, {**props, **on_create} if on_create else props), True

    def _delete(self, n: Node) -> None:
        """``DETACH DELETE n``."""
        for e in [*n.outs(*n.out), *n.ins(*n.inn)]:
            self._unlink(e)
        self._nodes.pop(n.id, None)
        self._flagged.pop(n.id, None)
        key = key_of(n.label, n.props)
        if key is not None and self._keys[n.label].get(key) is n:
            del self._keys[n.label][key]

    def _link(self, a: Node, type: str, b: Node, props: Mapping[str, Any] | None = None) -> Edge:
        e = Edge(next(self._ids), type, a, b, {})
        update(e.props, props)
        a.out.setdefault(type, {})[e.id] = e
        b.inn.setdefault(type, {})[e.id] = e
        return e

    def _unlink(self, e: Edge) -> None:
        e.start.out.get(e.type, {}).pop(e.id, None)
        e.end.inn.get(e.type, {}).pop(e.id, None)

    def _between(self, a: Node, type: str, b: Node, **match: Any) -> list[Edge]:
        """The ``type`` edges from ``a`` to ``b`` whose properties equal ``match`` (read from the smaller side)."""
        outs, ins = a.out.get(type), b.inn.get(type)
        if not outs or not ins:
            return []
        edges = [e for e in outs.values() if e.end is b] if len(outs) <= len(ins) else \
            [e for e in ins.values() if e.start is a]
        if not match:
            return edges
        return [e for e in edges if all(eq(e.props.get(k), v) for k, v in match.items())]

    def _merge_edge(self, a: Node, type: str, b: Node, on_create: Mapping[str, Any] | None = None,
                    **match: Any) -> tuple[list[Edge], bool]:
        """``MERGE (a)-[e:TYPE {match}]->(b) ON CREATE SET e += on_create``: the edges matched (or the one
        created), and whether created."""
        found = self._between(a, type, b, **match)
        if found:
            return found, False
        if any(v is None for v in match.values()):
            raise GraphRefused(f"cannot MERGE a {type} edge with a null property")
        return [self._link(a, type, b, {**match, **on_create} if on_create else match)], True

    def _fields_of(self, urn: Any) -> list[Node]:
        """``(:Dataset {urn})-[:HasField]->(f:DatasetField)``."""
        d = self._dataset(urn)
        return [] if d is None else [e.end for e in d.outs("HasField") if e.end.label == "DatasetField"]

    def _set(self, n: Node, new: Mapping[str, Any] | None) -> None:
        """``SET n += new`` on a node, noting a placeholder."""
        update(n.props, new)
        if n.props.get("placeholder") is True:
            self._flagged[n.id] = n

    def _placeholders_of(self, label: str) -> list[Node]:
        """The ``label`` nodes marked ``placeholder: true`` (without scanning the others)."""
        out = []
        for n in list(self._flagged.values()):
            if n.props.get("placeholder") is not True:
                del self._flagged[n.id]
            elif n.label == label:
                out.append(n)
        return out

    def _all(self, label: str) -> list[Node]:
        if label in self._keys:
            return list(self._keys[label].values())
        return [n for n in self._nodes.values() if n.label == label]

