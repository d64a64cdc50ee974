"""fieldgraph.graph: the lineage graph on embedded FalkorDB, a FalkorDB server or Neo4j.

It owns every Cypher statement (``cypher/``) and the one write path: typed changes
(:mod:`fieldgraph.changes`) are planned (``batch.py``: the planning stage; ``plan/``: the planners) and written
(``write.py``) here.
"""

from .answers import (
    AmbiguousReference,
    Carrier,
    DatasetEdge,
    DatasetFields,
    DatasetHit,
    EdgeRow,
    FieldChange,
    FieldHit,
    FieldInfo,
    FieldLineage,
    FieldRow,
    FieldRowAsOf,
    FieldTags,
    GraphStats,
    Hop,
    Impact,
    InheritedLabel,
    LineageDiff,
    LineagePath,
    LineageResult,
    SearchResult,
    Tagged,
    Unresolved,
    encode,
)
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
from .lineage import IngestReport, LineageGraph
from .memory import MemoryStore
from .steps import Plan, Summary
from .store import FalkorStore, GraphStore, Neo4jStore, embedded_server, open_store
from .write import WriteMode, Writer

__all__ = [
    "AmbiguousReference", "AmbiguousReferenceError", "Carrier", "DEFAULT_DATA_DIR", "DatasetEdge", "DatasetFields",
    "DatasetHit", "EdgeRow", "EmbeddedServer", "FalkorStore", "FieldChange", "FieldHit", "FieldInfo", "FieldLineage",
    "FieldRow", "FieldRowAsOf", "FieldTags", "GraphError", "GraphRefused", "GraphStats", "GraphStore",
    "GraphURIError", "GraphUnavailable", "Hop", "Impact", "IngestReport", "InheritedLabel", "LineageDiff",
    "LineageGraph", "LineagePath", "LineageResult", "MemoryStore", "Neo4jStore", "NotFoundError", "Plan",
    "QueryTimeout", "SearchResult", "Summary", "Tagged", "Unresolved", "WriteMode", "Writer", "embedded_server",
    "encode", "open_store",
]
