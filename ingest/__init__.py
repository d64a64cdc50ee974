"""fieldgraph.ingest."""

from .emitter import Emitter, EmitError, lineage_mcp, schema_mcp  # noqa: F401  (the producer API)
