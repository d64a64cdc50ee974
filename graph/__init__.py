"""fieldgraph.graph: the lineage graph on embedded FalkorDB, a FalkorDB server or Neo4j.

It owns every Cypher statement (``cypher/``) and the one write path: typed changes
(:mod:`fieldgraph.changes`) are planned (``batch.py``: the planning stage; ``plan/``: the planners) and written
(``write.py``) here.
"""

from .embedded import DEFAULT_DATA_DIR, EmbeddedServer
from .errors import (
    AmbiguousReferenceError,
    GraphError,
    GraphRefused,
    GraphUnavailable,
    GraphURIError,
    NotFoundError,
    QueryTimeout,
)
from .lineage import Hop, IngestReport, LineageGraph, LineageResult
from .memory import MemoryStore
from .steps import Plan, Summary
from .store import FalkorStore, GraphStore, Neo4jStore, embedded_server, open_store
from .write import WriteMode, Writer

__all__ = [
    "AmbiguousReferenceError", "DEFAULT_DATA_DIR", "EmbeddedServer", "FalkorStore", "GraphError", "GraphRefused",
    "GraphStore", "GraphURIError", "GraphUnavailable", "Hop", "IngestReport", "LineageGraph", "LineageResult",
    "MemoryStore", "Neo4jStore", "NotFoundError", "Plan", "QueryTimeout", "Summary", "WriteMode", "Writer",
    "embedded_server",
    "open_store",
]
