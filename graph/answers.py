"""What :class:`fieldgraph.graph.LineageGraph` answers: frozen, typed results, and their one JSON form.

Each type is built from its statement's row in one place (its ``from_row``), so a column renamed in ``cypher/``
breaks here, not in the CLI, the service or the exports. Each has ``to_json()``, the JSON the CLI's ``--json``
and the HTTP API print (the keys are the columns' names, as they always were); :func:`encode` gives it for an
answer, a list of answers or plain data.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass, replace
from typing import Any, ClassVar, Protocol, Self

from fieldgraph.changes import OLD_TRANSFORMATIONS, read_transformation

#: the relation of a hop across a rename (the edge ``(new)-[:RenamedFrom]->(old)``)
RENAMED_FROM = "RenamedFrom"
#: the ``sourceFormat`` (and ``source``) of an edge drawn by hand
MANUAL = "manual"

#: a statement's row, as the stores return it
Row = Mapping[str, Any]


class Answer(Protocol):
    """Anything :func:`encode` encodes by its own ``to_json``."""

    def to_json(self) -> Any: ...


def encode(answer: Any) -> Any:
    """``answer`` as JSON data: an answer by its ``to_json``, lists, tuples and dicts element by element, anything
    else as it is (what ``--json`` and the HTTP API print)."""
    if hasattr(answer, "to_json"):
        return answer.to_json()
    if isinstance(answer, (list, tuple)):
        return [encode(x) for x in answer]
    if isinstance(answer, dict):
        return {k: encode(v) for k, v in answer.items()}
    return answer


def _edge(e: Mapping[str, Any]) -> Mapping[str, Any]:
    """A stored edge's properties as today's vocabulary spells them (:func:`fieldgraph.changes.read_transformation`:
    an older fieldgraph's ``Blackbox`` reads ``BlackBox``)."""
    word = e.get("transformation")
    return {**e, "transformation": read_transformation(word)} if word in OLD_TRANSFORMATIONS else e


# ---- walks ----


@dataclass(frozen=True, slots=True)
class Hop:
    """One step of a walk: ``urn`` reached from ``from_urn`` at ``depth``, along ``edge`` and the edges in ``more``
    (every edge between the two fields: several jobs may write one pair; :func:`by_pair`); ``dataset_urn`` None: a
    whole dataset reached (lineage from or to a dataset, not one of its fields)."""

    from_urn: str
    urn: str
    depth: int
    dataset_urn: str | None
    field_path: str | None
    edge: Mapping[str, Any]
    placeholder: bool = False
    removed: bool = False
    ambiguous: bool = False
    #: the other edges between the same two fields, after ``edge`` (in :func:`edge_order`)
    more: tuple[Mapping[str, Any], ...] = ()

    @property
    def edges(self) -> tuple[Mapping[str, Any], ...]:
        """Every edge between the hop's two fields: ``edge``, then those in ``more``."""
        return (self.edge, *self.more)

    @property
    def key(self) -> tuple[Any, ...]:
        """The stored edge ``edge`` is: its two ends and what tells edges between them apart (the same two fields
        may be tied by several, one after another)."""
        e = self.edge
        return (self.from_urn, self.urn, e.get("relation"), e.get("source"), e.get("fact"), e.get("validFrom"),
                e.get("validTo"))

    @property
    def rename(self) -> bool:
        """A hop across a rename (``RenamedFrom``): the same field under its name before or after."""
        return self.edge.get("relation") == RENAMED_FROM

    @property
    def manual(self) -> bool:
        """A hop along an edge drawn by hand (``fieldgraph edge add``): then ``edge`` is that one (listed first)."""
        return self.edge.get("sourceFormat") == MANUAL

    @property
    def stated(self) -> tuple[Mapping[str, Any], ...]:
        """The edges a source stated (not drawn by hand)."""
        return tuple(e for e in self.edges if e.get("sourceFormat") != MANUAL)

    @property
    def sources(self) -> tuple[str, ...]:
        """The sources of :attr:`stated` (jobs, queries, aspects), each once, in order."""
        return tuple(dict.fromkeys(str(e["source"]) for e in self.stated if e.get("source")))

    @classmethod
    def from_row(cls, r: Row, depth: int) -> Hop:
        """The hop a walk step's row describes (``*_step*.cypher``), ``depth`` hops from the start."""
        return cls(r["from"], r["urn"], depth, r.get("datasetUrn"), r.get("fieldPath"), _edge(r.get("edge") or {}),
                   bool(r.get("placeholder")), bool(r.get("removed")), bool(r.get("ambiguous")))

    def to_json(self) -> dict[str, Any]:
        return {"from": self.from_urn, "urn": self.urn, "depth": self.depth, "dataset": self.dataset_urn,
                "fieldPath": self.field_path, "placeholder": self.placeholder, "removed": self.removed,
                "ambiguous": self.ambiguous, "edge": dict(self.edge), "edges": [dict(e) for e in self.edges]}


def edge_order(edge: Mapping[str, Any]) -> tuple[Any, ...]:
    """How the edges between two fields are listed: one drawn by hand first, then by source, then by when each
    holds from (a stable order: the same on every store, every time, every page)."""
    return (edge.get("sourceFormat") != MANUAL, str(edge.get("source") or ""), edge.get("validFrom") or 0,
            _text(edge))


def _text(edge: Mapping[str, Any]) -> str:
    return json.dumps(edge, sort_keys=True, default=str)


def by_pair(hops: Iterable[Hop]) -> tuple[Hop, ...]:
    """One hop per pair of fields along lineage edges: the first found (the shallowest, as a walk finds them level
    by level) with every edge between the two (each once, in :func:`edge_order`; one drawn by hand among them);
    the hops in the order their pairs were first found. A hop across a rename stays a hop of its own (two renames
    between the same names, there and back, are two events, drawn each its way)."""
    groups: list[list[Hop]] = []
    at: dict[tuple[str, str], int] = {}
    for h in hops:
        i = at.setdefault((h.from_urn, h.urn), len(groups)) if not h.rename else len(groups)
        if i == len(groups):
            groups.append([])
        groups[i].append(h)
    return tuple(hs[0] if len(hs) == 1 else _joined(hs) for hs in groups)


def _joined(hops: Sequence[Hop]) -> Hop:
    edges = {_text(e): e for h in hops for e in h.edges}
    first, *more = sorted(edges.values(), key=edge_order)
    return replace(hops[0], edge=first, more=tuple(more))


@dataclass(frozen=True, slots=True)
class LineageResult:
    """A walk from ``start`` (``upstream`` or ``downstream``): its hops level by level (one per pair of fields:
    :func:`by_pair`), ``partial`` (with its ``reason``) when it stopped before the end; ``as_of``: the instant it
    walked (None: now); ``hidden``: under a read scope, how many fields the scope hides it stopped at (or went
    through); None: no scope (not in its JSON)."""

    start: str
    direction: str
    hops: tuple[Hop, ...] = ()
    partial: bool = False
    reason: str | None = None  # why partial: depth cap, time budget
    depth: int | None = None
    #: partial only because the walk stopped at the depth the caller asked for (more lies beyond)
    at_requested_depth: bool = False
    as_of: int | None = None
    hidden: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "hops", tuple(self.hops))

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
                "reason": self.reason, "hops": [h.to_json() for h in self.hops], "asOf": self.as_of,
                **_hidden(self)}


