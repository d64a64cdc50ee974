"""fieldgraph.ingest: sources, file replay, the Kafka worker, the Spark backfill, the emitter, the CLI."""

from fieldgraph.errors import EmitError

from .emitter import Emitter, lineage_mcp, schema_mcp

__all__ = ["EmitError", "Emitter", "lineage_mcp", "schema_mcp"]
