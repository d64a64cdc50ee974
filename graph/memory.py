"""A graph store in plain Python: the property graph held in memory, behind the same store protocol.

It runs fieldgraph's named statements only (``cypher/``): :meth:`MemoryStore.run` recognises a statement by its
text and runs a Python handler that does what the statement does on FalkorDB and Neo4j (the same matches,
``MERGE``/``SET`` semantics, null-removal of properties, returned columns and value shapes). Nodes are found by
their key (``urn``; ``(job, run)`` for a job run; ``checksum`` for field operations), edges by each node's
adjacency per type, so lookups do not scan. For tests without a server, and for building a graph to bulk-load.

The graph and its primitives are :mod:`.memgraph`'s; the handlers of the write steps :mod:`.memory_writes`', those
of the reads :mod:`.memory_reads`'. This module joins them behind the store protocol.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from itertools import count
from typing import Any

from fieldgraph.bulk import gc_paused

from . import cypher as cy
from .errors import GraphRefused
from .memgraph import (
    KEYED,
    Node,
    Row,
    props_of,
)
from .memory_reads import Reads
from .memory_writes import WriteSteps
from .snapshot import EdgeRow, NodeRow, Snapshot
from .store import STORE_SCHEMES, GraphStore


class MemoryStore(WriteSteps, Reads, GraphStore):
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
            self._nodes: dict[int, Node] = {}
            self._keys: dict[str, dict[Any, Node]] = {label: {} for label in (*KEYED, "JobRun")}
            #: every node marked a placeholder (and maybe some no longer marked): what the cleanups look at
            self._flagged: dict[int, Node] = {}

    def snapshot(self) -> Snapshot:
        with self._lock, gc_paused():  # many rows, no cycles among them
            return Snapshot([NodeRow(n.id, n.label, props_of(n.props)) for n in self._nodes.values()],
                            [EdgeRow(e.start.id, e.type, e.end.id, props_of(e.props)) for e in self._edges()])

    def take_snapshot(self) -> Snapshot:
        """The snapshot, its rows holding the store's own property maps (not copies), and the store emptied: for
        a graph built only to be exported (a bulk load), where copying them costs more than the rest."""
        with self._lock, gc_paused():
            out = Snapshot([NodeRow(n.id, n.label, n.props) for n in self._nodes.values()],
                           [EdgeRow(e.start.id, e.type, e.end.id, e.props) for e in self._edges()])
            self.clear()
            return out



STORE_SCHEMES["memory"] = MemoryStore