def fields_by_dataset(reached: Iterable[tuple[str | None, str]]) -> dict[str, list[str]]:
    """The field paths of ``reached`` ((dataset URN or None: a whole dataset, field path)) by dataset, each once,
    in the order reached (``?``: the datasets reached whole)."""
    out: dict[str, dict[str, None]] = {}
    for dataset, path in reached:
        out.setdefault(dataset or "?", {})[path] = None
    return {d: list(paths) for d, paths in out.items()}


@dataclass(frozen=True, slots=True)
class Impact:
    """The downstream of a field or dataset: the ``walk``, and the fields it reached by dataset (``datasets``:
    dataset URN -> field paths, in the order reached)."""

    walk: LineageResult
    datasets: Mapping[str, Sequence[str]]

    @classmethod
    def of(cls, walk: LineageResult) -> Impact:
        """The impact a downstream ``walk`` finds: the fields its hops reach, by dataset."""
        return cls(walk, fields_by_dataset((h.dataset_urn, h.field_path or h.urn) for h in walk.hops))

    def to_json(self) -> dict[str, Any]:
        w = self.walk
        return {"start": w.start, "partial": w.partial, "reason": w.reason,
                "datasets": {d: list(p) for d, p in self.datasets.items()},
                "hops": [h.to_json() for h in w.hops], "asOf": w.as_of, **_hidden(w)}


