"""cli_backfill commands of the fieldgraph CLI."""

from fieldgraph.ingest.cli import app  # noqa: F401
