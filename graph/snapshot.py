"""A whole graph as plain data: every node (its label and properties) and every edge (its type, ends and
properties). Backend-neutral, so that two graphs can be compared whatever holds them, and so that a graph built
in memory can be handed to a store's bulk importer.

Node ids are the holder's own (FalkorDB's and Neo4j's internal ids, the in-memory store's counters): they tie a
snapshot's edges to its nodes and mean nothing across snapshots. :meth:`Snapshot.canonical` drops them: nodes are
named by their key (``urn``; ``(job, run)`` for a job run; ``checksum`` for field operations) and keyless nodes
(``FieldState``) by the keyed node that points at them and their properties.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from . import cypher as cy


@dataclass(frozen=True, slots=True)
class NodeRow:
    id: int
    label: str
    props: dict[str, Any]


@dataclass(frozen=True, slots=True)
class EdgeRow:
    start: int
    type: str
    end: int
    props: dict[str, Any]


@dataclass(slots=True)
class Snapshot:
    nodes: list[NodeRow] = field(default_factory=list)
    edges: list[EdgeRow] = field(default_factory=list)

    def canonical(self) -> dict[str, list[str]]:
        """The graph with the holder's ids replaced by names that mean the same in any holder: sorted JSON lines
        of nodes and edges (equal graphs give equal results)."""
        names: dict[int, str] = {}
        keyless: list[NodeRow] = []
        for n in self.nodes:
            key = node_key(n.label, n.props)
            if key is None:
                keyless.append(n)
            else:
                names[n.id] = f"{n.label}:{key}"
        owner = {e.end: names.get(e.start, "?") for e in self.edges if e.end not in names}
        for n in keyless:
            names[n.id] = f"{n.label}@{owner.get(n.id, '?')}:{_json(n.props)}"
        return {
            "nodes": sorted(f"{names[n.id]} {_json(n.props)}" for n in self.nodes),
            "edges": sorted(f"{names.get(e.start, '?')} -[{e.type} {_json(e.props)}]-> {names.get(e.end, '?')}"
                            for e in self.edges),
        }


def node_key(label: str, props: dict[str, Any]) -> str | None:
    """What names a node of ``label`` in every graph (None: a node with no key of its own)."""
    if label == "JobRun":
        return f"{props.get('job')}#{props.get('run')}"
    if label == "FieldOperations":
        return str(props.get("checksum"))
    urn = props.get("urn")
    return None if urn is None else str(urn)


def _json(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str)


def snapshot_rows(nodes: Iterable[dict[str, Any]], edges: Iterable[dict[str, Any]]) -> Snapshot:
    """A snapshot from the rows of ``snapshot_nodes`` / ``snapshot_edges`` (:meth:`GraphStore.snapshot`), the store's
    node ids (FalkorDB's numbers, Neo4j's element ids) numbered from 0."""
    ids: dict[Any, int] = {}
    out = Snapshot([NodeRow(ids.setdefault(r["id"], len(ids)), _label(r["labels"]), dict(r["props"] or {}))
                    for r in nodes])
    out.edges = [EdgeRow(ids[r["a"]], r["type"], ids[r["b"]], dict(r["props"] or {})) for r in edges]
    return out


def _label(labels: list[str]) -> str:
    known = [x for x in labels if x in cy.NODE_LABELS or x == "DataJob"]
    return (known or labels or [""])[0]
