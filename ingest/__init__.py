"""fieldgraph.ingest."""

from .emitter import EmitError, Emitter, lineage_mcp, schema_mcp  # noqa: F401  (the producer API)