@dataclass(frozen=True, slots=True)
class DrawnEdge:
    """Whether an edge drawn by hand holds now from ``upstream`` into ``downstream`` (field URNs as stored):
    ``hop``, the edge (its properties: ``by``, ``note``, ``validFrom``, ...), or None."""

    downstream: str
    upstream: str
    hop: Hop | None = None

    @property
    def holds(self) -> bool:
        return self.hop is not None

    def to_json(self) -> dict[str, Any]:
        return {"downstream": self.downstream, "upstream": self.upstream, "holds": self.holds,
                "edge": dict(self.hop.edge) if self.hop is not None else None}


@dataclass(frozen=True, slots=True)
class LineagePath:
    """A shortest lineage path between two fields (``path``: field URNs; empty: none found) and the walk that
    looked for it."""

    path: tuple[str, ...]
    walk: LineageResult

    def to_json(self) -> dict[str, Any]:
        return {"path": list(self.path), "partial": self.walk.partial, "reason": self.walk.reason,
                "asOf": self.walk.as_of, **_hidden(self.walk)}


def _hidden(walk: LineageResult) -> dict[str, int]:
    """``{"hidden": n}`` for a walk under a read scope, else nothing (answers without a scope keep their JSON)."""
    return {} if walk.hidden is None else {"hidden": walk.hidden}


# ---- tags and terms ----


@dataclass(frozen=True, slots=True)
class InheritedLabel:
    """A tag or term a field inherits: from the upstream field ``from_urn``, ``distance`` hops up, along ``path``."""

    label: str
    from_urn: str
    distance: int
    path: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "from": self.from_urn, "distance": self.distance, "path": list(self.path)}


@dataclass(frozen=True, slots=True)
class FieldTags:
    """A field's own tags and terms (``local``: those of them that do not propagate) and those it inherits."""

    field: str
    own: tuple[str, ...]
    local: tuple[str, ...]
    inherited: tuple[InheritedLabel, ...]
    partial: bool = False
    reason: str | None = None

    def labels_json(self) -> dict[str, Any]:
        """``own``, ``local`` and ``inherited`` (how :class:`FieldInfo` shows them)."""
        return {"own": list(self.own), "local": list(self.local), "inherited": [i.to_json() for i in self.inherited]}

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, **self.labels_json(), "partial": self.partial, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Carrier:
    """A field that carries a label: its own (``own``; ``sources`` starts with itself) or inherited from
    ``sources``, the nearest ``distance`` hops up."""

    urn: str
    own: bool
    sources: tuple[str, ...]
    distance: int
    label: str
    dataset: str | None
    field_path: str | None

    def to_json(self) -> dict[str, Any]:
        return {"urn": self.urn, "own": self.own, "from": list(self.sources), "distance": self.distance,
                "label": self.label, "dataset": self.dataset, "fieldPath": self.field_path}


@dataclass(frozen=True, slots=True)
class Tagged:
    """Every field that carries ``label`` (nearest first), ``partial`` when the walk stopped before the end."""

    label: str
    fields: tuple[Carrier, ...]
    partial: bool = False
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "fields": [f.to_json() for f in self.fields], "partial": self.partial,
                "reason": self.reason}


# ---- fields ----


