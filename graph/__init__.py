"""fieldgraph.graph: the lineage graph on embedded FalkorDB, a FalkorDB server or Neo4j.

Cypher lives here and in ``cypher/`` only.
"""

from .embedded import DEFAULT_DATA_DIR, EmbeddedServer
from .errors import AmbiguousReferenceError, GraphError, GraphURIError, NotFoundError
from .lineage import Hop, IngestReport, LineageGraph, LineageResult
from .store import FalkorStore, GraphStore, Neo4jStore, QueryTimeout, open_store

__all__ = [
    "AmbiguousReferenceError", "DEFAULT_DATA_DIR", "EmbeddedServer", "FalkorStore", "GraphError", "GraphStore",
    "GraphURIError", "Hop", "IngestReport", "LineageGraph", "LineageResult", "Neo4jStore", "NotFoundError",
    "QueryTimeout", "open_store",
]
