"""Graph commands of the fieldgraph CLI (ingest, lineage, impact, query, stats)."""

from fieldgraph.ingest.cli import app  # noqa: F401