@dataclass(frozen=True, slots=True)
class FieldRow:
    """A dataset's field, now or at an instant: listed, ``removed`` (listed by an earlier schema) or a
    ``placeholder`` (a reference no schema listed, while an edge refers to it)."""

    urn: str
    field_path: str
    simple_path: str | None
    type: str | None = None
    native_data_type: str | None = None
    nullable: bool | None = None
    is_part_of_key: bool | None = None
    removed: bool = False
    placeholder: bool = False
    description: str | None = None

    #: the state columns (as named in rows and JSON), as they were at an instant
    STATE: ClassVar[tuple[str, ...]] = ("type", "nativeDataType", "nullable", "isPartOfKey", "description")

    @classmethod
    def from_row(cls, r: Row) -> Self:
        """From ``dataset_fields.cypher``'s row, or one with its state as it was at an instant."""
        return cls(r["urn"], r["fieldPath"], r.get("simplePath"), r.get("type"), r.get("nativeDataType"),
                   r.get("nullable"), r.get("isPartOfKey"), bool(r.get("removed")), bool(r.get("placeholder")),
                   r.get("description"))

    def state(self) -> dict[str, Any]:
        """The state columns (:attr:`STATE`) by name."""
        return {"type": self.type, "nativeDataType": self.native_data_type, "nullable": self.nullable,
                "isPartOfKey": self.is_part_of_key, "description": self.description}

    def to_json(self) -> dict[str, Any]:
        return {"urn": self.urn, "fieldPath": self.field_path, "simplePath": self.simple_path, "type": self.type,
                "nativeDataType": self.native_data_type, "nullable": self.nullable, "isPartOfKey": self.is_part_of_key,
                "removed": self.removed, "placeholder": self.placeholder, "description": self.description}


@dataclass(frozen=True, slots=True)
class FieldRowAsOf(FieldRow):
    """A dataset's field as it was at an instant (:meth:`LineageGraph.fields` with ``as_of``): its JSON has the
    state columns before ``removed`` and ``placeholder``, as that listing always had."""

    def to_json(self) -> dict[str, Any]:
        return {"urn": self.urn, "fieldPath": self.field_path, "simplePath": self.simple_path, **self.state(),
                "removed": self.removed, "placeholder": self.placeholder}


@dataclass(frozen=True, slots=True)
class FieldInfo:
    """One field: its row (:class:`FieldRow`), its dataset and its tags (own and inherited)."""

    row: FieldRow
    dataset: str
    tags: FieldTags

    def to_json(self) -> dict[str, Any]:
        return {**self.row.to_json(), "dataset": self.dataset, "tags": self.tags.labels_json()}


# ---- search ----


@dataclass(frozen=True, slots=True)
class DatasetHit:
    """A dataset a search found, with its count of listed fields."""

    urn: str
    name: str | None
    platform: str | None
    placeholder: bool
    fields: int

    @classmethod
    def from_row(cls, r: Row) -> DatasetHit:
        """From ``search_datasets.cypher``'s row."""
        return cls(r["urn"], r["name"], r["platform"], bool(r["placeholder"]), r["fields"])

    def to_json(self) -> dict[str, Any]:
        return {"urn": self.urn, "name": self.name, "platform": self.platform, "placeholder": self.placeholder,
                "fields": self.fields}


@dataclass(frozen=True, slots=True)
class FieldHit:
    """A field a search found."""

    urn: str
    dataset: str
    field_path: str
    simple_path: str
    placeholder: bool

    @classmethod
    def from_row(cls, r: Row) -> FieldHit:
        """From ``search_fields.cypher``'s row."""
        return cls(r["urn"], r["dataset"], r["fieldPath"], r["simplePath"], bool(r["placeholder"]))

    def to_json(self) -> dict[str, Any]:
        return {"urn": self.urn, "dataset": self.dataset, "fieldPath": self.field_path,
                "simplePath": self.simple_path, "placeholder": self.placeholder}


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The datasets and fields a search found."""

    datasets: tuple[DatasetHit, ...]
    fields: tuple[FieldHit, ...]

    def to_json(self) -> dict[str, Any]:
        return {"datasets": [d.to_json() for d in self.datasets], "fields": [f.to_json() for f in self.fields]}


# ---- listings ----


@dataclass(frozen=True, slots=True)
class DatasetEdge:
    """Dataset-level lineage: ``downstream`` derives from ``upstream`` through ``field_edges`` field edges."""

    downstream: str
    upstream: str
    field_edges: int
    transformations: tuple[str | None, ...]

    @classmethod
    def from_row(cls, r: Row) -> DatasetEdge:
        """From ``dataset_lineage.cypher``'s row."""
        words = (read_transformation(t) for t in r["transformations"] or ())
        return cls(r["downstream"], r["upstream"], r["fieldEdges"], tuple(dict.fromkeys(words)))

    def to_json(self) -> dict[str, Any]:
        return {"downstream": self.downstream, "upstream": self.upstream, "fieldEdges": self.field_edges,
                "transformations": list(self.transformations)}


