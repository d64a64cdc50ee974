"""The named Cypher statements shipped in ``fieldgraph.cypher`` (one vocabulary for every backend)."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

_DEPTH = re.compile(r"\*1\.\.10\b")
_PROPERTY = re.compile(r"\b[A-Za-z_]\w*\.([A-Za-z_]\w*)")
_MAP = re.compile(r"\{([^{}]*)\}")
_KEY = re.compile(r"([A-Za-z_]\w*)\s*:")
_NAME = re.compile(r":([A-Z]\w*)")


@cache
def statements(name: str) -> tuple[str, ...]:
    """The statements of ``cypher/<name>.cypher``: split on ``;``, full-line ``//`` comments dropped."""
    text = resources.files("fieldgraph.cypher").joinpath(f"{name}.cypher").read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    return tuple(s.strip() for s in body.split(";") if s.strip())


def statement(name: str) -> str:
    (stmt,) = statements(name)
    return stmt


def with_depth(cypher: str, depth: int | None) -> str:
    """The statement with its variable-length bound ``*1..10`` set to ``*1..depth`` (``*1..`` if None)."""
    return _DEPTH.sub(f"*1..{depth}" if depth else "*1..", cypher)


@cache
def vocabulary() -> tuple[frozenset[str], frozenset[str]]:
    """(labels and relationship types, property keys) the shipped statements name (FalkorDB registers them
    up front: :meth:`fieldgraph.graph.store.FalkorDBStore.ensure_schema`)."""
    found: set[str] = set()
    keys: set[str] = set()
    for name in names():
        if name in NOT_IN_GRAPH:
            continue
        for stmt in statements(name):
            found.update(_NAME.findall(stmt))
            keys.update(_PROPERTY.findall(stmt))
            for body in _MAP.findall(stmt):
                keys.update(_KEY.findall(body))
    return frozenset(found), frozenset(keys)


def names() -> list[str]:
    return sorted(p.name[:-len(".cypher")] for p in resources.files("fieldgraph.cypher").iterdir()
                  if p.name.endswith(".cypher"))


#: the node labels of the graph model (the other names in ``:Name`` are relationship types)
NODE_LABELS = frozenset({"Dataset", "DatasetField", "FieldState", "JobRun", "FieldOperations", "Query"})

#: statements only the FalkorDB stores send
FALKORDB_ONLY = ("schema_falkordb", "read_state_falkordb", "snapshot_nodes_falkordb", "snapshot_edges_falkordb",
                 "vocabulary_falkordb", "indexes_falkordb")
#: statements whose names are not the graph's (Neo4j's writer lock, never committed; FalkorDB's is a key; FalkorDB's
#: catalogue procedures, ``db.labels()``...)
NOT_IN_GRAPH = ("lock_writer", "vocabulary_falkordb", "indexes_falkordb")


def neo4j_statements() -> list[tuple[str, str]]:
    """(name, statement) for every statement the Neo4j backend can send, depth variants included."""
    out: list[tuple[str, str]] = []
    for name in names():
        if name in FALKORDB_ONLY:
            continue
        for i, stmt in enumerate(statements(name)):
            label = name if len(statements(name)) == 1 else f"{name}[{i}]"
            out.append((label, stmt))
            if _DEPTH.search(stmt):
                out.append((f"{label}(depth=3)", with_depth(stmt, 3)))
                out.append((f"{label}(unbounded)", with_depth(stmt, None)))
    return out
