"""Schema commands of the fieldgraph CLI beyond normalize (diff)."""

from fieldgraph.ingest.cli import app  # noqa: F401