@dataclass(frozen=True, slots=True)
class Unresolved:
    """A field reference no schema resolved (a placeholder), with its lineage ``edges``; an ambiguous one names
    its ``candidates``. A column a SQL statement derived keeps its ``column`` number in the statement (from 1);
    ``schema_column``: the name the dataset's schema gives that column, where it has one."""

    dataset: str
    reference: str | None
    urn: str
    ambiguous: bool
    candidates: tuple[str, ...] | None
    edges: int
    column: int | None = None
    schema_column: str | None = None

    @classmethod
    def from_row(cls, r: Row) -> Self:
        """From ``unresolved.cypher``'s or ``ambiguous.cypher``'s row (the latter lists ambiguous ones only)."""
        cands = r.get("candidates")
        return cls(r["dataset"], r["reference"], r["urn"], bool(r.get("ambiguous", True)),
                   None if cands is None else tuple(cands), r["edges"], r.get("column"))

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "reference": self.reference, "urn": self.urn, "ambiguous": self.ambiguous,
                "candidates": None if self.candidates is None else list(self.candidates), "edges": self.edges,
                "column": self.column, "schemaColumn": self.schema_column}


@dataclass(frozen=True, slots=True)
class AmbiguousReference(Unresolved):
    """An ambiguous reference (:meth:`LineageGraph.ambiguous`): its JSON leaves ``ambiguous`` out (all are)."""

    def to_json(self) -> dict[str, Any]:
        out = Unresolved.to_json(self)
        del out["ambiguous"]
        return out


@dataclass(frozen=True, slots=True)
class UnusedField:
    """A field nobody reads (:meth:`LineageGraph.unused`): listed, with no lineage edge into it (nor into its whole
    dataset) that holds; ``last_read``: when the last one stopped holding (ms since the epoch; None: never read)."""

    urn: str
    dataset: str
    field_path: str
    simple_path: str | None
    type: str | None
    native_data_type: str | None
    last_read: int | None

    @classmethod
    def from_row(cls, r: Row) -> UnusedField:
        """From ``unused_fields.cypher``'s row (or ``unused_fields_as_of.cypher``'s, with the state then): the last
        read is the later of the field's (``fieldRead``) and its dataset's (``datasetRead``)."""
        reads = [t for t in (r.get("fieldRead"), r.get("datasetRead")) if t is not None]
        return cls(r["urn"], r["dataset"], r["fieldPath"], r.get("simplePath"), r.get("type"),
                   r.get("nativeDataType"), max(reads) if reads else None)

    def to_json(self) -> dict[str, Any]:
        return {"urn": self.urn, "dataset": self.dataset, "fieldPath": self.field_path, "simplePath": self.simple_path,
                "type": self.type, "nativeDataType": self.native_data_type, "lastRead": self.last_read}


@dataclass(frozen=True, slots=True)
class UnusedFields:
    """The fields nobody reads (:class:`UnusedField`, by dataset then path) among those of ``dataset`` or of
    ``platform`` (None: any), now or at ``as_of``."""

    dataset: str | None
    platform: str | None
    as_of: int | None
    fields: tuple[UnusedField, ...]

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "platform": self.platform, "asOf": self.as_of,
                "fields": [f.to_json() for f in self.fields]}


@dataclass(frozen=True, slots=True)
class GraphStats:
    """The graph's counts (``stats.cypher``); JSON and the CLI's table by the statements' column names."""

    datasets: int
    placeholder_datasets: int
    fields: int
    removed_fields: int
    placeholder_fields: int
    ambiguous_references: int
    has_field_edges: int
    data_derived_from_edges: int
    past_data_derived_from_edges: int
    past_field_states: int
    renames: int

    #: the column of each count, in order
    COLUMNS: ClassVar[tuple[str, ...]] = (
        "datasets", "placeholderDatasets", "fields", "removedFields", "placeholderFields", "ambiguousReferences",
        "hasFieldEdges", "dataDerivedFromEdges", "pastDataDerivedFromEdges", "pastFieldStates", "renames")

    @classmethod
    def from_row(cls, r: Row) -> GraphStats:
        """From the columns of ``stats.cypher``'s statements, merged into one row."""
        return cls(*(r[c] for c in cls.COLUMNS))

    def to_json(self) -> dict[str, int]:
        return dict(zip(self.COLUMNS, astuple(self), strict=True))


# ---- changes over time ----


@dataclass(frozen=True, slots=True)
class EdgeRow:
    """A lineage edge into (``in``: the dataset's field ``down`` derives from ``up``) or out of a dataset's fields."""

    direction: str
    down: str
    up: str
    source: str | None
    transformation: str | None
    kind: str | None

    @classmethod
    def from_row(cls, r: Row) -> EdgeRow:
        """From ``dataset_edges_as_of.cypher``'s row."""
        return cls(r["direction"], r["down"], r["up"], r["source"], read_transformation(r["transformation"]),
                   r["kind"])

    def to_json(self) -> dict[str, Any]:
        return {"direction": self.direction, "down": self.down, "up": self.up, "source": self.source,
                "transformation": self.transformation, "kind": self.kind}


@dataclass(frozen=True, slots=True)
class FieldChange:
    """A field whose state changed: the columns that differ, as they were (``before``) and became (``after``)."""

    field_path: str
    before: Mapping[str, Any]
    after: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"fieldPath": self.field_path, "from": dict(self.before), "to": dict(self.after)}


@dataclass(frozen=True, slots=True)
class LineageDiff:
    """What changed in a dataset's fields and in the lineage edges into and out of them between two instants."""

    dataset: str
    since: int
    until: int
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[FieldChange, ...]
    edges_added: tuple[EdgeRow, ...]
    edges_removed: tuple[EdgeRow, ...]

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "from": self.since, "to": self.until,
                "fields": {"added": list(self.added), "removed": list(self.removed),
                           "changed": [c.to_json() for c in self.changed]},
                "edges": {"added": [e.to_json() for e in self.edges_added],
                          "removed": [e.to_json() for e in self.edges_removed]}}


# ---- time-ranged lineage (CDAP's field lineage) ----


@dataclass(frozen=True, slots=True)
class DatasetFields:
    """The fields reached in one dataset (a summary line of :class:`FieldLineage`)."""

    dataset: str
    fields: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "fields": list(self.fields)}


@dataclass(frozen=True, slots=True)
class FieldLineage:
    """A field's ``incoming`` or ``outgoing`` lineage within ``[start, end)``: the fields reached by dataset
    (``summary``), the operations behind it (CDAP's JSON form), the transforms that drop it, and the hops."""

    field: str
    direction: str
    start: int | None
    end: int | None
    depth: int
    partial: bool
    reason: str | None
    summary: tuple[DatasetFields, ...]
    operations: tuple[Mapping[str, Any], ...]
    dropped: tuple[str, ...]
    edges: tuple[Hop, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "direction": self.direction, "start": self.start, "end": self.end,
                "depth": self.depth, "partial": self.partial, "reason": self.reason,
                "summary": [s.to_json() for s in self.summary], "operations": [dict(o) for o in self.operations],
                "dropped": list(self.dropped), "edges": [h.to_json() for h in self.edges]}


__all__ = ["AmbiguousReference", "Answer", "Carrier", "DatasetEdge", "DatasetFields", "DatasetHit", "DrawnEdge",
           "EdgeRow",
           "FieldChange", "FieldHit", "FieldInfo", "FieldLineage", "FieldRow", "FieldRowAsOf", "FieldTags",
           "GraphStats", "Hop", "Impact", "InheritedLabel", "LineageDiff", "LineagePath", "LineageResult",
           "MANUAL", "RENAMED_FROM", "SearchResult", "Tagged", "Unresolved", "UnusedField", "UnusedFields", "by_pair",
           "edge_order", "encode", "fields_by_dataset"]


# ---- lineage through time around one field (the explorer's time control and compare mode) ----


@dataclass(frozen=True, slots=True)
class TimeMark:
    """An instant the lineage drawn around a field changed at, with how many edges and fields came into the walk
    (``added``), left it (``removed``), or were drawn before and after with another state (``changed``)."""

    at: int
    edges_added: int = 0
    edges_removed: int = 0
    fields_added: int = 0
    fields_removed: int = 0
    fields_changed: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "edgesAdded": self.edges_added, "edgesRemoved": self.edges_removed,
                "fieldsAdded": self.fields_added, "fieldsRemoved": self.fields_removed,
                "fieldsChanged": self.fields_changed}


@dataclass(frozen=True, slots=True)
class Timeline:
    """The instants the walk from ``start`` (``direction``, ``depth`` hops) changed at, over all time, in order;
    ``partial`` (with its ``reason``) when the time budget ran out before the walk's last level."""

    start: str
    direction: str
    depth: int
    marks: tuple[TimeMark, ...]
    partial: bool = False
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "direction": self.direction, "depth": self.depth, "partial": self.partial,
                "reason": self.reason, "instants": [m.to_json() for m in self.marks]}


@dataclass(frozen=True, slots=True)
class FieldDelta:
    """A node of a walk diff: ``change`` ``added``, ``removed``, ``changed`` or ``same``; its state ``before``
    and ``after`` (None: not drawn then) and the state keys that ``differ``; ``start``: the walk's start."""

    urn: str
    dataset_urn: str | None
    field_path: str | None
    change: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    differ: tuple[str, ...] = ()
    start: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"urn": self.urn, "dataset": self.dataset_urn, "fieldPath": self.field_path, "change": self.change,
                "before": None if self.before is None else dict(self.before),
                "after": None if self.after is None else dict(self.after), "differ": list(self.differ),
                "start": self.start}


@dataclass(frozen=True, slots=True)
class EdgeDelta:
    """An edge of a walk diff, from ``from_urn`` to ``urn`` as the walk went: ``change`` as :class:`FieldDelta`'s;
    its properties ``before`` and ``after`` and those that ``differ`` (time and run ones aside)."""

    from_urn: str
    urn: str
    change: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    differ: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"from": self.from_urn, "urn": self.urn, "change": self.change,
                "before": None if self.before is None else dict(self.before),
                "after": None if self.after is None else dict(self.after), "differ": list(self.differ)}


@dataclass(frozen=True, slots=True)
class WalkDiff:
    """The walk from ``start`` as of ``since`` and as of ``until``, told apart: every node and edge drawn at
    either, each added, removed, changed or the same; ``partial`` when either walk stopped before the end."""

    start: str
    direction: str
    depth: int | None
    since: int
    until: int
    fields: tuple[FieldDelta, ...]
    edges: tuple[EdgeDelta, ...]
    partial: bool = False
    reason: str | None = None

    def counts(self) -> dict[str, dict[str, int]]:
        """How many fields and edges were added, removed and changed."""
        def of(items: Sequence[FieldDelta] | Sequence[EdgeDelta]) -> dict[str, int]:
            return {c: sum(1 for x in items if x.change == c) for c in ("added", "removed", "changed")}
        return {"fields": of(self.fields), "edges": of(self.edges)}

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "direction": self.direction, "depth": self.depth, "from": self.since,
                "to": self.until, "partial": self.partial, "reason": self.reason, "counts": self.counts(),
                "fields": [f.to_json() for f in self.fields], "edges": [e.to_json() for e in self.edges]}


__all__ += ["EdgeDelta", "FieldDelta", "TimeMark", "Timeline", "WalkDiff"]
